package io.pgqueue.worker;

import java.time.Duration;
import java.util.Map;

/**
 * A pool's state at one moment, for metrics and operators.
 *
 * @param name the pool name
 * @param capacity handler slots (the sum of its tasks' concurrency)
 * @param busy handlers holding a slot
 * @param hung handlers still running past their timeout (see {@link Task#hung()})
 * @param buffered jobs claimed into the buffer, not yet running
 * @param tasks per task: its slots, running, hung and buffered handlers, and prefetch depth
 */
public record PoolState(String name, int capacity, int busy, int hung, int buffered, Map<String, Task> tasks) {

    /**
     * One task in a pool.
     *
     * @param concurrency handler slots
     * @param running handlers holding a slot
     * @param hung handlers still running a lease after their timeout's interrupt, whose jobs are
     * rescued and run again: up to {@code concurrency} of them give up their slot and run outside
     * the slot count, further ones keep their slot (and are counted in {@code running} too)
     * @param buffered jobs buffered
     * @param prefetchDepth how many jobs the adaptive logic buffers now beyond those running
     * @param averageExecution the moving average of execution time, or {@code null} before the first job
     * @param paused whether the task is paused
     */
    public record Task(int concurrency, int running, int hung, int buffered, int prefetchDepth,
            Duration averageExecution, boolean paused) {
    }
}
