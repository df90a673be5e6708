package io.pgqueue.internal.store;

/**
 * The SQL of the schedules of recurring jobs (table {@code schedule}), one named statement per
 * operation. {@code ${schema}} stands for the validated queue schema. Every statement names times
 * explicitly (the scheduler's clock), never the database's {@code now()}, but for {@code updated_at}.
 */
public final class ScheduleStatements {

    private ScheduleStatements() {
    }

    /** The columns a schedule is read from, aliased {@code s}. */
    static final String COLUMNS = """
            s.name, s.task, s.cron, s.zone, CAST(s.payload AS text) AS payload, s.catch_up, s.source, s.next_fire,
            s.last_fire, s.last_job_id""";

    /** Every schedule with the state of its last job, active or finished. */
    static final String LIST = """
            SELECT %s,
                   coalesce(active.state, finished.state) AS last_state
            FROM ${schema}.schedule AS s
            LEFT JOIN ${schema}.job AS active ON active.id = s.last_job_id
            LEFT JOIN ${schema}.job_finished AS finished ON finished.id = s.last_job_id
            ORDER BY s.name
            """.formatted(COLUMNS);

    /** Puts a schedule configured on a node; an unchanged one is not written (no dead row per start). */
    static final String UPSERT_CONFIGURED = """
            INSERT INTO ${schema}.schedule AS s (name, task, cron, zone, payload, catch_up, source, next_fire)
            VALUES (:name, :task, :cron, :zone, CAST(:payload AS jsonb), :catchUp, 'CONFIG', :nextFire)
            ON CONFLICT (name) DO UPDATE
            SET task = excluded.task, cron = excluded.cron, zone = excluded.zone, payload = excluded.payload,
                catch_up = excluded.catch_up, source = 'CONFIG', updated_at = now(),
                -- The same slots: the next one stays, so a restart neither repeats nor skips one.
                next_fire = CASE WHEN (s.cron, s.zone) IS DISTINCT FROM (excluded.cron, excluded.zone)
                                 THEN excluded.next_fire ELSE s.next_fire END
            WHERE (s.task, s.cron, s.zone, s.payload, s.catch_up, s.source)
                  IS DISTINCT FROM (excluded.task, excluded.cron, excluded.zone, excluded.payload, excluded.catch_up, 'CONFIG')
            """;

    /** Deletes the configured schedules of a node's tasks that its settings no longer have. */
    static final String DELETE_UNCONFIGURED = """
            DELETE FROM ${schema}.schedule
            WHERE source = 'CONFIG' AND task = ANY(CAST(:tasks AS text[])) AND NOT (name = ANY(CAST(:names AS text[])))
            """;

    /** Adds or replaces a schedule at runtime; returns no row where a configured schedule has the name. */
    static final String PUT_RUNTIME = """
            INSERT INTO ${schema}.schedule AS s (name, task, cron, zone, payload, catch_up, source, next_fire)
            VALUES (:name, :task, :cron, :zone, CAST(:payload AS jsonb), :catchUp, 'RUNTIME', :nextFire)
            ON CONFLICT (name) DO UPDATE
            SET task = excluded.task, cron = excluded.cron, zone = excluded.zone, payload = excluded.payload,
                catch_up = excluded.catch_up, updated_at = now(),
                next_fire = CASE WHEN (s.cron, s.zone) IS DISTINCT FROM (excluded.cron, excluded.zone)
                                 THEN excluded.next_fire ELSE s.next_fire END
            WHERE s.source = 'RUNTIME'
            RETURNING s.name
            """;

    /** Removes a schedule added at runtime. */
    static final String REMOVE_RUNTIME = "DELETE FROM ${schema}.schedule WHERE name = :name AND source = 'RUNTIME'";

    /** Whether a schedule was configured or added at runtime. */
    static final String SOURCE = "SELECT source FROM ${schema}.schedule WHERE name = :name";

    /** Locks due schedules of the given tasks, skipping those another node is firing: each slot fires once with no leader. */
    static final String LOCK_DUE = """
            SELECT %s
            FROM ${schema}.schedule AS s
            WHERE s.next_fire <= :now AND s.task = ANY(CAST(:tasks AS text[]))
            ORDER BY s.next_fire
            LIMIT :limit
            FOR UPDATE SKIP LOCKED
            """.formatted(COLUMNS);

    /** Moves a fired schedule's next slot past now and records its last slot and job. */
    static final String FIRED = """
            UPDATE ${schema}.schedule
            SET next_fire = :nextFire, last_fire = coalesce(:lastFire, last_fire), last_job_id = coalesce(:lastJob, last_job_id),
                updated_at = now()
            WHERE name = :name
            """;

    /** Moves a schedule past a slot whose job could not be enqueued, if no node fired it meanwhile. */
    static final String SKIPPED = """
            UPDATE ${schema}.schedule SET next_fire = :nextFire, updated_at = now() WHERE name = :name AND next_fire = :slot
            """;

    /** When the next slot of the given tasks' schedules is due, for the scheduler's wait. */
    static final String NEXT_FIRE = """
            SELECT min(next_fire) AS next FROM ${schema}.schedule WHERE task = ANY(CAST(:tasks AS text[]))
            """;
}
