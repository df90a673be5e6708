package io.pgqueue.internal.store;

/**
 * The SQL of the node registry (table {@code node}), one named statement per operation.
 * {@code ${schema}} stands for the validated queue schema.
 */
public final class NodeStatements {

    private NodeStatements() {
    }

    /**
     * Registers a node, or refreshes it when its id is already known (a node restarted with the
     * same id): its start time is the new start. It records the schema version its release was
     * built for.
     */
    static final String REGISTER = """
            INSERT INTO ${schema}.node (id, host, pools, schema_version)
            VALUES (:id, :host, CAST(:pools AS jsonb), :schemaVersion)
            ON CONFLICT (id) DO UPDATE SET host = excluded.host, pools = excluded.pools,
                schema_version = excluded.schema_version, started_at = now(), last_heartbeat = now()
            """;

    /** Records that a node is alive; no row when the node was removed meanwhile. */
    static final String HEARTBEAT = """
            UPDATE ${schema}.node SET last_heartbeat = now() WHERE id = :id
            """;

    /** Removes a node that stops. */
    static final String REMOVE = """
            DELETE FROM ${schema}.node WHERE id = :id
            """;

    /**
     * Removes the nodes silent for longer than a while: they vanished without deregistering
     * (killed, crashed). The database clock decides, so the nodes' clocks need not agree.
     */
    static final String REMOVE_SILENT = """
            DELETE FROM ${schema}.node WHERE last_heartbeat < now() - :silenceMillis * interval '1 millisecond'
            """;

    /** The registered nodes, oldest first. */
    static final String LIST = """
            SELECT id, host, started_at, last_heartbeat, CAST(pools AS text) AS pools, schema_version
            FROM ${schema}.node ORDER BY started_at
            """;
}
