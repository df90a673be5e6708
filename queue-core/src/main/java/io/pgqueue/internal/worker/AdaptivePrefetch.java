package io.pgqueue.internal.worker;

import java.time.Duration;

import io.pgqueue.worker.PoolSettings;

/**
 * Chooses how many jobs of one task to buffer beyond those running, from the measured execution
 * time: enough to keep every slot busy for one prefetch window, bounded by the maximum and by the
 * byte budget divided by the average size of the task's claimed jobs (payload and headers). A task
 * whose jobs take longer than the window gets no buffer, so long jobs stay in the database where
 * another node can take them; a fast task gets a deep buffer, so its slots never wait for a claim
 * round trip; a task with large payloads gets a buffer that fits the budget. Not thread-safe: the
 * pool calls it under its lock.
 */
public final class AdaptivePrefetch {

    /** Weight of the newest sample in the moving average. */
    private static final double ALPHA = 0.2;

    private final int concurrency;

    private final int max;

    private final long windowNanos;

    private final long maxBytes;

    private double averageNanos = -1;

    private double averageBytes = -1;

    AdaptivePrefetch(int concurrency, PoolSettings settings) {
        this.concurrency = concurrency;
        this.max = settings.maxPrefetch();
        this.windowNanos = settings.prefetchWindow().toNanos();
        this.maxBytes = settings.maxPrefetchBytes();
    }

    void record(long executionNanos) {
        this.averageNanos = movingAverage(this.averageNanos, executionNanos);
    }

    /**
     * Records the size of a claimed job.
     * @param bytes the characters of its payload and headers
     */
    void recordSize(int bytes) {
        this.averageBytes = movingAverage(this.averageBytes, bytes);
    }

    /** @return the average with the sample weighed in, or the sample if there is no average yet (negative) */
    private static double movingAverage(double average, double sample) {
        return average < 0 ? sample : ALPHA * sample + (1 - ALPHA) * average;
    }

    /**
     * Returns the buffer depth: until the first measurement as many as the concurrency (bounded by
     * the maximum), then {@code concurrency × window / average execution time}; never more than
     * the byte budget holds of jobs of the average size.
     */
    int depth() {
        int depth;
        if (this.averageNanos < 0) {
            depth = Math.min(this.concurrency, this.max);
        }
        else {
            double perSlot = this.windowNanos / Math.max(this.averageNanos, 1.0);
            depth = (int) Math.min(this.max, Math.floor(this.concurrency * perSlot));
        }
        if (this.averageBytes > 0) {
            depth = (int) Math.min(depth, Math.floor(this.maxBytes / this.averageBytes));
        }
        return depth;
    }

    Duration averageExecutionTime() {
        return this.averageNanos < 0 ? null : Duration.ofNanos((long) this.averageNanos);
    }
}
