/**
 * The partition balancer: decides which partition moves from which shard to which, from the load
 * each partition brings and each shard's overload signal, without oscillating (median filter,
 * Gini index with hysteresis, friction). The decisions are pure functions of what it is shown, so
 * the same code runs against a simulated clock and simulated shards.
 */
package io.pgqueue.balance;

import io.pgqueue.internal.balance.Gini;
