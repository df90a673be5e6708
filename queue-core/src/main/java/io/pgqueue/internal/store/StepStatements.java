package io.pgqueue.internal.store;

/**
 * The SQL of durable handlers' steps (table job_step, V31). {@code ${schema}} stands for the
 * validated queue schema.
 */
final class StepStatements {

    private StepStatements() {
    }

    private static final String COLUMNS = """
            s.name, s.seq, s.kind, CAST(s.result AS text) AS result, s.result_type, s.wake_at, s.attempt,
            s.started_at, s.finished_at, s.resolved""";

    /**
     * A job's recorded steps in their order, with the database clock (one row with null steps when
     * there are none): one probe of the primary key.
     */
    static final String LOAD = """
            SELECT n.db_now, %s
            FROM (SELECT statement_timestamp() AS db_now) AS n
            LEFT JOIN ${schema}.job_step AS s ON s.job_id = :id
            ORDER BY s.seq
            """.formatted(COLUMNS);

    /** A job's recorded steps in their order. */
    static final String STEPS = """
            SELECT %s FROM ${schema}.job_step AS s WHERE s.job_id = :id ORDER BY s.seq
            """.formatted(COLUMNS);

    /**
     * Records a step under the lease of the attempt that ran it: the job's row is share-locked by id
     * and epoch and its state checked after the lock, as the outcome writes do (held_leases,
     * R__fenced_writes.sql). A rescue or cancellation that changes the row waits for this insert, or
     * this insert for it and then finds the job no longer held: a later claim either sees the step or
     * the step is not recorded. Returns one row whenever it wrote: the sleep's end for a sleep, and
     * the database clock.
     */
    static final String RECORD = """
            INSERT INTO ${schema}.job_step (job_id, name, seq, kind, result, result_type, wake_at, attempt, lease_epoch,
                                            started_at)
            SELECT j.id, :name, :seq, :kind, CAST(:result AS jsonb), :resultType,
                   CASE WHEN :kind = 'SLEEP'
                        THEN coalesce(CAST(:wakeAt AS timestamptz),
                                      statement_timestamp() + CAST(:sleepMillis AS bigint) * interval '1 millisecond')
                   END,
                   j.attempt, j.lease_epoch,
                   statement_timestamp() - CAST(:elapsedMicros AS bigint) * interval '1 microsecond'
            FROM (SELECT job.id, job.attempt, job.lease_epoch, job.state
                  FROM ${schema}.job AS job
                  WHERE job.id = :id AND job.lease_epoch = :epoch
                  -- LIMIT keeps the planner from pushing the state check below into the probe.
                  LIMIT 1
                  FOR SHARE) AS j
            WHERE j.state <> 'READY'
            RETURNING wake_at, statement_timestamp() AS db_now
            """;

    /** One of a job's steps. */
    static final String STEP = """
            SELECT %s FROM ${schema}.job_step AS s WHERE s.job_id = :id AND s.name = :name
            """.formatted(COLUMNS);

    /** The job's row while the attempt of a lease holds it, share-locked, as {@link #RECORD} takes it. */
    private static final String HELD = """
            (SELECT job.id, job.attempt, job.lease_epoch, job.state
             FROM ${schema}.job AS job
             WHERE job.id = :id AND job.lease_epoch = :epoch
             LIMIT 1
             FOR SHARE) AS j""";

    /**
     * Records a signal wait under the attempt's lease (as {@link #RECORD}), ending after a timeout;
     * a signal that arrived first holds the name, and then nothing is written.
     */
    static final String AWAIT_SIGNAL = """
            INSERT INTO ${schema}.job_step (job_id, name, seq, kind, wake_at, attempt, lease_epoch, started_at)
            SELECT j.id, :name, :seq, 'SIGNAL',
                   statement_timestamp() + CAST(:timeoutMillis AS bigint) * interval '1 millisecond',
                   j.attempt, j.lease_epoch, statement_timestamp()
            FROM %s
            WHERE j.state <> 'READY'
            ON CONFLICT (job_id, name) DO NOTHING
            RETURNING wake_at, statement_timestamp() AS db_now
            """.formatted(HELD);

    /** Gives a signal that arrived before its wait (place -1) the wait's place, under the attempt's lease. */
    static final String PLACE_SIGNAL = """
            UPDATE ${schema}.job_step AS s SET seq = :seq, attempt = j.attempt, lease_epoch = j.lease_epoch
            FROM %s
            WHERE j.state <> 'READY' AND s.job_id = j.id AND s.name = :name AND s.seq = -1
            """.formatted(HELD);

    /** Ends a signal wait without its signal, under the attempt's lease, unless the signal came. */
    static final String TIME_OUT_SIGNAL = """
            UPDATE ${schema}.job_step AS s SET resolved = 'TIMED_OUT', finished_at = statement_timestamp()
            FROM %s
            WHERE j.state <> 'READY' AND s.job_id = j.id AND s.name = :name AND s.resolved IS NULL
            """.formatted(HELD);

    /** Delivers a signal (V32). */
    static final String SIGNAL = """
            SELECT ${schema}.signal_job(:id, :name, CAST(:payload AS jsonb))
            """;

    /**
     * Makes due the READY jobs scheduled later whose awaited signal arrived after their last attempt
     * started: a signal that came while the attempt that waits for it was ending found the job not
     * yet READY and could not make it due. Looks at the signals of the last minute only
     * (job_step_signal_idx); a job woken for a signal it already took sleeps again for the rest.
     */
    static final String WAKE_SIGNALLED = """
            WITH woken AS (
                UPDATE ${schema}.job AS j
                SET schedule_time = statement_timestamp(),
                    delay_tolerance_deadline = statement_timestamp() + (j.delay_tolerance_deadline - j.schedule_time)
                FROM (SELECT DISTINCT s.job_id, s.finished_at FROM ${schema}.job_step AS s
                      WHERE s.kind = 'SIGNAL' AND s.finished_at > statement_timestamp() - interval '1 minute'
                        AND s.resolved = 'RECEIVED' AND s.seq >= 0) AS s
                WHERE j.id = s.job_id AND j.state = 'READY' AND j.schedule_time > statement_timestamp()
                  AND s.finished_at >= j.started_at
                RETURNING j.task
            ), notified AS (
                SELECT pg_notify('${schema}.' || task, '') FROM (SELECT DISTINCT task FROM woken) AS t
            )
            SELECT (SELECT count(*) FROM woken) + 0 * (SELECT count(*) FROM notified)
            """;

    /**
     * Drops the steps of jobs whose outcome was just written in this transaction: of jobs that left
     * the job table unkept (a completion when completed jobs are not kept), and of jobs re-run by a
     * deduplicated enqueue, which start again without them. Steps of jobs kept in job_finished stay
     * with them (the trigger of V31 drops them with the row).
     */
    static final String DROP_ENDED = """
            DELETE FROM ${schema}.job_step AS s
            WHERE s.job_id = ANY(CAST(:ids AS bigint[]))
              AND (s.job_id = ANY(CAST(:rerun AS bigint[]))
                   OR NOT EXISTS (SELECT 1 FROM ${schema}.job AS j WHERE j.id = s.job_id)
                      AND NOT EXISTS (SELECT 1 FROM ${schema}.job_finished AS f WHERE f.id = s.job_id))
            """;
}
