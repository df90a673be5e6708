package io.pgqueue.internal.store;

/**
 * The SQL of the job tables, one named statement per operation. {@code ${schema}} stands for the
 * validated queue schema. Arrays carry many rows per statement: batching is what makes the queue
 * fast (one row per transaction runs ~2,500 jobs/s here, 100 per statement ~70,000). The schema
 * functions some of them call have their current definitions in the repeatable migrations
 * ({@code io/pgqueue/db/migration/R__*.sql}).
 * <p>
 * Its length is its statements: each is a text block with the comment that says why it is shaped
 * so, and a class of statements has no logic to split.
 */
public final class JobStatements {

    private JobStatements() {
    }

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
                            CAST(:tolerances AS bigint[]), CAST(:maxAttempts AS integer[]), CAST(:dedupKeys AS text[]),
                            CAST(:partitions AS integer[]))
                     WITH ORDINALITY AS t(task, payload, headers, priority, run_at, delay_ms, tolerance_ms,
                                          max_attempts, dedup_key, partition, ord)
            ), inserted AS (
                INSERT INTO ${schema}.job (id, task, payload, headers, priority, schedule_time,
                                           delay_tolerance_deadline, max_attempts, dedup_key, created_at, partition)
                SELECT id, task, CAST(payload AS jsonb), CAST(headers AS jsonb), priority, schedule_time,
                       schedule_time + tolerance_ms * interval '1 millisecond', max_attempts, dedup_key,
                       statement_timestamp(), partition
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
     * {@link #INSERT_JOBS} for jobs without a dedup key, which cannot conflict: a plain insert in
     * input order, without the sort by key, the speculative insertion of ON CONFLICT and the join
     * back to the input. The ids come from the sequence in input order (the scan WITH ORDINALITY is
     * ordered by it), so sorted ascending they match the input rows one to one. 8-job and
     * 1,000-job batches inserted 10–25 % faster than through {@link #INSERT_JOBS} (pgbench, prepared
     * statements, PostgreSQL 15).
     */
    static final String INSERT_NEW_JOBS = """
            WITH inserted AS (
                INSERT INTO ${schema}.job (id, task, payload, headers, priority, schedule_time,
                                           delay_tolerance_deadline, max_attempts, created_at, partition)
                SELECT nextval('${schema}.job_id_seq'), t.task, CAST(t.payload AS jsonb), CAST(t.headers AS jsonb),
                       t.priority, s.schedule_time, s.schedule_time + t.tolerance_ms * interval '1 millisecond',
                       t.max_attempts, statement_timestamp(), t.partition
                FROM unnest(CAST(:tasks AS text[]), CAST(:payloads AS text[]), CAST(:headers AS text[]),
                            CAST(:priorities AS integer[]), CAST(:runAts AS text[]), CAST(:delays AS bigint[]),
                            CAST(:tolerances AS bigint[]), CAST(:maxAttempts AS integer[]),
                            CAST(:partitions AS integer[]))
                     WITH ORDINALITY AS t(task, payload, headers, priority, run_at, delay_ms, tolerance_ms,
                                          max_attempts, partition, ord)
                     CROSS JOIN LATERAL (SELECT coalesce(CAST(t.run_at AS timestamptz),
                                                         statement_timestamp() + t.delay_ms * interval '1 millisecond')
                                                AS schedule_time) s
                ORDER BY t.ord
                RETURNING id, task, schedule_time
            ), notified AS (
                SELECT pg_notify(:channelPrefix || task, '')
                FROM (SELECT DISTINCT task FROM inserted WHERE schedule_time <= statement_timestamp()) due
            )
            SELECT id, (SELECT count(*) FROM notified) AS notified FROM inserted
            """;

    /**
     * {@link #INSERT_JOBS} on a shard, fenced: the jobs are written only if the shard holds every
     * partition among them ACTIVE, or none is written. The KEY SHARE locks on those shard_partition
     * rows last until the transaction ends, so marking one of them MOVING (FOR UPDATE) waits for
     * enqueues in flight, and an enqueue that waited for that mark sees it and writes nothing. Each
     * row says whether its partition is held, so the caller can tell a moved partition from a
     * duplicate.
     */
    static final String INSERT_JOBS_FENCED = """
            WITH input AS (
                SELECT nextval('${schema}.job_id_seq') AS id, t.*,
                       coalesce(CAST(t.run_at AS timestamptz),
                                statement_timestamp() + t.delay_ms * interval '1 millisecond') AS schedule_time
                FROM unnest(CAST(:tasks AS text[]), CAST(:payloads AS text[]), CAST(:headers AS text[]),
                            CAST(:priorities AS integer[]), CAST(:runAts AS text[]), CAST(:delays AS bigint[]),
                            CAST(:tolerances AS bigint[]), CAST(:maxAttempts AS integer[]), CAST(:dedupKeys AS text[]),
                            CAST(:partitions AS integer[]))
                     WITH ORDINALITY AS t(task, payload, headers, priority, run_at, delay_ms, tolerance_ms,
                                          max_attempts, dedup_key, partition, ord)
            ), held AS (
                SELECT owned.partition FROM ${schema}.shard_partition AS owned
                WHERE owned.partition = ANY(ARRAY(SELECT DISTINCT partition FROM input)) AND owned.state = 'ACTIVE'
                ORDER BY owned.partition
                FOR KEY SHARE
            ), inserted AS (
                INSERT INTO ${schema}.job (id, task, payload, headers, priority, schedule_time,
                                           delay_tolerance_deadline, max_attempts, dedup_key, created_at, partition)
                SELECT id, task, CAST(payload AS jsonb), CAST(headers AS jsonb), priority, schedule_time,
                       schedule_time + tolerance_ms * interval '1 millisecond', max_attempts, dedup_key,
                       statement_timestamp(), partition
                FROM input
                WHERE (SELECT count(*) FROM held) = (SELECT count(DISTINCT partition) FROM input)
                -- One global order of dedup keys, so two batches that share keys wait for each
                -- other instead of deadlocking.
                ORDER BY task, dedup_key, ord
                ON CONFLICT (task, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING
                RETURNING id, task, schedule_time
            ), notified AS (
                SELECT pg_notify(:channelPrefix || task, '')
                FROM (SELECT DISTINCT task FROM inserted WHERE schedule_time <= statement_timestamp()) due
            )
            SELECT input.ord, inserted.id AS inserted_id, (SELECT count(*) FROM notified) AS notified,
                   input.partition IN (SELECT partition FROM held) AS held
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
                                           delay_tolerance_deadline, max_attempts, dedup_key, created_at, partition)
                SELECT nextval('${schema}.job_id_seq'), :task, CAST(:payload AS jsonb), CAST(:headers AS jsonb), :priority,
                       s.schedule_time, s.schedule_time + CAST(:tolerance AS bigint) * interval '1 millisecond',
                       :maxAttempts, CAST(:dedupKey AS text), statement_timestamp(), :partition
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

    /**
     * {@link #INSERT_JOB} on a shard, fenced as {@link #INSERT_JOBS_FENCED}: returns one row whose
     * id is null when the job was not written, and whether the shard holds its partition ACTIVE.
     */
    static final String INSERT_JOB_FENCED = """
            WITH held AS (
                SELECT owned.partition FROM ${schema}.shard_partition AS owned
                WHERE owned.partition = :partition AND owned.state = 'ACTIVE'
                FOR KEY SHARE
            ), inserted AS (
                INSERT INTO ${schema}.job (id, task, payload, headers, priority, schedule_time,
                                           delay_tolerance_deadline, max_attempts, dedup_key, created_at, partition)
                SELECT nextval('${schema}.job_id_seq'), :task, CAST(:payload AS jsonb), CAST(:headers AS jsonb), :priority,
                       s.schedule_time, s.schedule_time + CAST(:tolerance AS bigint) * interval '1 millisecond',
                       :maxAttempts, CAST(:dedupKey AS text), statement_timestamp(), held.partition
                FROM held, (SELECT coalesce(CAST(CAST(:runAt AS text) AS timestamptz),
                                            statement_timestamp() + CAST(:delay AS bigint) * interval '1 millisecond')
                                   AS schedule_time) s
                ON CONFLICT (task, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING
                RETURNING id, task, schedule_time
            )
            SELECT (SELECT id FROM inserted) AS id,
                   (SELECT CASE WHEN schedule_time <= statement_timestamp()
                                THEN pg_notify(:channelPrefix || task, '') END FROM inserted) AS notified,
                   EXISTS (SELECT 1 FROM held) AS held
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
     * schema's {@code claim_jobs} function (R__claim.sql): per task it walks job_claim_idx (task,
     * priority DESC, coalesce(deadline, schedule)), skips rows other workers have locked, and moves
     * the jobs found to the claimed state with a new lease epoch. The function keeps one plan per
     * connection, made so that it cannot turn into a table scan or a sort, where the same statement
     * sent with bound arrays is planned anew on every call (0.15-0.25 ms); see the function for why, and
     * why it keeps the {@code id = ANY(ARRAY(...))} shape. Tasks with limits across nodes come in
     * {@code :limited} (JSON) and are claimed first, one at a time under a lock of the task; a row
     * without an id names a task whose limit cut the claim short.
     */
    static final String CLAIM = """
            SELECT id, lease_epoch, task, payload, headers, priority, attempt, max_attempts, schedule_time,
                   delay_tolerance_deadline, created_at, started_at, expected_status_change_time, limit_wait_millis
            FROM ${schema}.claim_jobs(CAST(:tasks AS text[]), CAST(:limits AS integer[]), :state, :owner,
                                      CAST(:leaseMillis AS bigint), CAST(:limited AS jsonb))
            """;

    /**
     * STARTING → RUNNING for the leases still held, renewing them: the schema's {@code mark_running}
     * function (R__fenced_writes.sql; it and the writes below keep one plan per connection,
     * where the same statements sent with bound arrays are planned on every call, 0.15-0.36 ms). Each reaches its
     * rows through one primary-key scan of the batch's ids, which must be strictly ascending (rows
     * locked in id order, so two batches cannot deadlock), and leaves out leases that no longer
     * hold. The workers' writes do not wait for the WAL flush: one lost in a crash leaves the lease
     * to expire and the job to run again (at-least-once).
     */
    static final String MARK_RUNNING = """
            SELECT id, task, state, cancel_requested
            FROM ${schema}.mark_running(CAST(:ids AS bigint[]), CAST(:epochs AS integer[]), CAST(:leaseMillis AS bigint))
            """;

    /** Renews the leases still held and stores reported progress; reports cancellation requests. */
    static final String HEARTBEAT = """
            SELECT id, task, state, cancel_requested
            FROM ${schema}.renew_leases(CAST(:ids AS bigint[]), CAST(:epochs AS integer[]), CAST(:progress AS text[]),
                                        CAST(:leaseMillis AS bigint))
            """;

    /**
     * Writes the outcomes of many attempts in one statement, fenced by their leases: the schema's
     * {@code record_outcomes} function (R__fenced_writes.sql, where the transitions are spelled
     * out). Retry and release go back to READY, a requested re-run too, a failure of a job whose
     * cancellation was requested ends CANCELLED, everything else moves to job_finished (completed
     * rows only when they are kept). Returns the state each job moved to.
     */
    static final String RECORD_OUTCOMES = """
            SELECT id, task, state
            FROM ${schema}.record_outcomes(CAST(:ids AS bigint[]), CAST(:epochs AS integer[]), CAST(:kinds AS text[]),
                                           CAST(:delays AS bigint[]), CAST(:errors AS text[]), CAST(:progress AS text[]),
                                           :keepCompleted)
            """;

    /** {@link #RECORD_OUTCOMES} for a batch in which some attempts join their jobs' histories. */
    static final String RECORD_OUTCOMES_WITH_HISTORY = """
            SELECT id, task, state
            FROM ${schema}.record_outcomes(CAST(:ids AS bigint[]), CAST(:epochs AS integer[]), CAST(:kinds AS text[]),
                                           CAST(:delays AS bigint[]), CAST(:errors AS text[]), CAST(:progress AS text[]),
                                           :keepCompleted, CAST(:history AS text[]))
            """;

    /**
     * Completes attempts that report nothing else (no progress, no message), fenced by their
     * leases: the schema's {@code complete_jobs} function (R__fenced_writes.sql). One DELETE takes the
     * rows whose lease holds, without locking them first; leases still held that it leaves (a
     * re-run was requested) go through {@link #RECORD_OUTCOMES}. The ids must be strictly
     * ascending. Returns the state each job moved to, as {@link #RECORD_OUTCOMES} does.
     */
    static final String COMPLETE_JOBS = """
            SELECT id, task, state
            FROM ${schema}.complete_jobs(CAST(:ids AS bigint[]), CAST(:epochs AS integer[]), :keepCompleted)
            """;

    /** {@link #COMPLETE_JOBS} for a batch in which some attempts join their jobs' histories. */
    static final String COMPLETE_JOBS_WITH_HISTORY = """
            SELECT id, task, state
            FROM ${schema}.complete_jobs(CAST(:ids AS bigint[]), CAST(:epochs AS integer[]), :keepCompleted,
                                         CAST(:history AS text[]))
            """;

    /**
     * Locks claimed jobs whose lease deadline passed (database clock), oldest first, skipping rows a
     * worker is writing right now; job_lease_idx serves it.
     */
    static final String LOCK_EXPIRED_LEASES = """
            SELECT id, task, lease_epoch, attempt, max_attempts, lease_owner, started_at, now() AS now,
                   history IS NOT NULL OR task = ANY(CAST(:historyTasks AS text[])) AS keeps_history
            FROM ${schema}.job
            WHERE state IN ('STARTING', 'RUNNING') AND expected_status_change_time < now()
            ORDER BY expected_status_change_time
            LIMIT :limit
            FOR UPDATE SKIP LOCKED
            """;

    /** Withdraws a job this transaction inserted, before anyone saw it. */
    static final String WITHDRAW = """
            DELETE FROM ${schema}.job WHERE id = :id AND state = 'READY'
            """;

    /**
     * The newest job of a task and key that ended in one of the given states and was enqueued
     * within the period before this statement; job_finished_dedup_idx (V19) serves it.
     */
    static final String FINISHED_HOLDER = """
            SELECT id FROM ${schema}.job_finished
            WHERE dedup_key = :key AND task = :task AND state = ANY(CAST(:states AS text[]))
              AND created_at > statement_timestamp() - :periodMillis * interval '1 millisecond'
            ORDER BY created_at DESC
            LIMIT 1
            """;

    /** A job's attempt history, active or finished. */
    static final String HISTORY = """
            SELECT CAST(history AS text) AS history FROM ${schema}.job WHERE id = :id
            UNION ALL
            SELECT CAST(history AS text) FROM ${schema}.job_finished WHERE id = :id
            """;

    /**
     * Cancels a job in one snapshot: a READY job moves to job_finished as CANCELLED; a claimed job
     * gets a cancellation request its worker sees at the next heartbeat; a waiting job is reported
     * (the store cancels it with {@link WorkflowStatements#CANCEL_WAITING}). The archived row comes
     * from the schema's {@code finished_job} function (R__archive.sql), which PostgreSQL inlines
     * into this statement.
     */
    static final String CANCEL = """
            WITH cancelled AS (
                DELETE FROM ${schema}.job WHERE id = :id AND state = 'READY'
                RETURNING *
            ), archived AS (
                INSERT INTO ${schema}.job_finished
                SELECT a.*
                FROM cancelled AS c,
                     LATERAL ${schema}.finished_job(c, 'CANCELLED', c.attempt, c.last_error, c.progress) AS a
            ), requested AS (
                UPDATE ${schema}.job SET cancel_requested = true
                WHERE id = :id AND state IN ('STARTING', 'RUNNING')
                RETURNING id
            )
            SELECT (SELECT task FROM cancelled) AS task,
                   (SELECT count(*) FROM cancelled) AS cancelled,
                   (SELECT count(*) FROM requested) AS requested,
                   EXISTS (SELECT 1 FROM ${schema}.job_finished WHERE id = :id) AS finished,
                   EXISTS (SELECT 1 FROM ${schema}.job WHERE id = :id) AS active,
                   EXISTS (SELECT 1 FROM ${schema}.job_waiting WHERE id = :id) AS waiting
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
     * The partitions a shard holds ACTIVE, KEY SHARE locked for the statement's transaction: every
     * write of a job on a shard takes this lock, which a partition move waits for (a CTE named {@code held}).
     */
    private static final String HELD = """
            held AS (
                SELECT owned.partition FROM ${schema}.shard_partition AS owned WHERE owned.state = 'ACTIVE'
                FOR KEY SHARE
            )""";

    private static final String SINGLE_OR_TASK = "(c.id = :id OR (CAST(:id AS bigint) IS NULL AND c.task = :task))";

    /**
     * Puts FAILED jobs back into the queue as READY with a fresh attempt budget, keeping their id
     * and lease epoch (so no stale lease can match them). A job whose dedup key an active job
     * holds stays FAILED.
     */
    static final String RERUN_FAILED = rerunFailed("", "", SINGLE_OR_TASK);

    /**
     * {@link #RERUN_FAILED} on a shard: only jobs of partitions it holds ACTIVE come back (a FAILED
     * job of a partition that moved away is brought to the partition's shard first), with a KEY
     * SHARE lock on those partitions, as every write of a job on a shard takes.
     */
    static final String RERUN_FAILED_FENCED = rerunFailed(HELD + ", ", "AND c.partition IN (SELECT partition FROM held)",
            SINGLE_OR_TASK);

    /** {@link #RERUN_FAILED} of the FAILED jobs among some ids (a batch of a bulk action). */
    static final String RERUN_FAILED_AMONG = rerunFailed("", "", "c.id = ANY(CAST(:ids AS bigint[]))");

    /** {@link #RERUN_FAILED_AMONG} on a shard, fenced as {@link #RERUN_FAILED_FENCED}. */
    static final String RERUN_FAILED_AMONG_FENCED = rerunFailed(HELD + ", ", "AND c.partition IN (SELECT partition FROM held)",
            "c.id = ANY(CAST(:ids AS bigint[]))");

    private static String rerunFailed(String held, String inHeld, String which) {
        return """
                WITH %srevived AS (
                    DELETE FROM ${schema}.job_finished f
                    WHERE f.id IN (
                        -- Of several failed jobs with one dedup key, only the newest comes back.
                        SELECT DISTINCT ON (c.task, coalesce(c.dedup_key, c.id::text)) c.id
                        FROM ${schema}.job_finished c
                        WHERE c.state = 'FAILED' AND %s
                          AND NOT EXISTS (SELECT 1 FROM ${schema}.job a WHERE a.task = c.task AND a.dedup_key = c.dedup_key)
                          %s
                        ORDER BY c.task, coalesce(c.dedup_key, c.id::text), c.finished_at DESC)
                    RETURNING f.*
                )
                INSERT INTO ${schema}.job (id, task, state, priority, payload, headers, schedule_time,
                        delay_tolerance_deadline, attempt, max_attempts, lease_epoch, dedup_key, last_error, created_at,
                        partition, history)
                SELECT id, task, 'READY', priority, payload, headers, now(),
                       now() + (delay_tolerance_deadline - schedule_time), 0, max_attempts, lease_epoch, dedup_key,
                       last_error, created_at, partition, history
                FROM revived
                RETURNING id, task
                """.formatted(held, which, inHeld);
    }


    /**
     * Cancels the active jobs among some ids (a batch of a bulk action): READY ones move to
     * job_finished as CANCELLED, as {@link #CANCEL} moves one; claimed ones get a cancellation
     * request their worker sees at the next heartbeat (those asked before are left out). Returns
     * the task of each job cancelled at once, and a row with a null task for each one asked.
     */
    static final String CANCEL_AMONG = cancelAmong("", "");

    /** {@link #CANCEL_AMONG} on a shard: only jobs of partitions it holds. */
    static final String CANCEL_AMONG_FENCED = cancelAmong(HELD + ", ", "AND partition IN (SELECT partition FROM held)");

    private static String cancelAmong(String held, String inHeld) {
        return """
                WITH %scancelled AS (
                    DELETE FROM ${schema}.job WHERE id = ANY(CAST(:ids AS bigint[])) AND state = 'READY' %s
                    RETURNING *
                ), archived AS (
                    INSERT INTO ${schema}.job_finished
                    SELECT a.*
                    FROM cancelled AS c,
                         LATERAL ${schema}.finished_job(c, 'CANCELLED', c.attempt, c.last_error, c.progress) AS a
                ), requested AS (
                    UPDATE ${schema}.job SET cancel_requested = true
                    WHERE id = ANY(CAST(:ids AS bigint[])) AND state IN ('STARTING', 'RUNNING') AND NOT cancel_requested %s
                    RETURNING id
                )
                SELECT task FROM cancelled
                UNION ALL
                SELECT NULL FROM requested
                """.formatted(held, inHeld, inHeld);
    }

    /** Deletes the finished jobs of a state among some ids (a batch of a bulk action). */
    static final String DELETE_FINISHED_AMONG = fenced(false, deleteFinishedAmong());

    /** {@link #DELETE_FINISHED_AMONG} on a shard: only jobs of partitions it holds. */
    static final String DELETE_FINISHED_AMONG_FENCED = fenced(true, deleteFinishedAmong());

    /**
     * Makes the READY jobs among some ids due at a time (now when {@code :at} is null), moving
     * each delay-tolerance deadline with it; a claimed job is left as it is (its row lock and state
     * fence it, as a claim's SKIP LOCKED fences the claim against this). Returns each changed job's task.
     */
    static final String RESCHEDULE_AMONG = fenced(false, rescheduleAmong());

    /** {@link #RESCHEDULE_AMONG} on a shard: only jobs of partitions it holds. */
    static final String RESCHEDULE_AMONG_FENCED = fenced(true, rescheduleAmong());

    /** Sets the priority of the READY jobs among some ids; a claimed job is left as it is. Returns their tasks. */
    static final String PRIORITIZE_AMONG = fenced(false, prioritizeAmong("job", "AND state = 'READY'"));

    /** {@link #PRIORITIZE_AMONG} on a shard: only jobs of partitions it holds. */
    static final String PRIORITIZE_AMONG_FENCED = fenced(true, prioritizeAmong("job", "AND state = 'READY'"));

    /** Sets the priority of the waiting jobs among some ids (they keep it when they are released). */
    static final String PRIORITIZE_WAITING_AMONG = fenced(false, prioritizeAmong("job_waiting", ""));

    /** {@link #PRIORITIZE_WAITING_AMONG} on a shard: only jobs of partitions it holds. */
    static final String PRIORITIZE_WAITING_AMONG_FENCED = fenced(true, prioritizeAmong("job_waiting", ""));

    private static String deleteFinishedAmong() {
        return """
                DELETE FROM ${schema}.job_finished WHERE id = ANY(CAST(:ids AS bigint[])) AND state = :state %s
                RETURNING task
                """;
    }

    private static String rescheduleAmong() {
        return """
                UPDATE ${schema}.job
                SET schedule_time = coalesce(CAST(:at AS timestamptz), now()),
                    delay_tolerance_deadline = coalesce(CAST(:at AS timestamptz), now())
                                               + (delay_tolerance_deadline - schedule_time)
                WHERE id = ANY(CAST(:ids AS bigint[])) AND state = 'READY' %s
                RETURNING task
                """;
    }

    private static String prioritizeAmong(String table, String state) {
        return """
                UPDATE ${schema}.%s SET priority = :priority
                WHERE id = ANY(CAST(:ids AS bigint[])) AND priority <> :priority %s %%s
                RETURNING task
                """.formatted(table, state);
    }

    /** A statement with a {@code %s} where a shard's fence goes: on a shard, only jobs of partitions it holds. */
    private static String fenced(boolean shard, String template) {
        return shard ? "WITH " + HELD + "\n" + template.formatted("AND partition IN (SELECT partition FROM held)")
                : template.formatted("");
    }

    /** The most recent failures of a task; job_finished_failed_idx (V9, failed rows only) serves it. */
    public static final String RECENT_FAILURES = """
            SELECT id, attempt, last_error, finished_at
            FROM ${schema}.job_finished
            WHERE task = :task AND state = 'FAILED'
            ORDER BY finished_at DESC
            LIMIT :limit
            """;

    /**
     * VACUUMs the active-job table, skipping it when another VACUUM holds it (many nodes may run
     * it at once). No ANALYZE: analyzing the small, churning table every 10 s doubled the claim's
     * time at 2,000 jobs/s (0.45 → 0.92 ms; p99 start latency 3.3 → 5.7 ms); autoanalyze keeps the
     * statistics (the table's threshold is 10,000 changed rows). VACUUM cannot run inside a
     * transaction block.
     */
    static final String VACUUM_ACTIVE_JOBS = """
            VACUUM (SKIP_LOCKED) ${schema}.job
            """;

    /**
     * {@link #VACUUM_ACTIVE_JOBS} with fresh statistics, after a partition's jobs left the table: the
     * dead rows of a move would otherwise bloat it until autovacuum came, and the planner would
     * go on believing in rows that are gone.
     */
    static final String VACUUM_ANALYZE_ACTIVE_JOBS = """
            VACUUM (ANALYZE, SKIP_LOCKED) ${schema}.job
            """;

    /** One job by id, active or finished. */
    /**
     * A finished job as {@link #FIND} reads it (rows of {@code job_finished AS f}, the WHERE clause
     * added), with its result: the one recorded by the claim that completed it (its lease epoch; no
     * epoch: recorded before version 20), none otherwise.
     */
    private static final String FINISHED = """
            SELECT f.id, f.task, f.state, f.priority, CAST(f.payload AS text) AS payload, CAST(f.headers AS text) AS headers,
                   f.schedule_time, f.delay_tolerance_deadline, f.attempt, f.max_attempts, f.lease_owner,
                   CAST(NULL AS timestamptz) AS expected_status_change_time, f.dedup_key, false AS rerun_requested,
                   false AS cancel_requested, f.last_error, f.created_at, f.started_at, f.finished_at, f.progress,
                   f.partition,
                   (SELECT CAST(r.result AS text) FROM ${schema}.job_result AS r
                    WHERE r.id = f.id AND f.state = 'COMPLETED' AND (r.lease_epoch IS NULL OR r.lease_epoch = f.lease_epoch))
                   AS result
            FROM ${schema}.job_finished AS f
            """;

    static final String FIND = """
            SELECT id, task, state, priority, CAST(payload AS text) AS payload, CAST(headers AS text) AS headers,
                   schedule_time, delay_tolerance_deadline, attempt, max_attempts, lease_owner,
                   expected_status_change_time, dedup_key, rerun_requested, cancel_requested, last_error,
                   created_at, started_at, CAST(NULL AS timestamptz) AS finished_at, progress, partition,
                   CAST(NULL AS text) AS result
            FROM ${schema}.job WHERE id = :id
            UNION ALL
            %s WHERE f.id = :id
            UNION ALL
            SELECT id, task, 'WAITING', priority, CAST(payload AS text), CAST(headers AS text),
                   coalesce(run_at, created_at), NULL, 0, max_attempts, NULL,
                   NULL, NULL, false, false, NULL, created_at, NULL, NULL, NULL, partition, NULL
            FROM ${schema}.job_waiting WHERE id = :id
            """.formatted(FINISHED);

    /** The finished jobs among some ids, as {@link #FIND} reads them. */
    static final String FIND_FINISHED = FINISHED + " WHERE f.id = ANY(CAST(:ids AS bigint[]))";

    /**
     * Marks an active job tracked, so that its end runs end_jobs (R__workflows.sql), which notifies
     * the callers awaiting it; a waiting job is tracked already. Returns a row when the job is active
     * or waiting, and the caller's awaiter is then noted. The mark holds a READY job's row for an
     * instant, and a claim that meets it then skips the job (SKIP LOCKED): the task's workers are
     * woken again at this statement's commit.
     */
    static final String AWAIT = """
            WITH marked AS (
                UPDATE ${schema}.job SET tracked = true WHERE id = :id AND NOT tracked RETURNING id, task, state
            ), woken AS (
                SELECT count(pg_notify(:channelPrefix || task, '')) AS n FROM marked WHERE state = 'READY'
            ), present AS (
                SELECT :id AS id FROM woken WHERE EXISTS (SELECT 1 FROM marked)
                    OR EXISTS (SELECT 1 FROM ${schema}.job WHERE id = :id)
                    OR EXISTS (SELECT 1 FROM ${schema}.job_waiting WHERE id = :id)
            )
            INSERT INTO ${schema}.job_awaiter (job_id) SELECT id FROM present
            ON CONFLICT (job_id) DO UPDATE SET since = excluded.since
            RETURNING job_id
            """;

    /** One page of a group of jobs: see R__job_listing.sql for its order, its filters and the indexes it walks. */
    static final String LIST = """
            SELECT * FROM ${schema}.search_jobs(:group, :task, :from, :to, :dedupKey, :error, CAST(:ids AS bigint[]),
                                                CAST(:matches AS jsonb), CAST(:tags AS text[]), :afterTime, :afterId,
                                                :limit)
            """;

    /** How many jobs a search matches (R__job_listing.sql). */
    static final String COUNT = """
            SELECT ${schema}.count_jobs(:group, :task, :from, :to, :dedupKey, :error, CAST(:ids AS bigint[]),
                                        CAST(:matches AS jsonb), CAST(:tags AS text[]))
            """;
}
