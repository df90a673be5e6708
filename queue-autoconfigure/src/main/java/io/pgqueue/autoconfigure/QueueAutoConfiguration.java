package io.pgqueue.autoconfigure;

import javax.sql.DataSource;

import io.micrometer.observation.ObservationRegistry;
import io.pgqueue.QueueAdmin;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueConfig;
import io.pgqueue.TaskRegistry;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.observe.QueueStatsPoller;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.store.ControlStore;
import io.pgqueue.store.JobStore;
import io.pgqueue.store.NodeStore;
import io.pgqueue.store.StatsStore;
import io.pgqueue.worker.WorkerExecutors;
import io.pgqueue.worker.WorkerSettings;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.thread.Threading;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.task.VirtualThreadTaskExecutor;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * Auto-configuration of pgqueue: the {@link QueueClient} for enqueuing, the queue's schema
 * migration, the task types found on {@code @QueueTask} beans, and — unless
 * {@code pgqueue.workers.enabled=false} — the worker runtime that runs them.
 */
@AutoConfiguration(after = DataSourceAutoConfiguration.class,
        afterName = { "org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration",
                "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration" })
@ConditionalOnClass({ QueueClient.class, DataSource.class })
@ConditionalOnBean(DataSource.class)
@ConditionalOnBooleanProperty(name = "pgqueue.enabled", matchIfMissing = true)
@EnableConfigurationProperties(QueueProperties.class)
public final class QueueAutoConfiguration {

    /**
     * Returns the DataSource qualified {@link QueueDataSource}, or else the application's.
     */
    static DataSource queueDataSource(ObjectProvider<DataSource> dataSource, ObjectProvider<DataSource> queueDataSource) {
        DataSource qualified = queueDataSource.getIfUnique();
        if (qualified != null) {
            return qualified;
        }
        DataSource unique = dataSource.getIfUnique();
        if (unique == null) {
            throw new QueueConfigurationException("The application has several DataSources and pgqueue cannot tell "
                    + "which one to use", "Mark the queue's DataSource with @QueueDataSource, or one DataSource with "
                    + "@Primary.");
        }
        return unique;
    }

    @Bean
    @ConditionalOnMissingBean
    QueueConfig queueConfig(QueueProperties properties) {
        return QueueSettingsMapper.queueConfig(properties);
    }

    @Bean
    @ConditionalOnMissingBean
    QueueTaskBindings queueTaskBindings(ListableBeanFactory beans, QueueProperties properties) {
        return QueueTaskBindings.discover(beans, properties);
    }

    @Bean
    @ConditionalOnMissingBean
    TaskRegistry queueTaskRegistry(QueueTaskBindings bindings) {
        return bindings.registry();
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "pgqueue.flyway.enabled", matchIfMissing = true)
    QueueSchemaInitializer queueSchemaInitializer(ObjectProvider<DataSource> dataSource,
            @QueueDataSource ObjectProvider<DataSource> queueDataSource, QueueConfig config) {
        return new QueueSchemaInitializer(queueDataSource(dataSource, queueDataSource), config.schema());
    }

    @Bean
    @ConditionalOnMissingBean
    JobStore queueJobStore(ObjectProvider<DataSource> dataSource, @QueueDataSource ObjectProvider<DataSource> queueDataSource,
            QueueConfig config, ObjectProvider<QueueSchemaInitializer> schema) {
        // The tables must exist before anything uses the store.
        schema.ifAvailable(initializer -> { });
        return new JobStore(queueDataSource(dataSource, queueDataSource), config);
    }

    @Bean
    @ConditionalOnMissingBean
    QueueTelemetry queueTelemetry(ObjectProvider<QueueEvents> events, ObjectProvider<ObservationRegistry> observations) {
        return new QueueTelemetry(QueueEvents.of(events.orderedStream().toList()),
                observations.getIfAvailable(() -> ObservationRegistry.NOOP));
    }

    @Bean
    @ConditionalOnMissingBean
    QueueClient queueClient(JobStore store, QueueConfig config, TaskRegistry tasks, ObjectProvider<JsonMapper> jsonMapper,
            QueueTelemetry telemetry) {
        return new QueueClient(store, config, tasks, jsonMapper.getIfAvailable(() -> JsonMapper.builder().build()),
                telemetry);
    }

    @Bean(initMethod = "start", destroyMethod = "stop")
    @ConditionalOnMissingBean
    QueueStatsPoller queueStatsPoller(ObjectProvider<DataSource> dataSource,
            @QueueDataSource ObjectProvider<DataSource> queueDataSource, QueueConfig config, QueueProperties properties,
            ObjectProvider<QueueSchemaInitializer> schema) {
        schema.ifAvailable(initializer -> { });
        QueueSettingsMapper.positive(properties.getStats().getInterval(), "pgqueue.stats.interval");
        return new QueueStatsPoller(new StatsStore(queueDataSource(dataSource, queueDataSource), config),
                properties.getStats().getInterval());
    }

    @Bean
    @ConditionalOnMissingBean
    QueueAdmin queueAdmin(ObjectProvider<DataSource> dataSource, @QueueDataSource ObjectProvider<DataSource> queueDataSource,
            QueueConfig config, JobStore jobs, TaskRegistry tasks, QueueStatsPoller stats, QueueClient client) {
        DataSource queue = queueDataSource(dataSource, queueDataSource);
        return new QueueAdmin(jobs, new ControlStore(queue, config), new NodeStore(queue, config), tasks, stats, client);
    }

    /**
     * The worker runtime, on nodes that run jobs.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "pgqueue.workers.enabled", matchIfMissing = true)
    static class QueueWorkersConfiguration {

        @Bean
        @ConditionalOnMissingBean
        WorkerSettings queueWorkerSettings(QueueProperties properties) {
            return QueueSettingsMapper.workerSettings(properties);
        }

        @Bean
        @ConditionalOnMissingBean
        WorkerExecutors queueWorkerExecutors(Environment environment) {
            if (Threading.VIRTUAL.isActive(environment)) {
                return (pool, maxThreads) -> new VirtualThreadTaskExecutor("pgqueue-" + pool + "-");
            }
            return WorkerExecutors.platformThreads();
        }

        @Bean
        @ConditionalOnMissingBean
        QueueWorkersLifecycle queueWorkersLifecycle(ListableBeanFactory beans, QueueTaskBindings tasks,
                ObjectProvider<DataSource> dataSource, @QueueDataSource ObjectProvider<DataSource> queueDataSource,
                QueueConfig config, WorkerSettings settings, ObjectProvider<JsonMapper> jsonMapper,
                WorkerExecutors executors, ObjectProvider<QueueSchemaInitializer> schema, QueueTelemetry telemetry) {
            schema.ifAvailable(initializer -> { });
            ObjectMapper mapper = jsonMapper.getIfAvailable(() -> JsonMapper.builder().build());
            return new QueueWorkersLifecycle(beans, tasks, queueDataSource(dataSource, queueDataSource), config, settings,
                    mapper, executors, telemetry);
        }
    }
}
