package io.pgqueue.worker;

import java.time.Duration;

/**
 * Chooses how many jobs of one task to buffer beyond those running, from the measured execution
 * time: enough to keep every slot busy for one prefetch window, bounded by the maximum. A task
 * whose jobs take longer than the window gets no buffer, so long jobs stay in the database where
 * another node can take them; a fast task gets a deep buffer, so its slots never wait for a claim
 * round trip. Not thread-safe: the pool calls it under its lock.
 */
final class AdaptivePrefetch {

    /** Weight of the newest sample in the moving average. */
    private static final double ALPHA = 0.2;

    private final int concurrency;

    private final int max;

    private final long windowNanos;

    private double averageNanos = -1;

    AdaptivePrefetch(int concurrency, PoolSettings settings) {
        this.concurrency = concurrency;
        this.max = settings.maxPrefetch();
        this.windowNanos = settings.prefetchWindow().toNanos();
    }

    void record(long executionNanos) {
        this.averageNanos = this.averageNanos < 0 ? executionNanos
                : ALPHA * executionNanos + (1 - ALPHA) * this.averageNanos;
    }

    /**
     * Returns the buffer depth: until the first measurement as many as the concurrency (bounded by
     * the maximum), then {@code concurrency × window / average execution time}.
     */
    int depth() {
        if (this.averageNanos < 0) {
            return Math.min(this.concurrency, this.max);
        }
        double perSlot = this.windowNanos / Math.max(this.averageNanos, 1.0);
        return (int) Math.min(this.max, Math.floor(this.concurrency * perSlot));
    }

    Duration averageExecutionTime() {
        return this.averageNanos < 0 ? null : Duration.ofNanos((long) this.averageNanos);
    }
}
