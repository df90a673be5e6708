package io.pgqueue.internal.store;

/**
 * The SQL of the operator controls per task (table {@code task_control}), one named statement per
 * operation. {@code ${schema}} stands for the validated queue schema.
 */
public final class ControlStatements {

    private ControlStatements() {
    }

    /**
     * Pauses or resumes a task, reporting whether that changed its state. The scalar subquery in
     * RETURNING reads the statement's snapshot, taken before the upsert: the state before, or no
     * row (never paused) for a task seen for the first time.
     */
    static final String SET_PAUSED = """
            INSERT INTO ${schema}.task_control (task, paused) VALUES (:task, :paused)
            ON CONFLICT (task) DO UPDATE SET paused = excluded.paused, updated_at = now()
            RETURNING coalesce((SELECT paused FROM ${schema}.task_control WHERE task = :task), false) <> :paused AS changed
            """;

    /**
     * Writes the settings of declared tasks (table {@code task_definition}), which enqueue_job
     * reads, in key order so that nodes opening at once do not deadlock.
     */
    static final String DECLARE_TASKS = """
            INSERT INTO ${schema}.task_definition AS d (task, priority, max_attempts, delay_tolerance_ms, dedup_policy,
                                                        derives_dedup_key, grouped, derives_group, tags, encrypted,
                                                        max_payload_bytes, declared_by, declared_at)
            SELECT t.task, t.priority, t.max_attempts, t.tolerance_ms, t.policy, t.derives_key, t.grouped, t.derives_group,
                   CASE WHEN t.tags = '' THEN '{}' ELSE string_to_array(t.tags, ',') END, t.encrypted, :maxPayloadBytes,
                   :node, now()
            FROM unnest(CAST(:tasks AS text[]), CAST(:priorities AS integer[]), CAST(:maxAttempts AS integer[]),
                        CAST(:tolerances AS bigint[]), CAST(:policies AS text[]), CAST(:derivesKeys AS boolean[]),
                        CAST(:grouped AS boolean[]), CAST(:derivesGroups AS boolean[]), CAST(:tags AS text[]),
                        CAST(:encrypted AS boolean[]))
                 AS t(task, priority, max_attempts, tolerance_ms, policy, derives_key, grouped, derives_group, tags, encrypted)
            ORDER BY t.task
            ON CONFLICT (task) DO UPDATE
            SET priority = excluded.priority, max_attempts = excluded.max_attempts,
                delay_tolerance_ms = excluded.delay_tolerance_ms, dedup_policy = excluded.dedup_policy,
                derives_dedup_key = excluded.derives_dedup_key, grouped = excluded.grouped,
                derives_group = excluded.derives_group, tags = excluded.tags, encrypted = excluded.encrypted,
                max_payload_bytes = excluded.max_payload_bytes, declared_by = excluded.declared_by,
                declared_at = excluded.declared_at
            """;

    /** The paused tasks; every node reads them once per poll interval. */
    static final String PAUSED = """
            SELECT task FROM ${schema}.task_control WHERE paused
            """;
}
