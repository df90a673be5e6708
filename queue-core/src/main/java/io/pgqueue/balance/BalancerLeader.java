package io.pgqueue.balance;

import java.time.Instant;

/**
 * The lease of the node that runs the balancer.
 * @param node the node
 * @param until until when it holds it
 */
public record BalancerLeader(String node, Instant until) {
}
