package io.pgqueue.autoconfigure.console;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.pgqueue.observe.QueueStatistics;
import io.pgqueue.observe.QueueStats;
import io.pgqueue.observe.TaskStats;
import org.springframework.context.SmartLifecycle;

/**
 * The console's chart over the last hour: every {@link #STEP}, the jobs completed and failed in
 * the minute before, across the cluster, as the shared statistics count them (completed jobs need
 * a completed retention of at least a minute). Kept in memory from this node's start, so the
 * chart covers at most the time since then. Reads the cached statistics only, never the database.
 */
final class ConsoleHistory implements SmartLifecycle {

    /** How often a point is taken. */
    static final Duration STEP = Duration.ofMinutes(1);

    /** When the first point is taken after the start: once the first statistics were read. */
    static final Duration FIRST_POINT = Duration.ofSeconds(5);

    /** The points kept: an hour. */
    static final int POINTS = (int) (Duration.ofHours(1).toMillis() / STEP.toMillis());

    private final QueueStatistics stats;

    private final Deque<Point> points = new ArrayDeque<>();

    private ScheduledExecutorService sampler;

    ConsoleHistory(QueueStatistics stats) {
        this.stats = stats;
    }

    /** Takes a point now, from the latest statistics; none while no statistics were read. */
    void sample() {
        QueueStats latest = this.stats.latest();
        if (latest.takenAt() == null) {
            return;
        }
        long completed = 0;
        long failed = 0;
        for (TaskStats task : latest.tasks().values()) {
            completed += task.completedLastMinute();
            failed += task.failedLastMinute();
        }
        synchronized (this.points) {
            this.points.addLast(new Point(Instant.now(), completed, failed));
            while (this.points.size() > POINTS) {
                this.points.removeFirst();
            }
        }
    }

    /** @return the points, oldest first */
    List<Point> points() {
        synchronized (this.points) {
            return List.copyOf(this.points);
        }
    }

    @Override
    public synchronized void start() {
        if (this.sampler == null) {
            this.sampler = Executors.newSingleThreadScheduledExecutor(task -> {
                Thread thread = new Thread(task, "pgqueue-console-history");
                thread.setDaemon(true);
                return thread;
            });
            this.sampler.scheduleAtFixedRate(this::sampleQuietly, FIRST_POINT.toMillis(), STEP.toMillis(),
                    TimeUnit.MILLISECONDS);
        }
    }

    private void sampleQuietly() {
        try {
            sample();
        }
        catch (RuntimeException ex) {
            // The next step tries again; the statistics poller logs its own failures.
        }
    }

    @Override
    public synchronized void stop() {
        if (this.sampler != null) {
            this.sampler.shutdownNow();
            this.sampler = null;
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return this.sampler != null;
    }

    /**
     * One point of the chart.
     *
     * @param at when it was taken
     * @param completed jobs completed in the minute before
     * @param failed jobs failed for good in the minute before
     */
    record Point(Instant at, long completed, long failed) {
    }
}
