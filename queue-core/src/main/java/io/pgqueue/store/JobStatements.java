package io.pgqueue.store;

/**
 * The SQL of the job tables, one named statement per operation. {@code ${schema}} stands for the
 * validated queue schema. Arrays carry many rows per statement: batching is what makes the queue
 * fast (one row per transaction runs ~2,500 jobs/s here, 100 per statement ~70,000).
 */
final class JobStatements {

    private JobStatements() {
    }

    /**
     * A one-time filter that turns off synchronous commit for the statement's own transaction.
     * Used only on the workers' writes (start, heartbeat, outcome, release; the claim function
     * sets the same for its transaction), never on enqueue: losing such a commit in a crash leaves
     * the job claimable or its lease expiring, so it runs again — at-least-once holds — while the
     * worker never waits for the WAL flush.
     */
    static final String ASYNC_COMMIT = "(SELECT set_config('synchronous_commit', 'off', true)) = 'off'";

    /**
     * Inserts a batch of jobs in one statement. Ids come from the sequence up front so that each
     * input row can be matched with its fate: inserted, or skipped because an active job holds its
     * dedup key (ON CONFLICT against the partial unique index job_dedup_idx; a concurrent
     * uncommitted holder of the key makes this statement wait for its outcome). One NOTIFY per task
     * with due jobs; PostgreSQL delivers it on commit, once per transaction and channel.
     */
    static final String INSERT_JOBS = """
            WITH input AS (
                SELECT nextval('${schema}.job_id_seq') AS id, t.*,
                       coalesce(CAST(t.run_at AS timestamptz),
                                statement_timestamp() + t.delay_ms * interval '1 millisecond') AS schedule_time
                FROM unnest(CAST(:tasks AS text[]), CAST(:payloads AS text[]), CAST(:headers AS text[]),
                            CAST(:priorities AS integer[]), CAST(:runAts AS text[]), CAST(:delays AS bigint[]),
                            CAST(:tolerances AS bigint[]), CAST(:maxAttempts AS integer[]), CAST(:dedupKeys AS text[]))
                     WITH ORDINALITY AS t(task, payload, headers, priority, run_at, delay_ms, tolerance_ms,
                                          max_attempts, dedup_key, ord)
            ), inserted AS (
                INSERT INTO ${schema}.job (id, task, payload, headers, priority, schedule_time,
                                           delay_tolerance_deadline, max_attempts, dedup_key, created_at)
                SELECT id, task, CAST(payload AS jsonb), CAST(headers AS jsonb), priority, schedule_time,
                       schedule_time + tolerance_ms * interval '1 millisecond', max_attempts, dedup_key,
                       statement_timestamp()
                FROM input
                -- One global order of dedup keys, so two batches that share keys wait for each
                -- other instead of deadlocking.
                ORDER BY task, dedup_key, ord
                ON CONFLICT (task, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING
                RETURNING id, task, schedule_time
            ), notified AS (
                SELECT pg_notify(:channelPrefix || task, '')
                FROM (SELECT DISTINCT task FROM inserted WHERE schedule_time <= statement_timestamp()) due
            )
            SELECT input.ord, inserted.id AS inserted_id, (SELECT count(*) FROM notified) AS notified
            FROM input LEFT JOIN inserted ON inserted.id = input.id
            ORDER BY input.ord
            """;

