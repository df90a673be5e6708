package io.pgqueue.autoconfigure;

import io.pgqueue.QueueAdmin;
import io.pgqueue.observe.QueueStatsPoller;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@code queues} Actuator endpoint, when Actuator is present and the endpoint is exposed.
 */
@AutoConfiguration(after = QueueAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(QueueAdmin.class)
@ConditionalOnAvailableEndpoint(QueueEndpoint.class)
public final class QueueEndpointAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    LocalDeadlineMisses queueLocalDeadlineMisses() {
        return new LocalDeadlineMisses();
    }

    @Bean
    @ConditionalOnMissingBean
    QueueEndpoint queueEndpoint(QueueAdmin admin, QueueStatsPoller stats, QueueTaskBindings tasks,
            ObjectProvider<QueueWorkersLifecycle> workers, LocalDeadlineMisses misses) {
        return new QueueEndpoint(admin, stats, tasks, workers, misses);
    }
}
