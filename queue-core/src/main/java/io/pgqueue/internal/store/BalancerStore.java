package io.pgqueue.internal.store;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import io.pgqueue.balance.BalancerLeader;
import io.pgqueue.balance.RecordedDecision;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;

/**
 * The partition balancer's state on the main shard: job counts per partition, the leader's lease,
 * the decisions and the drained shards. Internal API; its SQL is in {@link BalancerStatements}.
 */
public final class BalancerStore {

    private final NamedParameterJdbcTemplate jdbc;

    private final String schema;

    /**
     * Creates a store.
     * @param dataSource the main shard's database
     * @param config the queue's settings
     */
    public BalancerStore(DataSource dataSource, QueueConfig config) {
        this.jdbc = StoreSupport.jdbc(dataSource, config);
        this.schema = config.schema();
    }

    private String sql(String statement) {
        return StoreSupport.sql(statement, this.schema);
    }

    /**
     * Adds job counts to the current bucket.
     * @param counts jobs per partition (partitions without jobs left out)
     * @param bucket the bucket's length
     */
    public void addLoad(Map<Integer, Long> counts, Duration bucket) {
        if (counts.isEmpty()) {
            return;
        }
        List<Integer> partitions = new ArrayList<>(counts.keySet());
        List<Long> jobs = partitions.stream().map(counts::get).toList();
        this.jdbc.update(sql(BalancerStatements.ADD_LOAD), new MapSqlParameterSource("partitions", SqlArrays.ints(partitions))
            .addValue("jobs", SqlArrays.bigints(jobs))
            .addValue("bucketSeconds", Math.max(1, bucket.toSeconds())));
    }

    /**
     * @param window how far back
     * @return the jobs each partition brought within the window (partitions without jobs left out)
     */
    public Map<Integer, Long> loads(Duration window) {
        Map<Integer, Long> loads = new HashMap<>();
        this.jdbc.query(sql(BalancerStatements.LOADS), new MapSqlParameterSource("windowMillis", window.toMillis()),
                rs -> {
                    loads.put(rs.getInt("partition"), rs.getLong("jobs"));
                });
        return loads;
    }

    /**
     * Forgets job counts older than the window, and decisions older than their retention.
     * @param window the load window
     * @param decisions how long decisions are kept
     */
    public void prune(Duration window, Duration decisions) {
        this.jdbc.update(sql(BalancerStatements.PRUNE_LOAD), new MapSqlParameterSource("windowMillis", window.toMillis()));
        this.jdbc.update(sql(BalancerStatements.PRUNE_DECISIONS),
                new MapSqlParameterSource("retentionMillis", decisions.toMillis()));
    }

    /**
     * Takes or renews the balancer's lease.
     * @param node this node
     * @param lease for how long
     * @return whether this node holds it now
     */
    public boolean lead(String node, Duration lease) {
        return !this.jdbc.queryForList(sql(BalancerStatements.LEAD), new MapSqlParameterSource("node", node)
            .addValue("leaseMillis", lease.toMillis()), String.class).isEmpty();
    }

    /**
     * Gives the lease up, if this node holds it.
     * @param node this node
     */
    public void resign(String node) {
        this.jdbc.update(sql(BalancerStatements.RESIGN), new MapSqlParameterSource("node", node));
    }

    /** @return the lease's holder, if any */
    public Optional<BalancerLeader> leader() {
        return this.jdbc.query(sql(BalancerStatements.LEADER), Map.of(), (rs, row) -> new BalancerLeader(rs.getString("node"),
                rs.getTimestamp("until").toInstant())).stream().findFirst();
    }

    /**
     * Records a decided move.
     * @param node the deciding node
     * @param reason why
     * @param partition the partition
     * @param source the shard it leaves
     * @param target the shard it goes to
     * @param weight its weight
     * @param giniBefore the Gini index before
     * @param giniAfter the Gini index it leads to
     * @return the decision's id
     */
    public long recordDecision(String node, String reason, int partition, String source, String target, double weight,
            double giniBefore, double giniAfter) {
        return this.jdbc.queryForObject(sql(BalancerStatements.RECORD_DECISION), new MapSqlParameterSource("node", node)
            .addValue("reason", reason)
            .addValue("partition", partition)
            .addValue("source", source)
            .addValue("target", target)
            .addValue("weight", weight)
            .addValue("giniBefore", giniBefore)
            .addValue("giniAfter", giniAfter), Long.class);
    }

    /**
     * Records how a move ended.
     * @param id the decision
     * @param moved whether the partition moved
     * @param error why not, or {@code null}
     */
    public void finishDecision(long id, boolean moved, String error) {
        this.jdbc.update(sql(BalancerStatements.FINISH_DECISION), new MapSqlParameterSource("id", id)
            .addValue("outcome", moved ? "MOVED" : "FAILED")
            .addValue("error", error));
    }

    /**
     * @param limit how many
     * @return the latest decisions, newest first
     */
    public List<RecordedDecision> recentDecisions(int limit) {
        return this.jdbc.query(sql(BalancerStatements.RECENT_DECISIONS), new MapSqlParameterSource("limit", limit),
                (rs, row) -> new RecordedDecision(rs.getLong("id"), instant(rs.getTimestamp("decided_at")), rs.getString("node"),
                        rs.getString("reason"), rs.getInt("partition"), rs.getString("source"), rs.getString("target"),
                        rs.getDouble("weight"), rs.getDouble("gini_before"), rs.getDouble("gini_after"),
                        rs.getString("outcome"), rs.getString("error"), instant(rs.getTimestamp("finished_at"))));
    }

    /**
     * @param window how far back
     * @return the partitions moved (or moving) within the window, each with when, oldest first
     */
    public List<Map.Entry<Integer, Instant>> movesSince(Duration window) {
        return this.jdbc.query(sql(BalancerStatements.MOVES_SINCE), new MapSqlParameterSource("windowMillis",
                window.toMillis()), (rs, row) -> Map.entry(rs.getInt("partition"), rs.getTimestamp("decided_at").toInstant()));
    }

    /**
     * Starts or stops draining a shard.
     * @param shard the shard
     * @param draining whether to drain it
     * @return whether there is such a shard
     */
    public boolean setDraining(String shard, boolean draining) {
        return this.jdbc.update(sql(BalancerStatements.SET_DRAINING), new MapSqlParameterSource("name", shard)
            .addValue("draining", draining)) > 0;
    }

    /** @return the shards being drained */
    public List<String> draining() {
        return this.jdbc.queryForList(sql(BalancerStatements.DRAINING), Map.of(), String.class);
    }

    private static Instant instant(Timestamp timestamp) {
        return timestamp == null ? null : timestamp.toInstant();
    }
}