    /**
     * Inserts one job: {@link #INSERT_JOBS} for a single row, with scalar parameters. A lone enqueue
     * (a request handler's call, the common case) took 0.57–0.75 ms through the array statement and
     * 0.39–0.45 ms through this one (p50, JDBC, one job every 2 ms): PostgreSQL planned the array
     * statement anew on every call, since a generic plan cannot see how many rows the arrays hold,
     * and the scalar statement has a single plan it keeps. Returns no row when an active job holds
     * the dedup key.
     */
    static final String INSERT_JOB = """
            WITH inserted AS (
                INSERT INTO ${schema}.job (id, task, payload, headers, priority, schedule_time,
                                           delay_tolerance_deadline, max_attempts, dedup_key, created_at)
                SELECT nextval('${schema}.job_id_seq'), :task, CAST(:payload AS jsonb), CAST(:headers AS jsonb), :priority,
                       s.schedule_time, s.schedule_time + CAST(:tolerance AS bigint) * interval '1 millisecond',
                       :maxAttempts, CAST(:dedupKey AS text), statement_timestamp()
                FROM (SELECT coalesce(CAST(CAST(:runAt AS text) AS timestamptz),
                                      statement_timestamp() + CAST(:delay AS bigint) * interval '1 millisecond')
                             AS schedule_time) s
                ON CONFLICT (task, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING
                RETURNING id, task, schedule_time
            )
            SELECT id, CASE WHEN schedule_time <= statement_timestamp()
                            THEN pg_notify(:channelPrefix || task, '') END AS notified
            FROM inserted
            """;

    /** Locks the active job holding a dedup key until the enqueuing transaction ends. */
    static final String LOCK_ACTIVE_BY_KEY = """
            SELECT id, state, CAST(payload AS text) AS payload, rerun_requested
            FROM ${schema}.job
            WHERE task = :task AND dedup_key = :dedupKey
            FOR UPDATE
            """;

    /** Replaces payload, priority and schedule of a READY job (locked by LOCK_ACTIVE_BY_KEY). */
    static final String REPLACE_READY = """
            UPDATE ${schema}.job
            SET payload = CAST(:payload AS jsonb), headers = CAST(:headers AS jsonb), priority = :priority,
                schedule_time = s.schedule_time,
                delay_tolerance_deadline = s.schedule_time + CAST(:tolerance AS bigint) * interval '1 millisecond'
            FROM (SELECT coalesce(CAST(CAST(:runAt AS text) AS timestamptz),
                                  statement_timestamp() + CAST(:delay AS bigint) * interval '1 millisecond')
                         AS schedule_time) s
            WHERE id = :id AND state = 'READY'
            """;

    /** Sets the payload of a READY job (merge, or a re-run request that arrives before the run). */
    static final String SET_READY_PAYLOAD = """
            UPDATE ${schema}.job SET payload = CAST(:payload AS jsonb)
            WHERE id = :id AND state = 'READY'
            """;

    /** Marks a claimed job for one more run after the current one, with the newest payload. */
    static final String REQUEST_RERUN = """
            UPDATE ${schema}.job SET rerun_requested = true, payload = CAST(:payload AS jsonb)
            WHERE id = :id AND state IN ('STARTING', 'RUNNING')
            """;

    /**
     * Claims due jobs of many tasks in one statement, each task with its own limit, through the
     * schema's {@code claim_jobs} function (migration V4): per task it walks job_claim_idx (task,
     * priority DESC, coalesce(deadline, schedule)), skips rows other workers have locked, and moves
     * the jobs found to the claimed state with a new lease epoch. The function keeps one plan per
     * connection, made so that it cannot turn into a table scan or a sort, where this statement
     * written out was planned anew on every call (0.15-0.25 ms); see the migration for why.
     * The function keeps the {@code id = ANY(ARRAY(...))} shape, not {@code id IN (SELECT ...)}: with
     * a generic plan the IN form scanned the whole table here, 314 ms per claim at 1 M rows.
     */
    static final String CLAIM = """
            SELECT id, lease_epoch, task, payload, headers, priority, attempt, max_attempts, schedule_time,
                   delay_tolerance_deadline, created_at, started_at, expected_status_change_time
            FROM ${schema}.claim_jobs(CAST(:tasks AS text[]), CAST(:limits AS integer[]), :state, :owner,
                                      CAST(:leaseMillis AS bigint))
            """;

