package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Supplier;
import java.util.stream.Stream;

import io.pgqueue.Retention;
import io.pgqueue.TaskContext;
import io.pgqueue.PayloadEncryption;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.internal.enqueue.GroupCommitter;
import io.pgqueue.internal.lifecycle.BackgroundService;
import io.pgqueue.internal.lifecycle.PeriodicTasks;
import io.pgqueue.internal.observe.QueueStatsPoller;
import io.pgqueue.internal.shard.LimitShare;
import io.pgqueue.internal.store.FencedResult;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.testing.TestQueue;
import io.pgqueue.worker.PoolSettings;
import io.pgqueue.worker.WorkerSettings;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every background service keeps the one start/stop contract: start is idempotent, stop before
 * start and a second stop are harmless, stop returns only once the service's threads have ended,
 * and a stopped service starts again.
 * <p>
 * Isolated: it looks for the services' threads by name among every thread of the JVM.
 */
@Isolated
class BackgroundServiceContractTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass();

    private final Set<Thread> before = Set.copyOf(Thread.getAllStackTraces().keySet());

    static final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();

    @AfterAll
    static void stopTimers() {
        timers.shutdownNow();
    }

    static Stream<Arguments> services() {
        WorkerSettings settings = WorkerSettings.builder("contract").pollInterval(Duration.ofMillis(200))
            .heartbeatInterval(Duration.ofMillis(200)).build();
        JobStore store = queue.store();
        Supplier<Completer> completer = () -> new Completer(store, settings.lease(), 100, new Completer.Listener() {
            @Override
            public void startsWritten(FencedResult result) {
            }

            @Override
            public void outcomesWritten(List<Lease> leases, FencedResult result) {
            }

            @Override
            public void requeued(String task, Duration delay) {
            }
        }, new QueueEvents() {
        }, "");
        WorkerTask task = WorkerTask.of(TaskDefinition.builder("contract").build(), (String payload, TaskContext context) -> {
        }, String.class, 1, Duration.ofSeconds(5), "default");
        HeldJobs held = new HeldJobs(new QueueEvents() {
        });
        JobExecutor executor = new JobExecutor(List.of(task), JsonMapper.builder().build(),
                new AttemptOutcomes(TaskRegistry.of(List.of(task.definition()))), completer.get(), timers,
                QueueTelemetry.NONE, "contract", List.of(), PayloadEncryption.NONE);
        return Stream.of(
                Arguments.of("producer", (Supplier<BackgroundService>) () -> {
                    Map<String, PoolSlots> pools = Map.of("default", new PoolSlots("default", List.of(task),
                            PoolSettings.defaults(), held, executor, Runnable::run, jobs -> {
                            }));
                    ShardWorkers shard = new ShardWorkers("main", true, queue.stores(), LimitShare.WHOLE, new ShardWorkers.Shared(settings,
                            held, pools, new QueueEvents() {
                            }, timers, queue.stores().nodes(), () -> {
                            }, null, () -> {
                            }));
                    return new Producer("default", pools.get("default"), settings, shard, held, new QueueEvents() {
                    }, "");
                }),
                Arguments.of("completer", (Supplier<BackgroundService>) completer::get),
                Arguments.of("lease keeper", (Supplier<BackgroundService>) () -> new LeaseKeeper(store, held, settings,
                        completer.get(), List.of(), job -> true, "")),
                Arguments.of("notification listener", (Supplier<BackgroundService>) () -> new NotificationListener(
                        queue.dataSource(), List.of(store.channel("contract")), (channel, payload) -> {
                        }, () -> {
                        }, "")),
                Arguments.of("maintenance", (Supplier<BackgroundService>) () -> new Maintenance(store,
                        queue.stores().nodes(), Retention.defaults(), settings,
                        new Rescuer(store, 100, new QueueEvents() {
                        }), "")),
                Arguments.of("statistics poller", (Supplier<BackgroundService>) () -> new QueueStatsPoller(
                        queue.stores().stats(), Duration.ofMillis(200))),
                Arguments.of("group committer", (Supplier<BackgroundService>) () -> new GroupCommitter<>("group-commit", store::insert, 2, 100)),
                Arguments.of("periodic tasks", (Supplier<BackgroundService>) () -> new PeriodicTasks("pgqueue-periodic",
                        Duration.ofSeconds(5), List.of(new PeriodicTasks.Task("statistics", Duration.ZERO,
                                Duration.ofMillis(20), () -> queue.stores().stats().oldestTransaction())))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("services")
    void stopBeforeStartAndDoubleStopAreHarmless(String name, Supplier<BackgroundService> services) {
        BackgroundService service = services.get();

        service.stop();
        service.stop();

        assertThat(service.isRunning()).isFalse();
        assertThat(liveThreads(service)).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("services")
    void startIsIdempotentAndStopWaitsForTheThreads(String name, Supplier<BackgroundService> services) {
        BackgroundService service = services.get();

        service.start();
        service.start();

        assertThat(service.isRunning()).isTrue();
        assertThat(liveThreads(service)).as("threads of a service started twice").hasSize(service.threadNames().size());

        service.stop();

        assertThat(service.isRunning()).isFalse();
        assertThat(liveThreads(service)).as("threads left when stop returned").isEmpty();
        service.stop();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("services")
    void aStoppedServiceStartsAgain(String name, Supplier<BackgroundService> services) {
        BackgroundService service = services.get();
        service.start();
        service.stop();

        service.start();

        assertThat(service.isRunning()).isTrue();
        assertThat(liveThreads(service)).hasSize(service.threadNames().size());
        service.stop();
        assertThat(liveThreads(service)).isEmpty();
    }

    /** Threads of the service's names that did not run before the test (other suites' nodes may). */
    private List<Thread> liveThreads(BackgroundService service) {
        Map<Thread, StackTraceElement[]> threads = Thread.getAllStackTraces();
        return threads.keySet().stream().filter(Thread::isAlive).filter(thread -> !this.before.contains(thread))
            .filter(thread -> service.threadNames().contains(thread.getName())).toList();
    }
}
