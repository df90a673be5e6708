package io.pgqueue.internal.store;

/**
 * The SQL of workflows and dependencies between jobs. {@code ${schema}} stands for the validated
 * queue schema; the functions called live in R__workflows.sql, which also says how the end of a job
 * reaches its dependents.
 */
public final class WorkflowStatements {

    private WorkflowStatements() {
    }

    /** Job ids taken ahead, so that a workflow's jobs can name each other before they are written. */
    static final String NEXT_IDS = """
            SELECT nextval('${schema}.job_id_seq') FROM generate_series(1, :count)
            """;

    /** Of some job ids, those not in the queue: neither active, waiting nor finished and kept. */
    static final String MISSING = """
            SELECT d FROM unnest(CAST(:ids AS bigint[])) AS d
            WHERE NOT EXISTS (SELECT 1 FROM ${schema}.job AS j WHERE j.id = d)
              AND NOT EXISTS (SELECT 1 FROM ${schema}.job_waiting AS w WHERE w.id = d)
              AND NOT EXISTS (SELECT 1 FROM ${schema}.job_finished AS f WHERE f.id = d)
            ORDER BY d
            """;

    /** Writes a workflow's row. */
    static final String INSERT_WORKFLOW = """
            INSERT INTO ${schema}.workflow (id, name, on_failure, jobs, steps, partition)
            VALUES (:id, :name, :onFailure, :jobs, CAST(:steps AS jsonb), :partition)
            """;

    /**
     * Adds a job to a running workflow as a step (a durable handler's child, TaskContext.spawn): the
     * workflow counts it and ends only once it ended too. The workflow's row is locked by the update;
     * a workflow that ended is left as it is (no row).
     */
    static final String GRAFT = """
            UPDATE ${schema}.workflow
            SET jobs = jobs + 1, steps = steps || jsonb_build_object(CAST(:step AS text), :jobId)
            WHERE id = :id AND state = 'RUNNING' AND NOT jsonb_exists(steps, :step)
            RETURNING id
            """;

    /** Marks jobs as tracked: their end is applied to their workflow and dependents. */
    static final String TRACK = """
            UPDATE ${schema}.job SET tracked = true WHERE id = ANY(CAST(:ids AS bigint[])) AND NOT tracked
            """;

    /** Writes jobs that wait for others; returns the dependencies found nowhere (then nothing is written). */
    static final String ADD_WAITING = """
            SELECT missing FROM ${schema}.add_waiting_jobs(CAST(:jobs AS jsonb))
            """;

    /** Cancels a waiting job and applies that to its dependents; returns its task, or no row. */
    static final String CANCEL_WAITING = """
            SELECT task FROM ${schema}.cancel_waiting_job(:id)
            """;

    /**
     * Records (or replaces) the results of a batch of attempts, each under its lease, in the
     * transaction that then completes them; fenced as the workers' writes are (R__fenced_writes.sql):
     * only while the job is claimed (STARTING or RUNNING, written as state <> 'READY') under that
     * lease's epoch. The epoch is stored with the result, so that the job's end reads it only when the
     * same claim completed the job (end_jobs, R__workflows.sql), and a write never replaces a result
     * of a later claim. Until then the result is not completed and no dependent reads it. Once
     * completed, it is replaced only by a later claim (a re-run): a write of the same claim that
     * reaches the row after the completion leaves the published value. The workflow and step come
     * from the job's headers. One primary-key probe of each table per result; no row lock on the job.
     */
    static final String RECORD_RESULTS = """
            INSERT INTO ${schema}.job_result (id, workflow, step, result, lease_epoch)
            SELECT job.id, CASE WHEN job.headers ->> 'pgqueue.workflow' ~ '^[0-9]{1,18}$'
                                THEN CAST(job.headers ->> 'pgqueue.workflow' AS bigint) END,
                   job.headers ->> 'pgqueue.workflow.step', CAST(r.result AS jsonb), job.lease_epoch
            FROM unnest(CAST(:ids AS bigint[]), CAST(:epochs AS integer[]), CAST(:results AS text[])) AS r(id, epoch, result)
            JOIN ${schema}.job AS job ON job.id = r.id
            WHERE job.state <> 'READY' AND job.lease_epoch = r.epoch
            ORDER BY job.id
            ON CONFLICT (id) DO UPDATE
            SET result = EXCLUDED.result, lease_epoch = EXCLUDED.lease_epoch, completed = false, recorded_at = now()
            WHERE job_result.lease_epoch IS NULL OR job_result.lease_epoch < EXCLUDED.lease_epoch
               OR (job_result.lease_epoch = EXCLUDED.lease_epoch AND NOT job_result.completed)
            """;

