package io.pgqueue.internal.store;

/**
 * The SQL of the operator actions' record (table {@code queue_action}, V24), one named statement
 * per operation. {@code ${schema}} stands for the validated queue schema.
 */
final class ActionStatements {

    private ActionStatements() {
    }

    private static final String COLUMNS = """
            id, actor, action, target, state, matched, acted, skipped, node, message, started_at, updated_at, finished_at
            """;

    /** Records an action, running (a bulk action) or done. */
    static final String INSERT = """
            INSERT INTO ${schema}.queue_action (actor, action, target, state, matched, acted, node, message, finished_at)
            VALUES (:actor, :action, :target, :state, :matched, :acted, :node, :message,
                    CASE WHEN :state = 'RUNNING' THEN NULL ELSE now() END)
            RETURNING %s
            """.formatted(COLUMNS);

    /** Adds a batch's counts to a running action. */
    static final String PROGRESS = """
            UPDATE ${schema}.queue_action SET acted = acted + :acted, skipped = skipped + :skipped, updated_at = now()
            WHERE id = :id AND state = 'RUNNING'
            """;

    /** Ends a running action. */
    static final String FINISH = """
            UPDATE ${schema}.queue_action SET state = :state, message = :message, updated_at = now(), finished_at = now()
            WHERE id = :id AND state = 'RUNNING'
            """;

    /** One action. */
    static final String FIND = "SELECT " + COLUMNS + " FROM ${schema}.queue_action WHERE id = :id";

    /** The newest actions first, before an id (or from the newest). */
    static final String LIST = """
            SELECT %s FROM ${schema}.queue_action
            WHERE CAST(:before AS bigint) IS NULL OR id < :before
            ORDER BY id DESC LIMIT :limit
            """.formatted(COLUMNS);
}
