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

    /** The paused tasks; every node reads them once per poll interval. */
    static final String PAUSED = """
            SELECT task FROM ${schema}.task_control WHERE paused
            """;
}