    /**
     * The results of a job's dependencies: each with its step (in a workflow) and its result when the
     * dependency completed (null when it recorded none, or ended otherwise).
     */
    static final String DEPENDENCY_RESULTS = """
            SELECT d.depends_on AS id, r.step, CASE WHEN r.completed THEN CAST(r.result AS text) END AS result
            FROM ${schema}.job_dependency AS d
            LEFT JOIN ${schema}.job_result AS r ON r.id = d.depends_on
            WHERE d.job_id = :id
            ORDER BY d.depends_on
            """;

    /** One workflow with counts. */
    static final String WORKFLOW = """
            SELECT id, name, on_failure, state, jobs, completed, failed, cancelled, created_at, finished_at
            FROM ${schema}.workflow WHERE id = :id
            """;

    /** The latest running workflows and then the latest finished ones, at most :limit of each. */
    static final String WORKFLOWS = """
            (SELECT id, name, on_failure, state, jobs, completed, failed, cancelled, created_at, finished_at
             FROM ${schema}.workflow WHERE state = 'RUNNING' ORDER BY id DESC LIMIT :limit)
            UNION ALL
            (SELECT id, name, on_failure, state, jobs, completed, failed, cancelled, created_at, finished_at
             FROM ${schema}.workflow WHERE state <> 'RUNNING' ORDER BY finished_at DESC LIMIT :limit)
            """;

    /**
     * A workflow's jobs by step, each with its state wherever it is (waiting, active or finished) and
     * its result once it completed.
     */
    static final String WORKFLOW_JOBS = """
            SELECT s.key AS step, s.id, coalesce(j.task, w.task, f.task) AS task,
                   coalesce(j.state, CASE WHEN w.id IS NOT NULL THEN 'WAITING' END, f.state) AS state,
                   coalesce(j.attempt, f.attempt, 0) AS attempt, coalesce(j.last_error, f.last_error) AS last_error,
                   ARRAY(SELECT d.depends_on FROM ${schema}.job_dependency AS d WHERE d.job_id = s.id ORDER BY 1) AS waits_for,
                   (SELECT CAST(r.result AS text) FROM ${schema}.job_result AS r WHERE r.id = s.id AND r.completed) AS result,
                   coalesce(j.headers, w.headers, f.headers) ->> 'pgqueue.workflow.after' AS after,
                   coalesce(j.created_at, w.created_at, f.created_at) AS created_at,
                   coalesce(j.started_at, f.started_at) AS started_at, f.finished_at
            FROM ${schema}.workflow AS wf
            CROSS JOIN LATERAL (SELECT e.key, CAST(e.value AS bigint) AS id FROM jsonb_each_text(wf.steps) AS e) AS s
            LEFT JOIN ${schema}.job AS j ON j.id = s.id
            LEFT JOIN ${schema}.job_waiting AS w ON w.id = s.id
            LEFT JOIN ${schema}.job_finished AS f ON f.id = s.id
            WHERE wf.id = :id
            ORDER BY s.id
            """;

    /** Workflows per state, for the gauges. */
    static final String COUNT_BY_STATE = """
            SELECT state, count(*) AS workflows FROM ${schema}.workflow GROUP BY state
            """;

    /** Waiting jobs per task, for the depth by state. */
    static final String WAITING_BY_TASK = """
            SELECT task, count(*) AS jobs FROM ${schema}.job_waiting GROUP BY task
            """;

    /**
     * Deletes a batch of workflows that finished in a state longer ago than an age, with their
     * results.
     */
    static final String DELETE_FINISHED_BEFORE = """
            WITH gone AS (
                DELETE FROM ${schema}.workflow
                WHERE id = ANY(ARRAY(
                    SELECT id FROM ${schema}.workflow
                    WHERE state = :state AND finished_at < now() - :ageMillis * interval '1 millisecond'
                    ORDER BY finished_at
                    LIMIT :limit))
                RETURNING id
            ), results AS (
                DELETE FROM ${schema}.job_result WHERE workflow IN (SELECT id FROM gone)
            )
            SELECT count(*) FROM gone
            """;

    /**
     * Deletes results of jobs outside workflows recorded longer ago than an age that no waiting or
     * running job depends on any more.
     */
    static final String DELETE_LOOSE_RESULTS = """
            DELETE FROM ${schema}.job_result AS r
            WHERE r.workflow IS NULL AND r.recorded_at < now() - :ageMillis * interval '1 millisecond'
              AND NOT EXISTS (SELECT 1 FROM ${schema}.job_dependency AS d WHERE d.depends_on = r.id)
            """;

    /**
     * Deletes the awaiters of jobs that left the queue without an end (deleted by hand, say): noted
     * longer ago than an age, their job neither active nor waiting. An ended job's end deletes them.
     */
    static final String DELETE_STALE_AWAITERS = """
            DELETE FROM ${schema}.job_awaiter AS a
            WHERE a.since < now() - :ageMillis * interval '1 millisecond'
              AND NOT EXISTS (SELECT 1 FROM ${schema}.job AS j WHERE j.id = a.job_id)
              AND NOT EXISTS (SELECT 1 FROM ${schema}.job_waiting AS w WHERE w.id = a.job_id)
            """;
}
