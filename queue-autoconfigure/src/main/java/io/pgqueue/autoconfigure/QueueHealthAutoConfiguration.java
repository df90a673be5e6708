package io.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.List;

import io.pgqueue.TaskRegistry;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.observe.QueueStatistics;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.annotation.Bean;

/**
 * The {@code queue} health indicator ({@code management.health.queue.enabled}).
 */
@AutoConfiguration(after = QueueAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(QueueStatistics.class)
@ConditionalOnEnabledHealthIndicator("queue")
public final class QueueHealthAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean(name = "queueHealthIndicator")
    QueueHealthIndicator queueHealthIndicator(QueueStatistics stats, QueueProperties properties,
            ObjectProvider<QueueWorkerNode> workers, ObjectProvider<MessageQueues> messages,
            ObjectProvider<TaskRegistry> tasks) {
        QueueProperties.Health health = properties.getHealth();
        QueueSettingsMapper.require(health.getMaxStuckLeases() >= 0, "pgqueue.health.max-stuck-leases",
                health.getMaxStuckLeases(), "must not be negative");
        QueueSettingsMapper.positive(health.getMaxLag(), "pgqueue.health.max-lag");
        QueueSettingsMapper.positive(health.getMaxTransactionAge(), "pgqueue.health.max-transaction-age");
        QueueSettingsMapper.require(health.getStatus() != null && !health.getStatus().isBlank(), "pgqueue.health.status",
                health.getStatus(), "must name a health status such as DOWN or OUT_OF_SERVICE");
        QueueWorkerNode lifecycle = workers.getIfAvailable();
        return new QueueHealthIndicator(stats, health.getMaxStuckLeases(), properties.getRescue().getInterval(),
                task -> {
                    QueueProperties.Task override = properties.getTasks().get(task);
                    Duration lag = override == null ? null : override.getMaxLag();
                    return lag != null ? lag : health.getMaxLag();
                }, health.getMaxTransactionAge(), new Status(health.getStatus().trim().toUpperCase(java.util.Locale.ROOT)),
                lifecycle == null ? List::of : lifecycle::pools, () -> {
                    MessageQueues queues = messages.getIfAvailable();
                    return queues == null ? java.util.Optional.empty() : queues.latestCounts();
                }, task -> {
                    TaskRegistry registry = tasks.getIfAvailable();
                    return registry == null ? java.util.Optional.empty() : registry.find(task);
                });
    }
}
