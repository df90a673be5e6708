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
 * per node and interval, whatever the number of scrapes, tags or jobs. The query counts the
 * active jobs in one pass (1.3 s with 10 M queued on a 2-core machine); while it takes longer
 * than a twentieth of the interval, the poller waits twenty times its duration instead, so that
 * counting never takes more than 5 % of the time of one of the node's connections, however
 * large the backlog grows.
 */
public final class QueueStatsPoller {

    private static final Logger log = LoggerFactory.getLogger(QueueStatsPoller.class);

    /** The wait after a query, in multiples of its duration, when that is longer than the interval. */
    static final int WAIT_PER_QUERY_TIME = 20;

    private final StatsStore store;

    private final Duration interval;

    /** The wait after the last query: the interval, or longer while the query is slow. */
    private volatile Duration currentInterval;

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
        this.currentInterval = interval;
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
        ScheduledExecutorService polling = this.scheduler;
        polling.execute(() -> poll(polling));
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

    private void poll(ScheduledExecutorService polling) {
        long start = System.nanoTime();
        refresh();
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        Duration previous = this.currentInterval;
        Duration next = Duration.ofMillis(took.multipliedBy(WAIT_PER_QUERY_TIME).toMillis());
        if (next.compareTo(this.interval) <= 0) {
            next = this.interval;
            if (previous.compareTo(this.interval) > 0) {
                log.info("Queue statistics took {} ms to read; reading them every {} ms again", took.toMillis(),
                        next.toMillis());
            }
        }
        else if (previous.compareTo(this.interval) == 0) {
            log.info("Queue statistics took {} ms to read; reading them every {} ms instead of every {} ms while that "
                    + "lasts, to keep counting under 5 % of the time", took.toMillis(), next.toMillis(),
                    this.interval.toMillis());
        }
        this.currentInterval = next;
        schedule(polling, next);
    }

    private synchronized void schedule(ScheduledExecutorService polling, Duration delay) {
        // Not after stop(), nor onto the executor of a later start().
        if (this.scheduler == polling) {
            polling.schedule(() -> poll(polling), delay.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** @return the latest statistics (possibly with the error of the last attempt) */
    public QueueStats latest() {
        return this.latest;
    }

    /**
     * The current wait between two queries: the configured interval, or twenty times the last
     * query's duration while that is longer.
     * @return the current polling interval
     */
    public Duration interval() {
        return this.currentInterval;
    }
}
