package io.pgqueue.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import io.pgqueue.PgQueue;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.balance.BalancerMeterBinder;
import io.pgqueue.observe.MessageQueueMeters;
import io.pgqueue.observe.MicrometerQueueEvents;
import io.pgqueue.observe.QueueMeterBinder;
import io.pgqueue.observe.QueueStatistics;
import io.pgqueue.shard.ShardLayout;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Publishes pgqueue's metrics to Micrometer: counters and timers from the queue's events, and a
 * {@link QueueMeterBinder} that Boot binds to the registry, whose gauges read the cached aggregate
 * statistics and the pools' in-memory state, so a scrape never queries the database.
 */
@AutoConfiguration(before = QueueAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
public final class QueueMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    MicrometerQueueEvents queueMicrometerEvents(MeterRegistry registry) {
        return new MicrometerQueueEvents(registry);
    }

    /**
     * The queue's beans are looked up rather than required: this configuration comes before
     * {@link QueueAutoConfiguration}, which backs off without a DataSource or with
     * {@code pgqueue.enabled=false}, and the workers may be switched off.
     */
    @Bean
    @ConditionalOnMissingBean
    QueueMeterBinder queueMeterBinder(ObjectProvider<TaskRegistry> tasks, ObjectProvider<QueueStatistics> stats,
            ObjectProvider<QueueWorkerNode> workers, ObjectProvider<PgQueue> queue) {
        QueueMeterBinder binder = QueueMeterBinder.NONE;
        TaskRegistry registered = tasks.getIfAvailable();
        if (registered == null) {
            return binder;
        }
        QueueStatistics poller = stats.getIfAvailable();
        if (poller != null) {
            binder = binder.withTasks(registered.all().stream().map(TaskDefinition::name).toList(), poller::latest)
                .withLimits(registered.all());
            PgQueue pgQueue = queue.getIfAvailable();
            ShardLayout layout = pgQueue == null ? null : pgQueue.admin().shards();
            if (layout != null && layout.sharded()) {
                binder = binder.withShards(layout.names());
            }
        }
        QueueWorkerNode lifecycle = workers.getIfAvailable();
        if (lifecycle != null) {
            binder = binder.withPools(lifecycle.poolTasks(), lifecycle::pools);
        }
        return binder;
    }

    /** The meters of message queues: this node's sends, receives and deletes, every queue's counts. */
    @Bean
    @ConditionalOnMissingBean
    MessageQueueMeters queueMessageMeters(MeterRegistry registry) {
        return new MessageQueueMeters(registry);
    }

    /** The partition balancer's meters, on a sharded queue. */
    @Bean
    @ConditionalOnMissingBean
    BalancerMeterBinder queueBalancerMeterBinder(ObjectProvider<PgQueue> queue) {
        PgQueue pgQueue = queue.getIfAvailable();
        return new BalancerMeterBinder(pgQueue == null ? null : pgQueue.balancer());
    }
}
