package io.pgqueue.observe;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * The cached result of the aggregate query.
 *
 * @param tasks statistics per task
 * @param takenAt when the count behind these statistics began (on whichever node made it), or
 * {@code null} if none was read yet
 * @param error the failure of the last attempt, or {@code null} if it succeeded
 * @param oldestTransaction how long the database's oldest transaction that holds back cleanup
 * (VACUUM) had been open when this node last looked, or {@code null} if it could not tell
 */
public record QueueStats(Map<String, TaskStats> tasks, Instant takenAt, Throwable error, Duration oldestTransaction) {

    /** No statistics read yet. */
    public static final QueueStats NONE = new QueueStats(Map.of(), null, null, null);

    /**
     * Statistics without the age of the oldest transaction.
     * @param tasks statistics per task
     * @param takenAt when the count began, or {@code null}
     * @param error the failure of the last attempt, or {@code null}
     */
    public QueueStats(Map<String, TaskStats> tasks, Instant takenAt, Throwable error) {
        this(tasks, takenAt, error, null);
    }

    /**
     * Returns the statistics of a task.
     * @param task the task
     * @return its statistics, or {@link TaskStats#EMPTY}
     */
    public TaskStats task(String task) {
        return this.tasks.getOrDefault(task, TaskStats.EMPTY);
    }
}
