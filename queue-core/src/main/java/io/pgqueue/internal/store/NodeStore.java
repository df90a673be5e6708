package io.pgqueue.internal.store;

import java.time.Duration;
import java.util.List;

import javax.sql.DataSource;

import io.pgqueue.NodeInfo;
import io.pgqueue.QueueConfig;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;

/**
 * The node registry: which worker nodes run, since when, with which pools, and when they last
 * reported. Internal API; its SQL is in {@link NodeStatements}.
 */
public final class NodeStore {

    private final NamedParameterJdbcTemplate jdbc;

    private final String register;
    private final String heartbeat;
    private final String remove;
    private final String removeSilent;
    private final String list;

    /**
     * Creates a store.
     * @param dataSource the queue's database
     * @param config the queue's settings
     */
    public NodeStore(DataSource dataSource, QueueConfig config) {
        this.jdbc = StoreSupport.jdbc(dataSource, config);
        this.register = StoreSupport.sql(NodeStatements.REGISTER, config);
        this.heartbeat = StoreSupport.sql(NodeStatements.HEARTBEAT, config);
        this.remove = StoreSupport.sql(NodeStatements.REMOVE, config);
        this.removeSilent = StoreSupport.sql(NodeStatements.REMOVE_SILENT, config);
        this.list = StoreSupport.sql(NodeStatements.LIST, config);
    }

    /**
     * Registers a node.
     * @param id the node id
     * @param host the host name
     * @param poolsJson the node's pools as JSON
     */
    public void register(String id, String host, String poolsJson) {
        this.jdbc.update(this.register, new MapSqlParameterSource("id", id).addValue("host", host).addValue("pools", poolsJson)
            .addValue("schemaVersion", Integer.parseInt(SchemaStore.LATEST_VERSION)));
    }

    /**
     * Records that a node is alive.
     * @param id the node id
     * @return whether the node was registered
     */
    public boolean heartbeat(String id) {
        return this.jdbc.update(this.heartbeat, new MapSqlParameterSource("id", id)) == 1;
    }

    /**
     * Removes a node.
     * @param id the node id
     */
    public void remove(String id) {
        this.jdbc.update(this.remove, new MapSqlParameterSource("id", id));
    }

    /**
     * Removes nodes that have not reported for a while.
     * @param silence how long without a heartbeat
     * @return the number of nodes removed
     */
    public int removeSilent(Duration silence) {
        return this.jdbc.update(this.removeSilent, new MapSqlParameterSource("silenceMillis", silence.toMillis()));
    }

    /**
     * Lists the registered nodes.
     * @return the nodes, oldest first
     */
    public List<NodeInfo> list() {
        return this.jdbc.query(this.list, (rs, row) -> new NodeInfo(rs.getString("id"), rs.getString("host"),
                StoreSupport.instant(rs, "started_at"), StoreSupport.instant(rs, "last_heartbeat"), rs.getString("pools"),
                (Integer) rs.getObject("schema_version")));
    }
}
