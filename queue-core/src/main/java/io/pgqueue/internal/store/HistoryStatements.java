package io.pgqueue.internal.store;

/**
 * The SQL of the tasks' history (table {@code task_history}, V25), one named statement per
 * operation. {@code ${schema}} stands for the validated queue schema.
 */
final class HistoryStatements {

    private HistoryStatements() {
    }

    /**
     * Adds one node's figures of a moment to the minute's and the hour's row of each task: counts
     * and sums add up, maxima keep the larger. Rows are written in key order, so two nodes adding
     * at once do not deadlock.
     */
    static final String ADD = """
            INSERT INTO ${schema}.task_history AS h (step_seconds, bucket, task, completed, failed, retried, waits,
                                                     wait_sum_ms, wait_max_ms, runs, run_sum_ms, run_max_ms)
            SELECT s.step, to_timestamp(floor(extract(epoch FROM CAST(:at AS timestamptz)) / s.step) * s.step), f.task,
                   f.completed, f.failed, f.retried, f.waits, f.wait_sum, f.wait_max, f.runs, f.run_sum, f.run_max
            FROM unnest(CAST(:tasks AS text[]), CAST(:completed AS bigint[]), CAST(:failed AS bigint[]),
                        CAST(:retried AS bigint[]), CAST(:waits AS bigint[]), CAST(:waitSums AS bigint[]),
                        CAST(:waitMaxes AS bigint[]), CAST(:runs AS bigint[]), CAST(:runSums AS bigint[]),
                        CAST(:runMaxes AS bigint[]))
                 AS f(task, completed, failed, retried, waits, wait_sum, wait_max, runs, run_sum, run_max),
                 (VALUES (60), (3600)) AS s(step)
            ORDER BY 1, 2, 3
            ON CONFLICT (step_seconds, bucket, task) DO UPDATE
            SET completed = h.completed + excluded.completed, failed = h.failed + excluded.failed,
                retried = h.retried + excluded.retried, waits = h.waits + excluded.waits,
                wait_sum_ms = h.wait_sum_ms + excluded.wait_sum_ms,
                wait_max_ms = greatest(h.wait_max_ms, excluded.wait_max_ms), runs = h.runs + excluded.runs,
                run_sum_ms = h.run_sum_ms + excluded.run_sum_ms, run_max_ms = greatest(h.run_max_ms, excluded.run_max_ms)
            """;

    /** Deletes minute rows older than a day and an hour, and hour rows older than eight days. */
    static final String PRUNE = """
            DELETE FROM ${schema}.task_history
            WHERE (step_seconds = 60 AND bucket < now() - interval '25 hours')
               OR (step_seconds = 3600 AND bucket < now() - interval '8 days')
            """;

    /** The rows of a step from a time on, oldest first (the primary key serves it). */
    static final String READ = """
            SELECT bucket, task, completed, failed, retried, waits, wait_sum_ms, wait_max_ms, runs, run_sum_ms, run_max_ms
            FROM ${schema}.task_history
            WHERE step_seconds = :step AND bucket >= :from
            ORDER BY bucket, task
            """;

    /** Adds one node's message counts of a moment to the minute's and the hour's row of each queue. */
    static final String ADD_MESSAGES = """
            INSERT INTO ${schema}.message_queue_history AS h (step_seconds, bucket, queue, sent, received, deleted)
            SELECT s.step, to_timestamp(floor(extract(epoch FROM CAST(:at AS timestamptz)) / s.step) * s.step), f.queue,
                   f.sent, f.received, f.deleted
            FROM unnest(CAST(:queues AS text[]), CAST(:sent AS bigint[]), CAST(:received AS bigint[]),
                        CAST(:deleted AS bigint[])) AS f(queue, sent, received, deleted),
                 (VALUES (60), (3600)) AS s(step)
            ORDER BY 1, 2, 3
            ON CONFLICT (step_seconds, bucket, queue) DO UPDATE
            SET sent = h.sent + excluded.sent, received = h.received + excluded.received,
                deleted = h.deleted + excluded.deleted
            """;

    /** Deletes message-queue minute rows older than a day and an hour, and hour rows older than eight days. */
    static final String PRUNE_MESSAGES = """
            DELETE FROM ${schema}.message_queue_history
            WHERE (step_seconds = 60 AND bucket < now() - interval '25 hours')
               OR (step_seconds = 3600 AND bucket < now() - interval '8 days')
            """;

    /** Each queue's counts of a step added up from a time on. */
    static final String READ_MESSAGES = """
            SELECT queue, sum(sent) AS sent, sum(received) AS received, sum(deleted) AS deleted
            FROM ${schema}.message_queue_history
            WHERE step_seconds = 60 AND bucket >= :from
            GROUP BY queue
            """;

    /** One queue's counts of a step, step by step, from a time on. */
    static final String READ_MESSAGE_STEPS = """
            SELECT bucket, sent, received, deleted
            FROM ${schema}.message_queue_history
            WHERE step_seconds = :step AND queue = :queue AND bucket >= :from
            ORDER BY bucket
            """;
}
