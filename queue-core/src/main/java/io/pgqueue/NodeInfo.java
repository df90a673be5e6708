package io.pgqueue;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * A node of the installation as the node registry records it.
 *
 * @param id the node id
 * @param host the host name
 * @param startedAt when it registered
 * @param lastHeartbeat when it last reported
 * @param pools its pools as JSON
 * @param schemaVersion the schema version its release was built for, or {@code null} for a node
 * of a release that does not record it (before schema version 28)
 */
public record NodeInfo(String id, String host, Instant startedAt, Instant lastHeartbeat, String pools,
        Integer schemaVersion) {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /**
     * The node as the {@code queues} endpoint and the console show it, its pools as JSON rather
     * than as text.
     * @return its id, host, start, last heartbeat, schema version and pools (per pool its tasks and
     * the most jobs it holds); no pools when their JSON cannot be read
     */
    public Map<String, Object> describe() {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", this.id);
        body.put("host", this.host);
        body.put("startedAt", this.startedAt);
        body.put("lastHeartbeat", this.lastHeartbeat);
        body.put("schemaVersion", this.schemaVersion);
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
