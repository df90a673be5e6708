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
 */
public record PoolSettings(int maxPrefetch, Duration prefetchWindow) {

    /**
     * Validates the settings.
     */
    public PoolSettings {
        InvalidSettingException.require(maxPrefetch >= 0, "max-prefetch", maxPrefetch, "must not be negative");
        InvalidSettingException.notNegative(prefetchWindow, "prefetch-window");
    }

    /**
     * Returns the default settings.
     * @return the defaults
     */
    public static PoolSettings defaults() {
        return new PoolSettings(QueueDefaults.MAX_PREFETCH, QueueDefaults.PREFETCH_WINDOW);
    }
}
