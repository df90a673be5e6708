package io.pgqueue.balance;

import java.time.Instant;

/**
 * A move the balancer decided.
 * @param at when
 * @param reason why
 * @param partition the partition
 * @param from the shard it leaves
 * @param to the shard it goes to
 * @param weight its weight
 * @param giniBefore the Gini index of the shard loads before the move
 * @param giniAfter the Gini index the move leads to, by the same weights
 */
public record BalancerDecision(Instant at, MoveReason reason, int partition, String from, String to, double weight,
        double giniBefore, double giniAfter) {
}