    /**
     * The rows of a batch of leases that still hold, locked in the order of the input (job id
     * order, so two batches cannot deadlock). The input drives the lookups, one primary-key probe
     * per lease, through LATERAL: joined the other way, a generic plan walked job_lease_idx (all
     * claimed rows, underestimated by statistics taken when none were) once per input row —
     * 380 ms for 1,000 outcomes with 1,000 jobs claimed, which starved the drain of a 1 M backlog
     * to 5,000 jobs/s. The state is checked after the lock, outside the probe, for the same
     * reason: inside, it matches job_lease_idx's predicate and the planner probed that index
     * (200 ms). A row whose epoch changes while the lock is awaited drops out (the probe is
     * re-checked on the newest version). {@code ${states}} names the states a lease may be in.
     */
    private static final String HELD_LEASES = """
            SELECT l.id, l.ord, j.task, j.cancel_requested, j.rerun_requested
            FROM unnest(CAST(:ids AS bigint[]), CAST(:epochs AS integer[])) WITH ORDINALITY AS l(id, epoch, ord)
            CROSS JOIN LATERAL (
                SELECT task, state, cancel_requested, rerun_requested FROM ${schema}.job
                WHERE job.id = l.id AND job.lease_epoch = l.epoch
                -- LIMIT keeps the planner from pushing the state check below into the probe.
                LIMIT 1
                FOR UPDATE
            ) j
            WHERE j.state IN (${states})
            """;

    /** {@link #HELD_LEASES} for leases in the given states (a SQL list of literals). */
    private static String heldLeases(String states) {
        return HELD_LEASES.replace("${states}", states);
    }

    /** STARTING → RUNNING for the leases still held, renewing them. */
    static final String MARK_RUNNING = """
            WITH held AS MATERIALIZED (${held})
            UPDATE ${schema}.job
            SET state = 'RUNNING', expected_status_change_time = now() + :leaseMillis * interval '1 millisecond'
            FROM held
            WHERE job.id = held.id AND ${asyncCommit}
            RETURNING job.id, job.task, job.state, job.cancel_requested
            """.replace("${held}", heldLeases("'STARTING'"));

    /** Renews the leases still held and stores reported progress; reports cancellation requests. */
    static final String HEARTBEAT = """
            WITH held AS MATERIALIZED (${held})
            UPDATE ${schema}.job
            SET expected_status_change_time = now() + :leaseMillis * interval '1 millisecond',
                progress = coalesce((CAST(:progress AS text[]))[held.ord], job.progress)
            FROM held
            WHERE job.id = held.id AND ${asyncCommit}
            RETURNING job.id, job.task, job.state, job.cancel_requested
            """.replace("${held}", heldLeases("'STARTING', 'RUNNING'"));

