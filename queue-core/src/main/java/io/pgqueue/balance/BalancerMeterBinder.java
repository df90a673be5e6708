package io.pgqueue.balance;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.pgqueue.observe.QueueMeterNames;

/**
 * The balancer's meters ({@link QueueMeterNames#BALANCER_GINI}, {@link QueueMeterNames#BALANCER_MOVES},
 * {@link QueueMeterNames#BALANCER_BLOCKED}, {@link QueueMeterNames#BALANCER_LEADER}), read from the
 * node's {@link BalancerStatus} without a query; nothing on an unsharded queue.
 */
public final class BalancerMeterBinder implements MeterBinder {

    private final BalancerStatus balancer;

    /**
     * @param balancer the node's balancer, or {@code null} (nothing to bind)
     */
    public BalancerMeterBinder(BalancerStatus balancer) {
        this.balancer = balancer;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        if (this.balancer == null || !this.balancer.sharded()) {
            return;
        }
        Gauge.builder(QueueMeterNames.BALANCER_GINI, this.balancer,
                service -> service.lastRound().map(BalancerRound::gini).orElse(Double.NaN))
            .description("Gini index of the shard loads at the balancer's last round on this node")
            .register(registry);
        Gauge.builder(QueueMeterNames.BALANCER_LEADER, this.balancer, service -> service.leading() ? 1 : 0)
            .description("1 while this node runs the partition balancer")
            .register(registry);
        for (MoveReason reason : MoveReason.values()) {
            FunctionCounter.builder(QueueMeterNames.BALANCER_MOVES, this.balancer, service -> service.moves().get(reason))
                .description("Partitions the balancer moved from this node")
                .tag(QueueMeterNames.TAG_REASON, reason.name())
                .register(registry);
        }
        FunctionCounter.builder(QueueMeterNames.BALANCER_BLOCKED, this.balancer, BalancerStatus::blockedByFriction)
            .description("Moves the balancer passed over because the partition moved too often (friction)")
            .register(registry);
    }
}
