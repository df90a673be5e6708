package io.pgqueue.worker;

import java.time.Duration;
import java.util.Map;

/**
 * A pool's state at one moment, for metrics and operators.
 *
 * @param name the pool name
 * @param capacity handler slots (the sum of its tasks' concurrency)
 * @param busy handlers running
 * @param buffered jobs claimed into the buffer, not yet running
 * @param tasks per task: its slots, running and buffered jobs, and prefetch depth
 */
public record PoolState(String name, int capacity, int busy, int buffered, Map<String, Task> tasks) {

    /**
     * One task in a pool.
     *
     * @param concurrency handler slots
     * @param running handlers running
     * @param buffered jobs buffered
     * @param prefetchDepth how many jobs the adaptive logic buffers now beyond those running
     * @param averageExecution the moving average of execution time, or {@code null} before the first job
     * @param paused whether the task is paused
     */
    public record Task(int concurrency, int running, int buffered, int prefetchDepth, Duration averageExecution,
            boolean paused) {
    }
}
