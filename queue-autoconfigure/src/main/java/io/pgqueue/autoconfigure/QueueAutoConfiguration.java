package io.pgqueue.autoconfigure;

import javax.sql.DataSource;

import io.micrometer.observation.ObservationRegistry;
import io.pgqueue.JobInterceptor;
import io.pgqueue.PayloadEncryption;
import io.pgqueue.PgQueue;
import io.pgqueue.QueueAdmin;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueConfig;
import io.pgqueue.TaskRegistry;
import io.pgqueue.balance.PartitionBalancer;
import io.pgqueue.message.MessageQueueEvents;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.observe.QueueStatistics;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.worker.WorkerExecutors;
import io.pgqueue.worker.WorkerSettings;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.thread.Threading;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.core.task.VirtualThreadTaskExecutor;
import org.springframework.security.core.userdetails.UserDetailsService;
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

    /** Checks the settings and the task beans before any bean, and so the database, is touched. */
    @Bean
    static QueueSettingsCheck queueSettingsCheck(Environment environment) {
        return new QueueSettingsCheck(environment);
    }

    @Bean
    QueueDatabase queueDatabase(ObjectProvider<DataSource> dataSource,
            @QueueDataSource ObjectProvider<DataSource> queueDataSource) {
        return QueueDatabase.resolve(dataSource, queueDataSource);
    }

    @Bean
    @ConditionalOnMissingBean
    QueueConfig queueConfig(QueueProperties properties) {
        return QueueSettingsMapper.queueConfig(properties);
    }

    @Bean
    @ConditionalOnMissingBean
    QueueTaskBindings queueTaskBindings(ListableBeanFactory beans, QueueProperties properties) {
        return QueueTaskBindings.discover(beans, properties).reportTasksWithoutHandler();
    }

    @Bean
    @ConditionalOnMissingBean
    TaskRegistry queueTaskRegistry(QueueTaskBindings bindings) {
        return bindings.registry();
    }

    @Bean
    @ConditionalOnMissingBean
    QueueShards queueShards(QueueProperties properties, ListableBeanFactory beans) {
        return QueueShards.of(properties.getShards(), beans);
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "pgqueue.flyway.enabled", matchIfMissing = true)
    QueueSchemaInitializer queueSchemaInitializer(QueueDatabase database, QueueConfig config, QueueShards shards) {
        return new QueueSchemaInitializer(database.dataSource(), config.schema(), shards.dataSources());
    }

    @Bean
    @ConditionalOnMissingBean
    QueueTelemetry queueTelemetry(ObjectProvider<QueueEvents> events, ObjectProvider<ObservationRegistry> observations) {
        return new QueueTelemetry(QueueEvents.of(events.orderedStream().toList()),
                observations.getIfAvailable(() -> ObservationRegistry.NOOP));
    }

    /**
     * The keys of the payloads encrypted at rest, from {@code pgqueue.encryption.*}; a bean of the
     * application's own (keys from a secret store, say) takes its place.
     */
    @Bean
    @ConditionalOnMissingBean
    PayloadEncryption queuePayloadEncryption(QueueProperties properties) {
        return QueueSettingsMapper.encryption(properties.getEncryption());
    }

    /**
     * The queue: {@code pgqueue.*} mapped onto the core's one builder, then the customizers. What
     * routes jobs between shards is opened with the bean, so that jobs can be enqueued while the
     * context starts; {@link QueueLifecycle} starts and stops the rest. Its destruction stops what
     * the bean opened if the context fails before the lifecycle starts.
     */
    @Bean(initMethod = "open", destroyMethod = "stop")
    @ConditionalOnMissingBean
    PgQueue pgQueue(QueueDatabase database, QueueConfig config, QueueProperties properties, TaskRegistry tasks,
            QueueShards shards, QueueTaskBindings bindings, ListableBeanFactory beans, ObjectProvider<JsonMapper> jsonMapper,
            QueueTelemetry telemetry, ObjectProvider<MessageQueueEvents> messageEvents,
            ObjectProvider<WorkerSettings> workerSettings,
            ObjectProvider<WorkerExecutors> executors, ObjectProvider<PgQueueCustomizer> customizers,
            ObjectProvider<QueueSchemaInitializer> schema, ObjectProvider<JobInterceptor> interceptors,
            PayloadEncryption encryption) {
        // A sharded queue reads its schema as it is built: the migrations come first, whichever bean
        // (metrics, say) asks for the queue.
        schema.getIfAvailable();
        QueuePooling.check(properties, database.dataSource(), !shards.dataSources().isEmpty());
        PgQueue.Builder builder = PgQueue.builder(database.dataSource())
            .config(config)
            .tasks(tasks)
            .mapper(jsonMapper.getIfAvailable(() -> JsonMapper.builder().build()))
            .telemetry(telemetry)
            .encryption(encryption);
        messageEvents.ifAvailable(builder::messageEvents);
        shards.dataSources().forEach(builder::shard);
        QueueSettingsMapper.configure(builder, properties);
        // After the built-in ones the properties ask for.
        builder.interceptors(interceptors.orderedStream().toList());
        workerSettings.ifAvailable(settings -> builder.workers(settings, bindings::workerTasks));
        builder.schedules(bindings.schedules());
        executors.ifAvailable(builder::executors);
        customizers.orderedStream().forEach(customizer -> customizer.customize(builder));
        // A task setting that cannot work with the rest (an encrypted task without a key) names its property.
        return QueueSettingsMapper.mapped(builder::build);
    }

    /**
     * Starts the queue's services once the context is ready and stops them before the DataSource
     * closes.
     */
    @Bean
    @ConditionalOnMissingBean
    QueueLifecycle queueLifecycle(PgQueue queue) {
        return new QueueLifecycle(queue);
    }

    /**
     * The partition balancer: on a sharded queue it records this node's job counts per partition
     * and, with {@code pgqueue.balancer.enabled}, competes for running the balancer; unsharded it
     * does nothing. It runs with the queue.
     */
    @Bean
    @ConditionalOnMissingBean
    PartitionBalancer queueBalancer(PgQueue queue) {
        return queue.balancer();
    }

    @Bean
    @ConditionalOnMissingBean
    QueueClient queueClient(PgQueue queue) {
        return queue.client();
    }

    /**
     * Enqueues a job for each published application event whose type a task lists in
     * {@code @QueueTask(events = ...)}, in the publisher's transaction.
     */
    @Bean
    @ConditionalOnMissingBean
    QueueEventJobs queueEventJobs(QueueTaskBindings bindings, ObjectProvider<QueueClient> client) {
        return new QueueEventJobs(bindings, client);
    }

    /**
     * The shared statistics (depths, ages, stuck leases), read periodically while the queue runs.
     */
    @Bean
    @ConditionalOnMissingBean
    QueueStatistics queueStatsPoller(PgQueue queue) {
        return queue.stats();
    }

    @Bean
    @ConditionalOnMissingBean
    QueueAdmin queueAdmin(PgQueue queue) {
        return queue.admin();
    }

    /**
     * The message queues (the pull model of Amazon SQS) on the queue's database; they listen for
     * sends and count messages from the queue's start if any queue exists, else once first used.
     */
    @Bean
    @ConditionalOnMissingBean
    MessageQueues queueMessages(PgQueue queue) {
        return queue.messages();
    }

    /**
     * Jobs run as the user whose request enqueued them ({@code pgqueue.interceptors.security-context}),
     * first among the interceptor beans.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.security.core.userdetails.UserDetailsService")
    @ConditionalOnBooleanProperty(name = "pgqueue.interceptors.security-context")
    static class QueueSecurityContextConfiguration {

        @Bean
        @Order(Ordered.HIGHEST_PRECEDENCE)
        JobInterceptor queueSecurityContextInterceptor(ObjectProvider<UserDetailsService> users) {
            UserDetailsService service = users.getIfUnique();
            if (service == null) {
                throw new QueueConfigurationException("pgqueue.interceptors.security-context=true needs one "
                        + "UserDetailsService bean to load each job's user from, and there is "
                        + (users.stream().findAny().isPresent() ? "more than one" : "none"),
                        "Declare the UserDetailsService your sign-in uses as a bean (one, or one @Primary), or set "
                                + "pgqueue.interceptors.security-context=false.");
            }
            return new SecurityContextJobInterceptor(service);
        }
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
        QueueWorkerNode queueWorkerNode(PgQueue queue, QueueTaskBindings tasks) {
            return new QueueWorkerNode(queue, tasks);
        }
    }
}
