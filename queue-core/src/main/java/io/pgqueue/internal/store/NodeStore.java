package io.pgqueue.internal.store;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

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
        this.jdbc.update(this.register, new MapSqlParameterSource("id", id).addValue("host", host).addValue("pools", poolsJson));
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
    public List<Node> list() {
        return this.jdbc.query(this.list, (rs, row) -> new Node(rs.getString("id"), rs.getString("host"),
                StoreSupport.instant(rs, "started_at"), StoreSupport.instant(rs, "last_heartbeat"), rs.getString("pools")));
    }


    /**
     * A registered node.
     *
     * @param id the node id
     * @param host the host name
     * @param startedAt when it registered
     * @param lastHeartbeat when it last reported
     * @param pools its pools as JSON
     */
    public record Node(String id, String host, Instant startedAt, Instant lastHeartbeat, String pools) {

        private static final JsonMapper JSON = JsonMapper.builder().build();

        /**
         * The node as the {@code queues} endpoint and the console show it, its pools as JSON rather
         * than as text.
         * @return its id, host, start, last heartbeat and pools (per pool its tasks and the most jobs it
         * holds); no pools when their JSON cannot be read
         */
        public Map<String, Object> describe() {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("id", this.id);
            body.put("host", this.host);
            body.put("startedAt", this.startedAt);
            body.put("lastHeartbeat", this.lastHeartbeat);
            Object parsed = Map.of();
            if (this.pools != null) {
                try {
                    parsed = JSON.readValue(this.pools, Object.class);
                }
                catch (JacksonException ex) {
                    // Left without its pools.
                }
            }
            body.put("pools", parsed);
            return body;
        }
    }
}
