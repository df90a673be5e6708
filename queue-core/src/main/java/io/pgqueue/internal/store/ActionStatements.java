package io.pgqueue.internal.store;

/**
 * The SQL of the operator actions' record (table {@code queue_action}, V24), one named statement
 * per operation. {@code ${schema}} stands for the validated queue schema.
 */
final class ActionStatements {

    private ActionStatements() {
    }

    /** How long a RUNNING action may go untouched by its node before reads call it stopped. */
    static final String STALE = "5 minutes";

    private static final String COLUMNS = """
            id, actor, action, target, state, matched, acted, skipped, node, message, started_at, updated_at, finished_at
            """;

    /**
     * The columns as reads show them: a RUNNING action whose node has not touched it for
     * {@link #STALE} (the node died) reads STOPPED, saying so.
     */
    private static final String READ_COLUMNS = """
            id, actor, action, target,
            CASE WHEN state = 'RUNNING' AND updated_at < now() - interval '%1$s' THEN 'STOPPED' ELSE state END AS state,
            matched, acted, skipped, node,
            CASE WHEN state = 'RUNNING' AND updated_at < now() - interval '%1$s'
                 THEN 'No sign of its node since ' || to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')
                      || ' UTC: it stopped. Running the action again acts on the jobs left'
                 ELSE message END AS message,
            started_at, updated_at, finished_at
            """.formatted(STALE);

    /** Touches the actions a node runs or will run, so that reads know the node is alive. */
    static final String TOUCH = """
            UPDATE ${schema}.queue_action SET updated_at = now()
            WHERE id = ANY(CAST(:ids AS bigint[])) AND state = 'RUNNING'
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
    static final String FIND = "SELECT " + READ_COLUMNS + " FROM ${schema}.queue_action WHERE id = :id";

    /** The newest actions first, before an id (or from the newest). */
    static final String LIST = """
            SELECT %s FROM ${schema}.queue_action
            WHERE CAST(:before AS bigint) IS NULL OR id < :before
            ORDER BY id DESC LIMIT :limit
            """.formatted(READ_COLUMNS);
}
