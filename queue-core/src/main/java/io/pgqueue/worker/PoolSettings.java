package io.pgqueue.worker;

import java.time.Duration;

import io.pgqueue.InvalidSettingException;
import io.pgqueue.QueueDefaults;

/**
 * Settings of one worker pool.
 *
 * @param maxPrefetch the most jobs per task the pool buffers beyond those running (its local
 * STARTING buffer); the adaptive depth never exceeds it
 * @param prefetchWindow how much work, measured in execution time, the pool keeps buffered per task:
 * fast tasks get a deep buffer, tasks slower than the window get none
 * @param maxPrefetchBytes the budget, in bytes, of the payloads and headers of the jobs the pool
 * buffers per task: the depth is bounded by this budget divided by the average size of the task's
 * claimed jobs
 */
public record PoolSettings(int maxPrefetch, Duration prefetchWindow, long maxPrefetchBytes) {

    /**
     * Validates the settings.
     */
    public PoolSettings {
        InvalidSettingException.require(maxPrefetch >= 0, "max-prefetch", maxPrefetch, "must not be negative");
        InvalidSettingException.notNegative(prefetchWindow, "prefetch-window");
        InvalidSettingException.require(maxPrefetchBytes > 0, "max-prefetch-bytes", maxPrefetchBytes + "B",
                "must be positive");
    }

    /**
     * Settings with the default budget of buffered payloads
     * ({@link QueueDefaults#MAX_PREFETCH_BYTES}).
     * @param maxPrefetch the most jobs per task the pool buffers beyond those running
     * @param prefetchWindow the time's worth of work the pool keeps buffered per task
     */
    public PoolSettings(int maxPrefetch, Duration prefetchWindow) {
        this(maxPrefetch, prefetchWindow, QueueDefaults.MAX_PREFETCH_BYTES);
    }

    /**
     * Returns the default settings.
     * @return the defaults
     */
    public static PoolSettings defaults() {
        return new PoolSettings(QueueDefaults.MAX_PREFETCH, QueueDefaults.PREFETCH_WINDOW,
                QueueDefaults.MAX_PREFETCH_BYTES);
    }
}
