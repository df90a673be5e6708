package io.pgqueue.balance;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a round found and decided.
 * @param at when
 * @param loads the load of each shard
 * @param gini the Gini index of the loads (drained shards left out)
 * @param balancing whether balancing by Gini index is on (the hysteresis flag)
 * @param overloaded the overloaded shards
 * @param moves the moves decided
 * @param blockedByFriction moves that would have been made but for friction
 */
public record BalancerRound(Instant at, Map<String, Double> loads, double gini, boolean balancing, Set<String> overloaded,
        List<BalancerDecision> moves, int blockedByFriction) {
}