    /**
     * Writes the outcomes of many attempts in one statement, fenced by their leases. {@code leased}
     * locks the rows first, in the input's job id order (so two batches cannot deadlock), one
     * primary-key probe per outcome (see HELD_LEASES): FOR UPDATE returns the
     * newest row version, so a re-run or cancel request committed while this statement waited is
     * honoured. Then: retry → READY after the delay; released (shutdown) → READY at once, the
     * attempt given back and its place in the queue kept (its schedule unchanged); completed/failed with a re-run requested → READY at once
     * with a fresh attempt budget; a failure of a job whose cancellation was requested → CANCELLED;
     * anything else leaves the hot table for job_finished (completed rows only when they are kept).
     */
    static final String RECORD_OUTCOMES = """
            WITH input AS (
                SELECT * FROM unnest(CAST(:kinds AS text[]), CAST(:delays AS bigint[]), CAST(:errors AS text[]),
                                     CAST(:progress AS text[]))
                              WITH ORDINALITY AS t(kind, delay_ms, error, progress, ord)
            ), leased AS MATERIALIZED (${held}
            ), held AS MATERIALIZED (
                SELECT leased.id, leased.task, input.delay_ms, input.error, input.progress, input.kind,
                       CASE WHEN leased.cancel_requested AND input.kind <> 'COMPLETED' THEN 'CANCELLED'
                            WHEN input.kind IN ('RETRY', 'RELEASED') THEN 'READY'
                            WHEN leased.rerun_requested AND input.kind IN ('COMPLETED', 'FAILED') THEN 'RERUN'
                            ELSE input.kind END AS next_state
                FROM leased JOIN input ON input.ord = leased.ord
                WHERE ${asyncCommit}
            ), requeued AS (
                UPDATE ${schema}.job
                SET state = 'READY', lease_owner = NULL, expected_status_change_time = NULL, rerun_requested = false,
                    attempt = CASE WHEN held.next_state = 'RERUN' THEN 0
                                   WHEN held.kind = 'RELEASED' THEN job.attempt - 1
                                   ELSE job.attempt END,
                    schedule_time = CASE WHEN held.kind = 'RELEASED' THEN job.schedule_time ELSE s.schedule_time END,
                    delay_tolerance_deadline = CASE WHEN held.kind = 'RELEASED' THEN job.delay_tolerance_deadline
                        ELSE s.schedule_time + (job.delay_tolerance_deadline - job.schedule_time) END,
                    last_error = coalesce(held.error, job.last_error),
                    progress = coalesce(held.progress, job.progress)
                FROM held, LATERAL (SELECT now() + held.delay_ms * interval '1 millisecond' AS schedule_time) s
                WHERE job.id = held.id AND held.next_state IN ('READY', 'RERUN')
            ), finished AS (
                DELETE FROM ${schema}.job USING held
                WHERE job.id = held.id AND held.next_state IN ('COMPLETED', 'FAILED', 'CANCELLED')
                RETURNING job.*, held.kind, held.next_state, held.error, held.progress AS reported_progress
            ), archived AS (
                INSERT INTO ${schema}.job_finished (id, task, state, priority, payload, headers, schedule_time,
                        delay_tolerance_deadline, attempt, max_attempts, lease_owner, dedup_key, last_error,
                        created_at, started_at, finished_at, progress, lease_epoch)
                SELECT id, task, next_state, priority, payload, headers, schedule_time, delay_tolerance_deadline,
                       -- A released job cancelled on its way back did not use up its attempt.
                       CASE WHEN kind = 'RELEASED' THEN attempt - 1 ELSE attempt END, max_attempts, lease_owner,
                       dedup_key, coalesce(error, last_error), created_at, started_at, now(),
                       coalesce(reported_progress, progress), lease_epoch
                FROM finished
                WHERE next_state <> 'COMPLETED' OR :keepCompleted
            )
            SELECT id, task, CASE WHEN next_state = 'RERUN' THEN 'READY' ELSE next_state END AS state
            FROM held
            """.replace("${held}", heldLeases("'STARTING', 'RUNNING'"));

    /**
     * Locks claimed jobs whose lease deadline passed (database clock), oldest first, skipping rows a
     * worker is writing right now; job_lease_idx serves it.
     */
    static final String LOCK_EXPIRED_LEASES = """
            SELECT id, task, lease_epoch, attempt, max_attempts, lease_owner
            FROM ${schema}.job
            WHERE state IN ('STARTING', 'RUNNING') AND expected_status_change_time < now()
            ORDER BY expected_status_change_time
            LIMIT :limit
            FOR UPDATE SKIP LOCKED
            """;

    /**
     * Cancels a job in one snapshot: a READY job moves to job_finished as CANCELLED; a claimed job
     * gets a cancellation request its worker sees at the next heartbeat.
     */
    static final String CANCEL = """
            WITH cancelled AS (
                DELETE FROM ${schema}.job WHERE id = :id AND state = 'READY'
                RETURNING *
            ), archived AS (
                INSERT INTO ${schema}.job_finished (id, task, state, priority, payload, headers, schedule_time,
                        delay_tolerance_deadline, attempt, max_attempts, lease_owner, dedup_key, last_error,
                        created_at, started_at, finished_at, progress, lease_epoch)
                SELECT id, task, 'CANCELLED', priority, payload, headers, schedule_time, delay_tolerance_deadline,
                       attempt, max_attempts, lease_owner, dedup_key, last_error, created_at, started_at, now(), progress,
                       lease_epoch
                FROM cancelled
            ), requested AS (
                UPDATE ${schema}.job SET cancel_requested = true
                WHERE id = :id AND state IN ('STARTING', 'RUNNING')
                RETURNING id
            )
            SELECT (SELECT task FROM cancelled) AS task,
                   (SELECT count(*) FROM cancelled) AS cancelled,
                   (SELECT count(*) FROM requested) AS requested,
                   EXISTS (SELECT 1 FROM ${schema}.job_finished WHERE id = :id) AS finished,
                   EXISTS (SELECT 1 FROM ${schema}.job WHERE id = :id) AS active
            """;

