package io.pgqueue.observe;

import java.time.Instant;
import java.util.Map;

/**
 * The cached result of the aggregate query.
 *
 * @param tasks statistics per task
 * @param takenAt when the count behind these statistics began (on whichever node made it), or
 * {@code null} if none was read yet
 * @param error the failure of the last attempt, or {@code null} if it succeeded
 */
public record QueueStats(Map<String, TaskStats> tasks, Instant takenAt, Throwable error) {

    /** No statistics read yet. */
    public static final QueueStats NONE = new QueueStats(Map.of(), null, null);

    /**
     * Returns the statistics of a task.
     * @param task the task
     * @return its statistics, or {@link TaskStats#EMPTY}
     */
    public TaskStats task(String task) {
        return this.tasks.getOrDefault(task, TaskStats.EMPTY);
    }
}
