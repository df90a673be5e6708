package io.pgqueue.observe;

import java.time.Instant;
import java.util.Map;

/**
 * The cached result of the aggregate query.
 *
 * @param tasks statistics per task
 * @param takenAt when the query last succeeded, or {@code null} if it never did
 * @param error the failure of the last attempt, or {@code null} if it succeeded
 */
public record QueueStats(Map<String, TaskStats> tasks, Instant takenAt, Throwable error) {

    /**
     * Returns the statistics of a task.
     * @param task the task
     * @return its statistics, or {@link TaskStats#EMPTY}
     */
    public TaskStats task(String task) {
        return this.tasks.getOrDefault(task, TaskStats.EMPTY);
    }
}
