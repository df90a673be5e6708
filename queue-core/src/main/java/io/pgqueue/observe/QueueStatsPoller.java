package io.pgqueue.observe;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.pgqueue.store.StatsStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.NestedExceptionUtils;

/**
 * Runs the aggregate query once per interval and caches the result, so metric scrapes, health
 * probes and endpoint reads never query the database themselves: the database load is one query
 * per node and interval, whatever the number of scrapes, tags or jobs.
 */
public final class QueueStatsPoller {

    private static final Logger log = LoggerFactory.getLogger(QueueStatsPoller.class);

    private final StatsStore store;

    private final Duration interval;

    private volatile QueueStats latest = new QueueStats(Map.of(), null, null);

    private ScheduledExecutorService scheduler;

    /**
     * Creates a poller; it polls once {@link #start() started}.
     * @param store the statistics store
     * @param interval how often to run the query
     */
    public QueueStatsPoller(StatsStore store, Duration interval) {
        this.store = store;
        this.interval = interval;
    }

    /** Starts polling at once and then every interval. Idempotent. */
    public synchronized void start() {
        if (this.scheduler != null) {
            return;
        }
        this.scheduler = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "pgqueue-stats");
            thread.setDaemon(true);
            return thread;
        });
        this.scheduler.scheduleWithFixedDelay(this::refresh, 0, this.interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Stops polling. Idempotent. */
    public synchronized void stop() {
        if (this.scheduler != null) {
            this.scheduler.shutdownNow();
            this.scheduler = null;
        }
    }

    /**
     * Runs the query now and caches the result (also used by operators' "refresh").
     * @return the new statistics
     */
    public QueueStats refresh() {
        QueueStats previous = this.latest;
        try {
            this.latest = new QueueStats(this.store.snapshot(), Instant.now(), null);
        }
        catch (RuntimeException ex) {
            if (previous.error() == null) {
                log.warn("Could not read queue statistics: {}", NestedExceptionUtils.getMostSpecificCause(ex).toString());
            }
            this.latest = new QueueStats(previous.tasks(), previous.takenAt(), ex);
        }
        return this.latest;
    }

    /** @return the latest statistics (possibly with the error of the last attempt) */
    public QueueStats latest() {
        return this.latest;
    }

    /** @return the polling interval */
    public Duration interval() {
        return this.interval;
    }
}
