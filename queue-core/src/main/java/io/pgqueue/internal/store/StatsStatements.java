package io.pgqueue.internal.store;

/**
 * The SQL of the statistics: the one aggregate query over the job tables and the snapshot the
 * nodes share (table {@code stats_snapshot}, one row). {@code ${schema}} stands for the validated
 * queue schema.
 */
public final class StatsStatements {

    private StatsStatements() {
    }

    /**
     * Counts per task in one pass over the active-job table (its size is the live backlog, as
     * finished jobs leave it), plus the retained failures and the last minute's finishes from
     * job_finished through its (state, finished_at) index.
     */
    static final String SNAPSHOT = """
            WITH active AS (
                SELECT task,
                       count(*) FILTER (WHERE state = 'READY' AND schedule_time <= statement_timestamp()) AS ready,
                       count(*) FILTER (WHERE state = 'READY' AND schedule_time > statement_timestamp()) AS scheduled,
                       count(*) FILTER (WHERE state = 'STARTING') AS starting,
                       count(*) FILTER (WHERE state = 'RUNNING') AS running,
                       count(*) FILTER (WHERE state IN ('STARTING', 'RUNNING')
                                          AND expected_status_change_time < statement_timestamp()) AS stuck,
                       extract(epoch FROM statement_timestamp() - min(schedule_time)
                               FILTER (WHERE state = 'READY' AND schedule_time <= statement_timestamp())) AS lag
                FROM ${schema}.job
                GROUP BY task
            ), finished AS (
                SELECT task,
                       count(*) FILTER (WHERE state = 'FAILED') AS failed,
                       count(*) FILTER (WHERE state = 'COMPLETED'
                                          AND finished_at > statement_timestamp() - interval '1 minute')
                           AS completed_last_minute,
                       count(*) FILTER (WHERE state = 'FAILED'
                                          AND finished_at > statement_timestamp() - interval '1 minute')
                           AS failed_last_minute
                FROM ${schema}.job_finished
                -- Each branch a range of job_finished_retention_idx: finished_at alone would leave
                -- no index to use and read every retained row on every poll.
                WHERE state = 'FAILED'
                   OR (state = 'COMPLETED' AND finished_at > statement_timestamp() - interval '1 minute')
                GROUP BY task
            ), paused AS (
                -- A paused task shows as paused before it has jobs, too.
                SELECT task FROM ${schema}.task_control WHERE paused
            )
            SELECT coalesce(a.task, f.task, p.task) AS task,
                   coalesce(a.ready, 0) AS ready, coalesce(a.scheduled, 0) AS scheduled,
                   coalesce(a.starting, 0) AS starting, coalesce(a.running, 0) AS running,
                   coalesce(a.stuck, 0) AS stuck, coalesce(a.lag, 0) AS lag,
                   coalesce(f.failed, 0) AS failed, coalesce(f.completed_last_minute, 0) AS completed_last_minute,
                   coalesce(f.failed_last_minute, 0) AS failed_last_minute,
                   p.task IS NOT NULL AS paused
            FROM active a
            FULL JOIN finished f ON f.task = a.task
            FULL JOIN paused p ON p.task = coalesce(a.task, f.task)
            ORDER BY 1
            """;

    /** The stored snapshot: its age (database clock), the count's duration, and its rows. */
    static final String SHARED = """
            SELECT extract(epoch FROM clock_timestamp() - s.taken_at) * 1000 AS age_ms, s.took_ms, x.*
            FROM ${schema}.stats_snapshot AS s
            LEFT JOIN LATERAL jsonb_to_recordset(s.tasks) AS x(task text, ready bigint, scheduled bigint,
                    starting bigint, running bigint, stuck bigint, lag double precision, failed bigint,
                    completed_last_minute bigint, failed_last_minute bigint, paused boolean) ON true
            """;

    /**
     * Takes the stored snapshot's row lock, unless another node holds it: that node is counting,
     * and this one reads the previous snapshot instead of counting too.
     */
    static final String LOCK_SHARED = """
            SELECT 1 FROM ${schema}.stats_snapshot FOR UPDATE SKIP LOCKED
            """;

    /** Takes the stored snapshot's row lock, waiting for a node that is counting. */
    static final String WAIT_FOR_SHARED = """
            SELECT 1 FROM ${schema}.stats_snapshot FOR UPDATE
            """;

    /**
     * Counts and stores the result as the shared snapshot, taken when the statement began. The
     * count is {@link #SNAPSHOT} itself, placed in the first CTE, so that it is written once.
     */
    static final String COUNT_AND_STORE = """
            WITH counted AS (
            %s
            ), stored AS (
                UPDATE ${schema}.stats_snapshot
                SET taken_at = statement_timestamp(),
                    tasks = (SELECT coalesce(jsonb_agg(to_jsonb(c) ORDER BY c.task), '[]') FROM counted AS c)
            )
            SELECT * FROM counted ORDER BY task
            """.formatted(SNAPSHOT);

    /**
     * Stores how long the last count ran, also when it failed (past the statement timeout, say):
     * it sets how often the nodes count again.
     */
    /**
     * How long the oldest transaction of the queue's database that holds back cleanup (it has a
     * snapshot, {@code backend_xmin}) has been open, in seconds; 0 when there is none. While it
     * stays open VACUUM cannot remove the dead rows of the job table, and claims slow down.
     */
    static final String OLDEST_TRANSACTION = """
            SELECT coalesce(extract(epoch FROM clock_timestamp() - min(xact_start)), 0)
            FROM pg_stat_activity
            WHERE datname = current_database() AND backend_xmin IS NOT NULL AND pid <> pg_backend_pid()
            """;

    static final String STORE_DURATION = """
            UPDATE ${schema}.stats_snapshot SET took_ms = ?
            """;

    /** Puts the row back if someone deleted it; the nodes' locks and updates need it. */
    static final String RESTORE_SHARED = """
            INSERT INTO ${schema}.stats_snapshot (singleton) VALUES (true) ON CONFLICT (singleton) DO NOTHING
            """;

    /** Running workflows (workflow_state_idx) and the cumulative ends per state. */
    /**
     * Jobs of durable handlers suspended now: sleeping (a sleep step whose end is ahead, the job's
     * current step) or waiting for a signal (an unresolved signal wait); each read through its partial
     * index of job_step (V32), which holds only sleeps and waits.
     */
    static final String SUSPENDED_COUNTS = """
            SELECT 'sleep' AS reason, count(DISTINCT s.job_id) AS jobs
            FROM ${schema}.job_step AS s JOIN ${schema}.job AS j ON j.id = s.job_id
            WHERE s.kind = 'SLEEP' AND s.wake_at > statement_timestamp() AND j.state = 'READY'
            UNION ALL
            SELECT 'signal', count(DISTINCT s.job_id)
            FROM ${schema}.job_step AS s JOIN ${schema}.job AS j ON j.id = s.job_id
            WHERE s.kind = 'SIGNAL' AND s.resolved IS NULL AND s.seq >= 0 AND j.state = 'READY'
            """;

    static final String WORKFLOW_COUNTS = """
            SELECT 'RUNNING' AS state, count(*) AS workflows FROM ${schema}.workflow WHERE state = 'RUNNING'
            UNION ALL
            SELECT state, workflows FROM ${schema}.workflow_total
            """;
}
