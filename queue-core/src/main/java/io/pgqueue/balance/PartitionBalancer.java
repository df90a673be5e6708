package io.pgqueue.balance;

import java.util.List;
import java.util.Optional;

/**
 * A node's partition balancer as operators steer and inspect it ({@code PgQueue.balancer()}): what it
 * has done, who runs it, the shards it drains and the decisions the installation recorded.
 */
public interface PartitionBalancer extends BalancerStatus {

    /**
     * Starts or stops draining a shard: the balancer moves all its partitions off it, one per round
     * at most, and none onto it.
     * @param shard the shard
     * @param draining whether to drain it
     * @throws io.pgqueue.shard.ShardException if there is no such shard, or the queue is unsharded
     */
    void drain(String shard, boolean draining);

    /** @return whether this node may run the balancer */
    boolean enabled();

    /** @return moves this node decided that did not happen */
    long failedMoves();

    /** @return how the balancer decides */
    BalancerSettings settings();

    /** @return the node that runs the balancer now, if one holds its lease */
    Optional<BalancerLeader> leader();

    /** @return the shards being drained */
    List<String> draining();

    /**
     * @param limit the most decisions to return
     * @return the latest decisions of any node, newest first
     */
    List<RecordedDecision> recentDecisions(int limit);
}
