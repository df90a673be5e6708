package io.pgqueue.autoconfigure;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;

import io.pgqueue.DedupPolicy;
import io.pgqueue.JobState;
import io.pgqueue.PgQueue;
import io.pgqueue.QueueAdmin;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueDefaults;
import io.pgqueue.RateLimit;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskGroups;
import io.pgqueue.TaskRegistry;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.observe.QueueStatistics;
import io.pgqueue.schedule.CatchUp;
import io.pgqueue.schedule.Schedule;
import io.pgqueue.testing.TestDatabaseInitializer;
import io.pgqueue.worker.BatchSizes;
import io.pgqueue.worker.PoolSettings;
import io.pgqueue.worker.WorkerExecutors;
import io.pgqueue.worker.WorkerSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Isolated;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.task.VirtualThreadTaskExecutor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

@ExtendWith(OutputCaptureExtension.class)
@Isolated
class QueueAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withInitializer(new TestDatabaseInitializer())
        .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JacksonAutoConfiguration.class,
                QueueAutoConfiguration.class));

    @Test
    void createsTheClientTheMigrationAndTheWorkers() {
        this.runner.withBean(TestHandlers.SendPush.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).hasSingleBean(QueueClient.class);
            assertThat(context).doesNotHaveBean(JobStore.class);
            assertThat(context).hasSingleBean(QueueSchemaInitializer.class);
            assertThat(context).hasSingleBean(QueueWorkerNode.class);
            assertThat(context).hasSingleBean(QueueLifecycle.class);
            assertThat(context.getBean(QueueWorkerNode.class).isRunning()).isTrue();
            assertThat(context.getBean(QueueLifecycle.class).isRunning()).isTrue();
            assertThat(context.getBean(TaskRegistry.class).require("send-push").handlerType())
                .isEqualTo(TestHandlers.SendPush.class);
        });
    }

    @Test
    void backsOffWhenDisabled() {
        this.runner.withBean(TestHandlers.SendPush.class).withPropertyValues("pgqueue.enabled=false").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(QueueClient.class);
            assertThat(context).doesNotHaveBean(QueueWorkerNode.class);
        });
    }

    @Test
    void backsOffWithoutADataSource() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(QueueAutoConfiguration.class))
            .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(QueueClient.class));
    }

    @Test
    void enqueueOnlyNodeHasNoWorkers() {
        this.runner.withBean(TestHandlers.SendPush.class).withPropertyValues("pgqueue.workers.enabled=false").run(context -> {
            assertThat(context).hasSingleBean(QueueClient.class);
            assertThat(context).doesNotHaveBean(QueueWorkerNode.class);
            assertThat(context).doesNotHaveBean(WorkerSettings.class);
            // The rest of the queue runs on a node without workers too.
            assertThat(context.getBean(QueueLifecycle.class).isRunning()).isTrue();
            assertThat(context.getBean(PgQueue.class).isWorking()).isFalse();
        });
    }

    @Test
    void migrationCanBeLeftToTheApplication() {
        this.runner.withPropertyValues("pgqueue.flyway.enabled=false", "pgqueue.workers.enabled=false").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(QueueSchemaInitializer.class);
            assertThat(context).hasSingleBean(QueueClient.class);
        });
    }

    @Test
    void startsWithoutActuatorAndMicrometer() {
        this.runner.withBean(TestHandlers.SendPush.class)
            .withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate", "io.micrometer"))
            .run(context -> assertThat(context).hasNotFailed().hasSingleBean(QueueWorkerNode.class));
    }

    @Test
    void userDefinedBeansWin() {
        this.runner.withUserConfiguration(UserBeans.class).run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context.getBean(WorkerSettings.class).nodeId()).isEqualTo("my-node");
            assertThat(context.getBean(WorkerExecutors.class)).isSameAs(UserBeans.EXECUTORS);
            assertThat(context.getBean(QueueWorkerNode.class).nodeId()).isEqualTo("my-node");
        });
    }

    @Test
    void annotationSettingsBecomeTheTaskDefinition() {
        this.runner.withBean(TestHandlers.SendPush.class).withBean(TestHandlers.SyncFolder.class).run(context -> {
            QueueTaskBindings bindings = context.getBean(QueueTaskBindings.class);
            QueueTaskBindings.Binding push = bindings.all().get("send-push");
            assertThat(push.beanName()).isNotNull();
            assertThat(push.task().concurrency()).isEqualTo(3);
            assertThat(push.task().pool()).isEqualTo("default");
            assertThat(push.task().timeout()).isEqualTo(QueueDefaults.TASK_TIMEOUT);
            assertThat(push.task().payloadType()).isEqualTo(TestHandlers.Push.class);
            TaskDefinition definition = push.definition();
            assertThat(definition.maxAttempts()).isEqualTo(5);
            assertThat(definition.priority()).isEqualTo(7);
            assertThat(definition.delayTolerance()).isEqualTo(Duration.ofSeconds(1));
            assertThat(definition.retryPolicy().delayAfter(3)).isEqualTo(Duration.ofMillis(250));

            QueueTaskBindings.Binding sync = bindings.all().get("sync-folder");
            assertThat(sync.task().pool()).isEqualTo("slow");
            assertThat(sync.task().timeout()).isEqualTo(Duration.ofMinutes(10));
            assertThat(sync.definition().dedupPolicy()).isEqualTo(DedupPolicy.rerun());
            assertThat(sync.definition().dedupKey().apply(new TestHandlers.Sync("photos", 3))).isEqualTo("folder-photos");
            assertThat(sync.definition().isTerminal(new IllegalArgumentException())).isTrue();
            assertThat(sync.definition().globalConcurrency()).isEqualTo(2);
            assertThat(sync.definition().rateLimit()).isEqualTo(new RateLimit(600, Duration.ofMinutes(1), 60));
            assertThat(sync.definition().groups().mode()).isEqualTo(TaskGroups.Mode.FAIR);
            assertThat(sync.definition().groups().concurrency()).isEqualTo(1);
            assertThat(sync.definition().groups().key().apply(new TestHandlers.Sync("photos", 3))).isEqualTo("photos");
            assertThat(definition.hasGlobalLimits()).isFalse();
        });
    }

    @Test
    void aCronTaskRunsAtItsSlotsFromOneScheduleInTheDatabase() {
        TestHandlers.Tick.SLOTS.clear();
        this.runner.withBean(TestHandlers.Tick.class).run(context -> {
            await().atMost(Duration.ofSeconds(15)).until(() -> TestHandlers.Tick.SLOTS.size() >= 2);
            assertThat(context.getBean(QueueAdmin.class).schedules()).singleElement().satisfies(info -> {
                assertThat(info.schedule().name()).isEqualTo("tick");
                assertThat(info.schedule().zone().getId()).isEqualTo("Europe/Amsterdam");
                assertThat(info.configured()).isTrue();
            });
        });
        assertThat(TestHandlers.Tick.SLOTS).doesNotHaveDuplicates().allSatisfy(slot -> assertThat(slot).endsWith("Z"));
    }

    @Test
    void aUniqueDedupPolicyTakesItsWindowFromTheProperties() {
        this.runner.withBean(TestHandlers.SendPush.class)
            .withPropertyValues("pgqueue.tasks.send-push.dedup-policy=unique", "pgqueue.tasks.send-push.unique-period=10m",
                    "pgqueue.tasks.send-push.unique-states=failed,completed")
            .run(context -> assertThat(context.getBean(QueueTaskBindings.class).all().get("send-push").definition()
                .dedupPolicy()).isEqualTo(DedupPolicy.unique(Duration.ofMinutes(10), JobState.COMPLETED, JobState.FAILED)));
    }

    @Test
    void propertiesOverrideTheAnnotation() {
        this.runner.withBean(TestHandlers.SendPush.class)
            .withPropertyValues("pgqueue.tasks.send-push.concurrency=9", "pgqueue.tasks.send-push.max-attempts=2",
                    "pgqueue.tasks.send-push.priority=-3", "pgqueue.tasks.send-push.timeout=45s",
                    "pgqueue.tasks.send-push.pool=fast", "pgqueue.tasks.send-push.delay-tolerance=100ms",
                    "pgqueue.tasks.send-push.retry.kind=linear", "pgqueue.tasks.send-push.retry.delay=1s",
                    "pgqueue.tasks.send-push.retry.step=2s", "pgqueue.tasks.send-push.dedup-policy=replace-if-ready",
                    "pgqueue.tasks.send-push.dedup-key=user", "pgqueue.tasks.send-push.global-concurrency=4",
                    "pgqueue.tasks.send-push.rate=50/s", "pgqueue.tasks.send-push.rate-burst=5",
                    "pgqueue.tasks.send-push.groups=sequence", "pgqueue.tasks.send-push.group-key=user",
                    "pgqueue.tasks.send-push.sequence-on-failure=block", "pgqueue.tasks.send-push.history=true")
            .run(context -> {
                QueueTaskBindings.Binding push = context.getBean(QueueTaskBindings.class).all().get("send-push");
                assertThat(push.task().concurrency()).isEqualTo(9);
                assertThat(push.task().timeout()).isEqualTo(Duration.ofSeconds(45));
                assertThat(push.task().pool()).isEqualTo("fast");
                assertThat(push.definition().maxAttempts()).isEqualTo(2);
                assertThat(push.definition().priority()).isEqualTo(-3);
                assertThat(push.definition().delayTolerance()).isEqualTo(Duration.ofMillis(100));
                assertThat(push.definition().retryPolicy().delayAfter(3)).isEqualTo(Duration.ofSeconds(5));
                assertThat(push.definition().dedupPolicy()).isEqualTo(DedupPolicy.replaceIfReady());
                assertThat(push.definition().dedupKey().apply(new TestHandlers.Push("u-1", "f"))).isEqualTo("u-1");
                assertThat(push.definition().globalConcurrency()).isEqualTo(4);
                assertThat(push.definition().rateLimit()).isEqualTo(new RateLimit(50, Duration.ofSeconds(1), 5));
                assertThat(push.definition().groups().mode()).isEqualTo(TaskGroups.Mode.SEQUENCE);
                assertThat(push.definition().groups().onFailure()).isEqualTo(TaskGroups.OnFailure.BLOCK);
                assertThat(push.definition().groups().key().apply(new TestHandlers.Push("u-1", "f"))).isEqualTo("u-1");
                assertThat(push.definition().history()).isTrue();
            });
    }

    @Test
    void schedulePropertiesOverrideTheAnnotation() {
        this.runner.withBean(TestHandlers.Tick.class)
            .withPropertyValues("pgqueue.tasks.tick.cron=0 0 3 * * MON-FRI", "pgqueue.tasks.tick.zone=America/New_York",
                    "pgqueue.tasks.tick.catch-up=skip")
            .run(context -> {
                Schedule configured = context.getBean(QueueTaskBindings.class).all().get("tick").schedule();
                assertThat(configured.cron()).isEqualTo("0 0 3 * * MON-FRI");
                assertThat(configured.zone()).isEqualTo(ZoneId.of("America/New_York"));
                assertThat(configured.catchUp()).isEqualTo(CatchUp.SKIP);
                // The schedule the nodes share: the annotation's every second in Amsterdam is gone.
                assertThat(context.getBean(QueueAdmin.class).schedules()).singleElement().satisfies(info -> {
                    assertThat(info.schedule().name()).isEqualTo("tick");
                    assertThat(info.schedule().cron()).isEqualTo("0 0 3 * * MON-FRI");
                    assertThat(info.schedule().zone()).isEqualTo(ZoneId.of("America/New_York"));
                    assertThat(info.schedule().catchUp()).isEqualTo(CatchUp.SKIP);
                    ZonedDateTime next = info.nextFire().atZone(ZoneId.of("America/New_York"));
                    assertThat(next.toLocalTime()).isEqualTo(LocalTime.of(3, 0));
                    assertThat(next.getDayOfWeek()).isNotIn(DayOfWeek.SATURDAY, DayOfWeek.SUNDAY);
                    assertThat(info.configured()).isTrue();
                });
            });
    }

    @Test
    void tasksDeclaredOnlyInPropertiesCanBeEnqueued() {
        this.runner.withPropertyValues("pgqueue.tasks.remote-task.max-attempts=3", "pgqueue.workers.enabled=false")
            .run(context -> {
                assertThat(context.getBean(TaskRegistry.class).require("remote-task").maxAttempts()).isEqualTo(3);
                assertThat(context.getBean(QueueClient.class).enqueue("remote-task", "x").created()).isTrue();
            });
    }

    @Test
    void mergeHandlersAreTheirOwnMerger() {
        this.runner.withBean(TestHandlers.Merging.class).run(context -> assertThat(context
            .getBean(TaskRegistry.class).require("merging").dedupPolicy()).isInstanceOf(DedupPolicy.MergeIfReady.class));
    }

    @Test
    void platformThreadsUnlessVirtualThreadsAreEnabledOnJava21() {
        this.runner.withPropertyValues("spring.threads.virtual.enabled=true", "pgqueue.workers.enabled=true")
            .run(context -> {
                Object executor = context.getBean(WorkerExecutors.class).create("p", 2);
                if (Runtime.version().feature() >= 21) {
                    assertThat(executor).isInstanceOf(VirtualThreadTaskExecutor.class);
                }
                else {
                    assertThat(executor).isInstanceOf(ExecutorService.class);
                    ((ExecutorService) executor).shutdown();
                }
            });
        this.runner.run(context -> {
            Object executor = context.getBean(WorkerExecutors.class).create("p", 2);
            assertThat(executor).isInstanceOf(ExecutorService.class);
            ((ExecutorService) executor).shutdown();
        });
    }

    @Test
    void configurationMetadataIsGenerated() throws Exception {
        var metadata = getClass().getClassLoader().getResource("META-INF/spring-configuration-metadata.json");
        assertThat(metadata).isNotNull();
        String json = new String(metadata.openStream().readAllBytes());
        for (String property : Set.of("pgqueue.poll-interval", "pgqueue.lease.duration", "pgqueue.shutdown.timeout",
                "pgqueue.retention.completed", "pgqueue.workers.enabled", "pgqueue.flyway.enabled", "pgqueue.tasks",
                "pgqueue.pools", "pgqueue.node-id", "pgqueue.max-payload-size")) {
            assertThat(json).contains("\"" + property + "\"");
        }
        assertThat(json).contains("Whether this node runs jobs.");
        // Typed as a map of the task settings class, so an IDE flags an unknown key under any task name.
        assertThat(json).contains("\"type\": \"java.util.Map<java.lang.String,io.pgqueue.autoconfigure.QueueProperties$Task>\"");
    }

    @Test
    void aConfiguredTaskCloseToAHandlersNameIsWarnedAbout(CapturedOutput output) {
        this.runner.withBean(TestHandlers.SendPush.class).withPropertyValues("pgqueue.tasks.send-psuh.max-attempts=2")
            .run(context -> assertThat(context).hasNotFailed());
        assertThat(output).contains("Task 'send-psuh' is configured under pgqueue.tasks but no @QueueTask bean handles "
                + "it; did you mean 'send-push'?");
    }

    @Test
    void runningWorkersKeepTheJvmAliveUntilTheContextCloses() {
        // Cached contexts of other test classes may run workers of their own: count only this one's.
        List<Thread> others = keepAliveThreads(List.of());
        this.runner.withBean(TestHandlers.SendPush.class).run(context -> {
            assertThat(keepAliveThreads(others)).singleElement().satisfies(thread -> assertThat(thread.isDaemon()).isFalse());
            context.getBean(QueueLifecycle.class).stop();
            assertThat(context.getBean(QueueWorkerNode.class).isRunning()).isFalse();
            await().atMost(Duration.ofSeconds(5)).until(() -> keepAliveThreads(others).isEmpty());
            context.getBean(QueueLifecycle.class).start();
            assertThat(context.getBean(QueueWorkerNode.class).isRunning()).isTrue();
            assertThat(keepAliveThreads(others)).hasSize(1);
        });
        await().atMost(Duration.ofSeconds(5)).until(() -> keepAliveThreads(others).isEmpty());
        this.runner.withBean(TestHandlers.SendPush.class).withPropertyValues("pgqueue.workers.enabled=false")
            .run(context -> assertThat(keepAliveThreads(others)).isEmpty());
    }

    private static List<Thread> keepAliveThreads(List<Thread> except) {
        return Thread.getAllStackTraces().keySet().stream()
            .filter(thread -> thread.isAlive() && thread.getName().equals("pgqueue-keep-alive") && !except.contains(thread))
            .toList();
    }

    @Test
    void everyBeanComesFromTheOnePgQueue() {
        this.runner.withBean(TestHandlers.SendPush.class).run(context -> {
            PgQueue queue = context.getBean(PgQueue.class);
            assertThat(context.getBean(QueueClient.class)).isSameAs(queue.client());
            assertThat(context.getBean(QueueAdmin.class)).isSameAs(queue.admin());
            assertThat(context.getBean(QueueStatistics.class)).isSameAs(queue.stats());
            assertThat(queue.isWorking()).isTrue();
        });
    }

    @Test
    void customizersAdjustTheBuilderInTheirOrder() {
        this.runner.withPropertyValues("pgqueue.stats.interval=5s", "pgqueue.workers.enabled=false")
            .withBean("late", PgQueueCustomizer.class, () -> new OrderedCustomizer(2, Duration.ofSeconds(7)))
            .withBean("early", PgQueueCustomizer.class, () -> new OrderedCustomizer(1, Duration.ofSeconds(3)))
            .run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(context.getBean(PgQueue.class).stats().interval()).isEqualTo(Duration.ofSeconds(7));
            });
    }

    @Test
    void batchSizesAreSetPerStatementKind() {
        this.runner.withPropertyValues("pgqueue.batch.claim=100", "pgqueue.batch.heartbeat=200",
                "pgqueue.batch.write=300", "pgqueue.batch.maintenance=400")
            .run(context -> assertThat(context.getBean(WorkerSettings.class).batchSizes())
                .isEqualTo(new BatchSizes(100, 200, 300, 400)));
    }

    @Test
    void aPoolsPrefetchIsSetByItsPropertiesAndAnUnlistedPoolHasTheDefaults() {
        this.runner.withPropertyValues("pgqueue.pools.bulky.max-prefetch=50", "pgqueue.pools.bulky.prefetch-window=1s",
                "pgqueue.pools.bulky.max-prefetch-bytes=2MB")
            .run(context -> {
                WorkerSettings settings = context.getBean(WorkerSettings.class);
                assertThat(settings.pool("bulky")).isEqualTo(new PoolSettings(50, Duration.ofSeconds(1), 2L * 1024 * 1024));
                assertThat(settings.pool("default")).isEqualTo(PoolSettings.defaults());
                assertThat(PoolSettings.defaults().maxPrefetch()).isEqualTo(1000);
            });
    }

    @Test
    void theDeprecatedBatchSizeStillSetsAllFour() {
        this.runner.withPropertyValues("pgqueue.retention.batch-size=50", "pgqueue.batch.claim=100")
            .run(context -> assertThat(context.getBean(WorkerSettings.class).batchSizes())
                .isEqualTo(new BatchSizes(50, 50, 50, 50)));
    }

    @Test
    void theDeprecatedBatchSizeIsMarkedInTheMetadata() throws Exception {
        var metadata = getClass().getClassLoader().getResource("META-INF/spring-configuration-metadata.json");
        String json = new String(metadata.openStream().readAllBytes());
        assertThat(json).contains("\"pgqueue.batch.claim\"", "\"pgqueue.batch.heartbeat\"", "\"pgqueue.batch.write\"",
                "\"pgqueue.batch.maintenance\"");
        int legacy = json.indexOf("\"name\": \"pgqueue.retention.batch-size\"");
        assertThat(legacy).isNotNegative();
        String entry = json.substring(legacy, json.indexOf('}', json.indexOf("\"deprecation\"", legacy)));
        assertThat(entry).contains("\"replacement\": \"pgqueue.batch.write\"");
    }

    static final class OrderedCustomizer implements PgQueueCustomizer, Ordered {

        private final int order;

        private final Duration statsInterval;

        OrderedCustomizer(int order, Duration statsInterval) {
            this.order = order;
            this.statsInterval = statsInterval;
        }

        @Override
        public void customize(PgQueue.Builder builder) {
            builder.statsInterval(this.statsInterval);
        }

        @Override
        public int getOrder() {
            return this.order;
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class UserBeans {

        static final WorkerExecutors EXECUTORS = WorkerExecutors.platformThreads();

        @Bean
        WorkerSettings mySettings() {
            return WorkerSettings.builder("my-node").build();
        }

        @Bean
        WorkerExecutors myExecutors() {
            return EXECUTORS;
        }
    }
}
