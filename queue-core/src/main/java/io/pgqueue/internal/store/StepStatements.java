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
            s.started_at, s.finished_at""";

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
