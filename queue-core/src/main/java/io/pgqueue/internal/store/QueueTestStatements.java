package io.pgqueue.internal.store;

/**
 * The statements that only tests run, through {@code QueueTestSupport}: the jobs of a task as the
 * test sees them, moving the queue's time, promoting one job, and emptying every table.
 */
final class QueueTestStatements {

    private QueueTestStatements() {
    }

    /** A task's active and waiting jobs, oldest first; waiting jobs have no schedule time yet. */
    static final String ACTIVE_JOBS = """
            SELECT id, task, state, priority, CAST(payload AS text) AS payload, CAST(headers AS text) AS headers,
                   schedule_time, delay_tolerance_deadline, attempt, max_attempts, lease_owner,
                   expected_status_change_time, dedup_key, rerun_requested, cancel_requested, last_error,
                   created_at, started_at, CAST(NULL AS timestamptz) AS finished_at, progress, partition,
                   CAST(NULL AS text) AS result
            FROM ${schema}.job WHERE task = :task
            UNION ALL
            SELECT id, task, 'WAITING', priority, CAST(payload AS text), CAST(headers AS text),
                   NULL, NULL, 0, max_attempts, NULL, NULL, NULL, false, false, NULL, created_at, NULL, NULL, NULL,
                   partition, NULL
            FROM ${schema}.job_waiting WHERE task = :task
            ORDER BY id
            """;

    /** Every READY job becomes due earlier by a number of milliseconds, and so do its durable sleeps' ends. */
    static final String SHIFT_READY = shiftReady("");

    /** The READY jobs of a list become due earlier by a number of milliseconds, their sleeps' ends too. */
    static final String SHIFT_READY_JOBS = shiftReady("AND id = ANY(CAST(:ids AS bigint[]))");

    private static String shiftReady(String among) {
        return """
                WITH shifted AS (
                    UPDATE ${schema}.job
                    SET schedule_time = schedule_time - :millis * interval '1 millisecond',
                        delay_tolerance_deadline = delay_tolerance_deadline - :millis * interval '1 millisecond'
                    WHERE state = 'READY' %s
                    RETURNING id
                )
                UPDATE ${schema}.job_step SET wake_at = wake_at - :millis * interval '1 millisecond'
                WHERE wake_at IS NOT NULL AND job_id IN (SELECT id FROM shifted)
                """.formatted(among);
    }

    /** Waiting jobs with a run-at time get it earlier by a number of milliseconds. */
    static final String SHIFT_WAITING = """
            UPDATE ${schema}.job_waiting SET run_at = run_at - :millis * interval '1 millisecond'
            WHERE run_at IS NOT NULL
            """;

    /** The task of a READY job. */
    static final String READY_TASK = "SELECT task FROM ${schema}.job WHERE id = :id AND state = 'READY'";

    /** A READY job becomes the next of its task to be claimed, due or not. */
    static final String PROMOTE = """
            UPDATE ${schema}.job SET priority = 1000, schedule_time = '-infinity', delay_tolerance_deadline = NULL
            WHERE id = :id AND state = 'READY'
            RETURNING task
            """;

    /** Every job, workflow, schedule and task control, as after migration. */
    static final String EMPTY = """
            TRUNCATE ${schema}.job, ${schema}.job_finished, ${schema}.job_waiting, ${schema}.job_dependency,
                     ${schema}.job_result, ${schema}.job_step, ${schema}.workflow, ${schema}.schedule, ${schema}.task_control,
                     ${schema}.task_rate, ${schema}.task_group_cursor, ${schema}.job_awaiter
            """;

    static final String DATABASE = "SELECT current_database()";
}