    /**
     * Deletes one batch of finished jobs of a state older than an age; job_finished_retention_idx
     * serves the inner scan, and the batch bound keeps each transaction short.
     */
    static final String DELETE_FINISHED_BEFORE = """
            DELETE FROM ${schema}.job_finished
            WHERE id = ANY(ARRAY(
                SELECT id FROM ${schema}.job_finished
                WHERE state = :state AND finished_at < now() - :ageMillis * interval '1 millisecond'
                ORDER BY finished_at
                LIMIT :limit
            ))
            """;

    /**
     * Puts FAILED jobs back into the queue as READY with a fresh attempt budget, keeping their id
     * and lease epoch (so no stale lease can match them). A job whose dedup key an active job
     * holds stays FAILED.
     */
    static final String RERUN_FAILED = """
            WITH revived AS (
                DELETE FROM ${schema}.job_finished f
                WHERE f.id IN (
                    -- Of several failed jobs with one dedup key, only the newest comes back.
                    SELECT DISTINCT ON (c.task, coalesce(c.dedup_key, c.id::text)) c.id
                    FROM ${schema}.job_finished c
                    WHERE c.state = 'FAILED' AND (c.id = :id OR (CAST(:id AS bigint) IS NULL AND c.task = :task))
                      AND NOT EXISTS (SELECT 1 FROM ${schema}.job a WHERE a.task = c.task AND a.dedup_key = c.dedup_key)
                    ORDER BY c.task, coalesce(c.dedup_key, c.id::text), c.finished_at DESC)
                RETURNING f.*
            )
            INSERT INTO ${schema}.job (id, task, state, priority, payload, headers, schedule_time,
                    delay_tolerance_deadline, attempt, max_attempts, lease_epoch, dedup_key, last_error, created_at)
            SELECT id, task, 'READY', priority, payload, headers, now(),
                   now() + (delay_tolerance_deadline - schedule_time), 0, max_attempts, lease_epoch, dedup_key,
                   last_error, created_at
            FROM revived
            RETURNING id, task
            """;

    /** The most recent failures of a task; job_finished_task_idx serves it. */
    static final String RECENT_FAILURES = """
            SELECT id, attempt, last_error, finished_at
            FROM ${schema}.job_finished
            WHERE task = :task AND state = 'FAILED'
            ORDER BY finished_at DESC
            LIMIT :limit
            """;

    /** One job by id, active or finished. */
    static final String FIND = """
            SELECT id, task, state, priority, CAST(payload AS text) AS payload, CAST(headers AS text) AS headers,
                   schedule_time, delay_tolerance_deadline, attempt, max_attempts, lease_owner,
                   expected_status_change_time, dedup_key, rerun_requested, cancel_requested, last_error,
                   created_at, started_at, CAST(NULL AS timestamptz) AS finished_at, progress
            FROM ${schema}.job WHERE id = :id
            UNION ALL
            SELECT id, task, state, priority, CAST(payload AS text), CAST(headers AS text),
                   schedule_time, delay_tolerance_deadline, attempt, max_attempts, lease_owner,
                   NULL, dedup_key, false, false, last_error, created_at, started_at, finished_at, progress
            FROM ${schema}.job_finished WHERE id = :id
            """;
}
