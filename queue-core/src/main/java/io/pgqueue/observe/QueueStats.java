package io.pgqueue.observe;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

/**
 * The cached result of the aggregate query.
 *
 * @param tasks statistics per task
 * @param takenAt when the count behind these statistics began (on whichever node made it), or
 * {@code null} if none was read yet
 * @param error the failure of the last attempt, or {@code null} if it succeeded
 * @param oldestTransaction how long the database's oldest transaction that holds back cleanup
 * (VACUUM) had been open when this node last looked, or {@code null} if it could not tell
 * @param shards sharded, each shard's own statistics by shard name (these are their sum: counts
 * added, the largest lag and oldest transaction, the oldest count read, the first shard's error); empty
 * when unsharded
 * @param workflows workflows running now ("RUNNING") and ended since the schema was created, by final
 * state ("COMPLETED", "FAILED", "CANCELLED"); empty before the first read
 * @param suspended jobs of durable handlers suspended now, by what they wait for: "sleep" (a durable
 * sleep) or "signal" (a signal wait); empty before the first read
 */
public record QueueStats(Map<String, TaskStats> tasks, Instant takenAt, Throwable error, Duration oldestTransaction,
        Map<String, QueueStats> shards, Map<String, Long> workflows, Map<String, Long> suspended) {

    /** No statistics read yet. */
    public static final QueueStats NONE = new QueueStats(Map.of(), null, null, null);

    /**
     * Statistics without workflow counts.
     * @param tasks statistics per task
     * @param takenAt when the count began, or {@code null}
     * @param error the failure of the last attempt, or {@code null}
     * @param oldestTransaction the age of the database's oldest transaction, or {@code null}
     * @param shards each shard's statistics, by name
     */
    public QueueStats(Map<String, TaskStats> tasks, Instant takenAt, Throwable error, Duration oldestTransaction,
            Map<String, QueueStats> shards) {
        this(tasks, takenAt, error, oldestTransaction, shards, Map.of(), Map.of());
    }

    /**
     * Returns a copy with workflow counts.
     * @param counts running workflows and cumulative ends by state
     * @return the copy
     */
    public QueueStats withWorkflows(Map<String, Long> counts) {
        return new QueueStats(this.tasks, this.takenAt, this.error, this.oldestTransaction, this.shards, Map.copyOf(counts),
                this.suspended);
    }

    /**
     * Returns a copy with the counts of suspended durable jobs.
     * @param counts jobs by what they wait for ("sleep", "signal")
     * @return the copy
     */
    public QueueStats withSuspended(Map<String, Long> counts) {
        return new QueueStats(this.tasks, this.takenAt, this.error, this.oldestTransaction, this.shards, this.workflows,
                Map.copyOf(counts));
    }

    /**
     * Statistics of one database.
     * @param tasks statistics per task
     * @param takenAt when the count began, or {@code null}
     * @param error the failure of the last attempt, or {@code null}
     * @param oldestTransaction the age of the database's oldest transaction, or {@code null}
     */
    public QueueStats(Map<String, TaskStats> tasks, Instant takenAt, Throwable error, Duration oldestTransaction) {
        this(tasks, takenAt, error, oldestTransaction, Map.of());
    }

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
     * Sums the statistics of several shards.
     * @param shards each shard's statistics, by name
     * @return their sum, which keeps them in {@link #shards()}
     */
    public static QueueStats sum(Map<String, QueueStats> shards) {
        Map<String, TaskStats> tasks = new TreeMap<>();
        Instant takenAt = null;
        Throwable error = null;
        Duration oldestTransaction = null;
        for (Map.Entry<String, QueueStats> shard : shards.entrySet()) {
            QueueStats stats = shard.getValue();
            stats.tasks().forEach((task, counts) -> tasks.merge(task, counts, TaskStats::plus));
            if (stats.takenAt() != null && (takenAt == null || stats.takenAt().isBefore(takenAt))) {
                takenAt = stats.takenAt();
            }
            if (error == null && stats.error() != null) {
                error = new IllegalStateException("Shard '" + shard.getKey() + "': " + stats.error(), stats.error());
            }
            if (stats.oldestTransaction() != null
                    && (oldestTransaction == null || stats.oldestTransaction().compareTo(oldestTransaction) > 0)) {
                oldestTransaction = stats.oldestTransaction();
            }
        }
        Map<String, Long> workflows = new TreeMap<>();
        shards.values().forEach(stats -> stats.workflows().forEach((state, count) -> workflows.merge(state, count, Long::sum)));
        Map<String, Long> suspended = new TreeMap<>();
        shards.values().forEach(stats -> stats.suspended().forEach((reason, count) -> suspended.merge(reason, count, Long::sum)));
        return new QueueStats(Map.copyOf(tasks), takenAt, error, oldestTransaction, Map.copyOf(shards), Map.copyOf(workflows),
                Map.copyOf(suspended));
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
