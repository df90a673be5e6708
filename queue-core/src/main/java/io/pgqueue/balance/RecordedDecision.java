package io.pgqueue.balance;

import java.time.Instant;

/**
 * A balancer decision as the installation records it (table {@code balancer_decision}), with how the
 * move it decided ended.
 * @param id its id
 * @param decidedAt when it was decided
 * @param node the node that decided it
 * @param reason why ({@code DRAIN}, {@code OVERLOAD}, {@code GINI})
 * @param partition the partition
 * @param source the shard it left
 * @param target the shard it went to
 * @param weight its weight (jobs per second)
 * @param giniBefore the Gini index of the shard loads before
 * @param giniAfter the Gini index the move led to
 * @param outcome {@code MOVED}, {@code FAILED}, or {@code null} while it runs
 * @param error why it failed, or {@code null}
 * @param finishedAt when it ended, or {@code null}
 */
public record RecordedDecision(long id, Instant decidedAt, String node, String reason, int partition, String source,
        String target, double weight, double giniBefore, double giniAfter, String outcome, String error,
        Instant finishedAt) {
}
