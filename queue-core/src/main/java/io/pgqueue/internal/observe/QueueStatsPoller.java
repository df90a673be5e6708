package io.pgqueue.internal.observe;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import io.pgqueue.internal.lifecycle.BackgroundService;
import io.pgqueue.internal.store.StatsStore;
import io.pgqueue.observe.QueueStatistics;
import io.pgqueue.observe.QueueStats;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.NestedExceptionUtils;

/**
 * Reads the queue's statistics once per interval and caches them, so metric scrapes, health
 * probes and endpoint reads never query the database themselves. The nodes share one count: a
 * node reads the snapshot another node stored if it is younger than half the interval, and
 * otherwise counts and stores it (unless another node is counting right then), so the whole
 * cluster counts at most about twice per interval, whatever the number of nodes, scrapes, tags or
 * jobs. The count is one pass over the active jobs (1.3 s with 10 M queued on a 2-core machine);
 * while it takes longer than a twentieth of the interval, the interval becomes twenty times its
 * duration, so counting takes at most a tenth of one connection's time for the cluster, however
 * large the backlog grows.
 */
public final class QueueStatsPoller extends BackgroundService implements QueueStatistics {

    private static final Logger log = LoggerFactory.getLogger(QueueStatsPoller.class);

    /** The interval in multiples of the last count's duration, when that is longer than the configured one. */
    static final int WAIT_PER_QUERY_TIME = 20;

    /** The statistics store of each shard, by name; unsharded, the one database's. */
    private final Map<String, StatsStore> stores;

    private final Duration interval;

    /** The wait between two reads: the configured interval, or longer while counting is slow. */
    private volatile Duration currentInterval;

    private volatile QueueStats latest = QueueStats.NONE;

    /** Held by each read (not the service's own monitor, which its stop holds while it joins the thread). */
    private final Object reads = new Object();

    /**
     * Creates a poller; it polls once {@link #start() started}.
     * @param store the statistics store
     * @param interval how often to read the statistics
     */
    public QueueStatsPoller(StatsStore store, Duration interval) {
        this(Map.of("main", store), interval);
    }

    /**
     * Creates a poller of a sharded queue, whose statistics are the sum of its shards' (each kept in
     * {@link QueueStats#shards()}); it polls once {@link #start() started}.
     * @param stores each shard's statistics store, by shard name
     * @param interval how often to read the statistics
     */
    public QueueStatsPoller(Map<String, StatsStore> stores, Duration interval) {
        super("pgqueue-stats", Duration.ofSeconds(5));
        this.stores = new LinkedHashMap<>(stores);
        this.interval = interval;
        this.currentInterval = interval;
    }

    /** Reads the statistics at once, then every interval, until stopped. */
    @Override
    protected void run() {
        do {
            // Younger than half the interval: counted by another node since this one last looked.
            read(this.currentInterval.dividedBy(2));
        }
        while (pause(this.currentInterval));
    }

    @Override
    public QueueStats refresh() {
        return read(Duration.ZERO);
    }

    /**
     * One read at a time: a refresh that overlapped the poller's read (begun before the refresh's
     * caller changed anything) would otherwise be replaced by that older read when it finished last.
     */
    private QueueStats read(Duration maxAge) {
        synchronized (this.reads) {
            return readAlone(maxAge);
        }
    }

    private QueueStats readAlone(Duration maxAge) {
        QueueStats previous = this.latest;
        if (this.stores.size() == 1) {
            this.latest = read(this.stores.values().iterator().next(), maxAge, previous);
            return this.latest;
        }
        Map<String, QueueStats> shards = new LinkedHashMap<>();
        this.stores.forEach((name, store) -> shards.put(name, read(store, maxAge,
                previous.shards().getOrDefault(name, QueueStats.NONE))));
        this.latest = QueueStats.sum(shards);
        return this.latest;
    }

    /** Reads one database's statistics; on failure keeps its previous ones, with the error. */
    private QueueStats read(StatsStore store, Duration maxAge, QueueStats previous) {
        long start = System.nanoTime();
        try {
            StatsStore.Snapshot snapshot = store.snapshot(maxAge);
            adapt(snapshot.took());
            // No count stored yet, and another node is making the first: keep what we have.
            Duration oldestTransaction = store.oldestTransaction();
            Map<String, Long> workflows = workflowCounts(store, previous);
            Map<String, Long> suspended = suspendedCounts(store, previous);
            return (snapshot.age() == null
                    ? new QueueStats(previous.tasks(), previous.takenAt(), null, oldestTransaction)
                    : new QueueStats(snapshot.tasks(), Instant.now().minus(snapshot.age()), null, oldestTransaction))
                .withWorkflows(workflows).withSuspended(suspended);
        }
        catch (RuntimeException ex) {
            if (previous.error() == null) {
                log.warn("Could not read queue statistics{}: {}", this.stores.size() == 1 ? "" : " of a shard",
                        NestedExceptionUtils.getMostSpecificCause(ex).toString());
            }
            // A count that ran into the statement timeout must not be tried again at once.
            adapt(Duration.ofNanos(System.nanoTime() - start));
            return new QueueStats(previous.tasks(), previous.takenAt(), ex, previous.oldestTransaction())
                .withWorkflows(previous.workflows()).withSuspended(previous.suspended());
        }
    }

    /** Counts workflows; a failure keeps the previous counts, and the task statistics stand. */
    private static Map<String, Long> workflowCounts(StatsStore store, QueueStats previous) {
        try {
            return store.workflowCounts();
        }
        catch (RuntimeException ex) {
            log.debug("Could not count workflows: {}", ex.toString());
            return previous.workflows();
        }
    }

    /** Counts suspended durable jobs; a failure keeps the previous counts, and the task statistics stand. */
    private static Map<String, Long> suspendedCounts(StatsStore store, QueueStats previous) {
        try {
            return store.suspendedCounts();
        }
        catch (RuntimeException ex) {
            log.debug("Could not count suspended jobs: {}", ex.toString());
            return previous.suspended();
        }
    }

    /** Sets the interval from the duration of the last count, whichever node made it. */
    private void adapt(Duration took) {
        Duration previous = this.currentInterval;
        Duration next = Duration.ofMillis(took.multipliedBy(WAIT_PER_QUERY_TIME).toMillis());
        if (next.compareTo(this.interval) <= 0) {
            next = this.interval;
            if (previous.compareTo(this.interval) > 0) {
                log.info("Queue statistics took {} ms to count; reading them every {} ms again", took.toMillis(),
                        next.toMillis());
            }
        }
        else if (previous.compareTo(this.interval) == 0) {
            log.info("Queue statistics took {} ms to count; reading them every {} ms instead of every {} ms while that "
                    + "lasts, to bound the time spent counting", took.toMillis(), next.toMillis(),
                    this.interval.toMillis());
        }
        this.currentInterval = next;
    }

    @Override
    public QueueStats latest() {
        return this.latest;
    }

    @Override
    public Duration interval() {
        return this.currentInterval;
    }
}
