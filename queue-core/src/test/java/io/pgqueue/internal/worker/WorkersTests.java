package io.pgqueue.internal.worker;

import java.lang.ref.Reference;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.pgqueue.EnqueueOptions;
import io.pgqueue.JobRequest;
import io.pgqueue.JobSnapshot;
import io.pgqueue.JobState;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueConfig;
import io.pgqueue.QueueDefaults;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskHandler;
import io.pgqueue.observe.QueueMeterBinder;
import io.pgqueue.observe.QueueMeterNames;
import io.pgqueue.retry.RetryPolicy;
import io.pgqueue.testing.TestQueue;
import io.pgqueue.testing.TestWorkers;
import io.pgqueue.worker.PoolSettings;
import io.pgqueue.worker.PoolState;
import io.pgqueue.worker.WorkerSettings;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

import static io.pgqueue.testing.TestWorkers.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The worker runtime without Spring: pools, batching, timeouts, cancellation, shutdown.
 */
@Order(1)
class WorkersTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass();

    @RegisterExtension
    final TestWorkers nodes = TestWorkers.on(queue);

    record Push(String user, int n) {
    }

    @Test
    void runsEveryJobOnceWithTypedPayloads() {
        Set<Integer> seen = ConcurrentHashMap.newKeySet();
        AtomicInteger runs = new AtomicInteger();
        TaskHandler<Push> handler = (payload, context) -> {
            runs.incrementAndGet();
            seen.add(payload.n());
            assertThat(context.headers()).containsEntry("origin", "test");
        };
        WorkerTask task = task("push", handler, Push.class, 8, Duration.ofMinutes(1));
        QueueClient client = nodes.client(task);
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            jobs.add(JobRequest.of("push", new Push("u", i), EnqueueOptions.defaults().withHeader("origin", "test")));
        }
        client.enqueueAll(jobs);

        nodes.start(settings("node-a").build(), task);

        await().atMost(Duration.ofSeconds(60)).until(() -> queue.finishedJobs(JobState.COMPLETED) == 3000);
        assertThat(seen).hasSize(3000);
        assertThat(runs.get()).isEqualTo(3000);
        assertThat(queue.activeJobs()).isZero();
    }

    @Test
    void retriesFailuresAndFailsUnreadablePayloadsAtOnce() {
        AtomicInteger attempts = new AtomicInteger();
        TaskHandler<Push> flaky = (payload, context) -> {
            if (attempts.incrementAndGet() < 3) {
                throw new IllegalStateException("dependency down");
            }
        };
        WorkerTask task = task(TaskDefinition.builder("flaky").retryPolicy(RetryPolicy.fixed(Duration.ZERO))
            .maxAttempts(5).build(), flaky, Push.class, 1, Duration.ofMinutes(1));
        QueueClient client = nodes.client(task);
        long good = client.enqueue("flaky", new Push("u", 1)).jobId();
        long bad = client.enqueue("flaky", Map.of("n", "not a number")).jobId();
        Logger logger = (Logger) LoggerFactory.getLogger(JobExecutor.class);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        logger.addAppender(logged);
        try {
            nodes.start(settings("node-a").pollInterval(Duration.ofMillis(100)).build(), task);

            await().atMost(Duration.ofSeconds(30)).until(() -> state(client, good) == JobState.COMPLETED);
            assertThat(client.find(good).orElseThrow().attempt()).isEqualTo(3);
            await().atMost(Duration.ofSeconds(30)).until(() -> state(client, bad) == JobState.FAILED);
            JobSnapshot failed = client.find(bad).orElseThrow();
            assertThat(failed.attempt()).isEqualTo(1);
            assertThat(failed.lastError()).contains("Payload cannot be read as");
        }
        finally {
            logger.detachAppender(logged);
        }
        // One line per failed attempt: INFO for the two retried, WARN for the job that failed for good
        // (test classes running at the same time log other tasks' lines).
        List<ILoggingEvent> lines = logged.list.stream()
            .filter(event -> event.getFormattedMessage().contains(" (flaky, "))
            .toList();
        assertThat(lines).filteredOn(event -> event.getLevel() == Level.INFO)
            .extracting(ILoggingEvent::getFormattedMessage)
            .containsExactly("job " + good + " (flaky, attempt 1) failed, next attempt in 0 ms: "
                    + "java.lang.IllegalStateException: dependency down",
                    "job " + good + " (flaky, attempt 2) failed, next attempt in 0 ms: "
                    + "java.lang.IllegalStateException: dependency down");
        assertThat(lines).filteredOn(event -> event.getLevel() == Level.WARN)
            .extracting(ILoggingEvent::getFormattedMessage).singleElement().asString()
            .startsWith("job " + bad + " (flaky, attempt 1) failed for good: Payload cannot be read as");
    }

    @Test
    void timeoutInterruptsTheHandlerAndFailsTheAttempt() {
        CountDownLatch interrupted = new CountDownLatch(1);
        TaskHandler<Push> slow = (payload, context) -> {
            try {
                // Runs far past its timeout unless interrupted.
                Thread.sleep(60_000);
            }
            catch (InterruptedException ex) {
                interrupted.countDown();
                throw ex;
            }
        };
        WorkerTask task = task(TaskDefinition.builder("slow").maxAttempts(1).build(), slow, Push.class, 1,
                Duration.ofMillis(300));
        QueueClient client = nodes.client(task);
        long id = client.enqueue("slow", new Push("u", 1)).jobId();

        nodes.start(settings("node-a").build(), task);

        await().atMost(Duration.ofSeconds(20)).until(() -> state(client, id) == JobState.FAILED);
        assertThat(interrupted.getCount()).isZero();
        assertThat(client.find(id).orElseThrow().lastError()).contains("TaskTimeoutException")
            .contains("longer than its timeout of PT0.3S");
    }

    @Test
    void cancellationReachesARunningHandler() {
        CountDownLatch running = new CountDownLatch(1);
        TaskHandler<Push> cooperative = (payload, context) -> {
            running.countDown();
            context.progress("waiting to be cancelled");
            while (true) {
                context.throwIfCancellationRequested();
                // A slice of work between checks for a cancellation request.
                Thread.sleep(20);
            }
        };
        WorkerTask task = task("copy", cooperative, Push.class, 1, Duration.ofMinutes(1));
        QueueClient client = nodes.client(task);
        long id = client.enqueue("copy", new Push("u", 1)).jobId();
        nodes.start(settings("node-a").heartbeatInterval(Duration.ofMillis(200)).build(), task);
        await().atMost(Duration.ofSeconds(20)).until(() -> running.getCount() == 0);
        await().atMost(Duration.ofSeconds(20)).until(() -> "waiting to be cancelled".equals(
                client.find(id).orElseThrow().progress()));

        client.cancel(id);

        await().atMost(Duration.ofSeconds(20)).until(() -> state(client, id) == JobState.CANCELLED);
    }

    @Test
    void gracefulShutdownFinishesRunningJobsAndHandsBackBufferedOnes() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger started = new AtomicInteger();
        TaskHandler<Push> blocking = (payload, context) -> {
            started.incrementAndGet();
            release.await();
        };
        WorkerTask task = task("copy", blocking, Push.class, 2, Duration.ofMinutes(1));
        QueueClient client = nodes.client(task);
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            jobs.add(JobRequest.of("copy", new Push("u", i)));
        }
        client.enqueueAll(jobs);
        QueueWorkers workers = nodes.start(settings("node-a").build(), task);
        await().atMost(Duration.ofSeconds(20)).until(() -> started.get() == 2);
        // Two running, some buffered (STARTING), the rest READY.
        assertThat(queue.activeJobs(JobState.STARTING) + queue.activeJobs(JobState.RUNNING)).isGreaterThan(2);

        Thread stopper = new Thread(workers::stop);
        stopper.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> queue.activeJobs(JobState.STARTING) == 0);
        release.countDown();
        stopper.join(20_000);

        assertThat(queue.finishedJobs(JobState.COMPLETED)).isEqualTo(2);
        assertThat(queue.activeJobs(JobState.READY)).isEqualTo(8);
        assertThat(queue.jdbc().queryForObject("SELECT max(attempt) FROM pgqueue.job", Integer.class)).isZero();
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.node", Long.class)).isZero();
    }

    @Test
    void aHandlerIgnoringItsTimeoutGivesUpItsSlotWhileTheJobRunsAgainAndItsLateOutcomeChangesNothing() {
        CountDownLatch hung = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger attempts = new AtomicInteger();
        TaskHandler<Push> handler = (payload, context) -> {
            if (attempts.incrementAndGet() == 1) {
                hung.countDown();
                blockIgnoringInterrupts(release);
            }
        };
        WorkerTask task = task(TaskDefinition.builder("hang").maxAttempts(3).build(), handler, Push.class, 1,
                Duration.ofMillis(200));
        QueueClient client = nodes.client(task);
        long id = client.enqueue("hang", new Push("u", 1)).jobId();
        try {
            QueueWorkers a = nodes.start(quick("node-a").build(), task);
            await().atMost(Duration.ofSeconds(20)).until(() -> hung.getCount() == 0);
            nodes.start(quick("node-b").build(), task);

            // After timeout and lease the job is rescued and runs again while the first thread still runs.
            await().atMost(Duration.ofSeconds(20)).until(() -> state(client, id) == JobState.COMPLETED);
            assertThat(attempts.get()).isEqualTo(2);
            await().atMost(Duration.ofSeconds(10)).until(() -> a.pools().get(0).hung() == 1);
            assertThat(a.pools().get(0).busy()).as("the hung thread gave up its slot").isZero();

            release.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> a.pools().get(0).hung() == 0);
            assertThat(a.pools().get(0).busy()).isZero();
            JobSnapshot job = client.find(id).orElseThrow();
            assertThat(job.state()).isEqualTo(JobState.COMPLETED);
            assertThat(job.attempt()).as("the rerun's attempt stands").isEqualTo(2);
        }
        finally {
            release.countDown();
        }
    }

    @Test
    void aHungHandlerGivesUpItsSlotToAnotherJobOfItsTaskOnTheSameNode() {
        CountDownLatch hung = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean firstReturned = new AtomicBoolean();
        AtomicBoolean firstRan = new AtomicBoolean();
        TaskHandler<Push> handler = (payload, context) -> {
            if (payload.n() == 1 && firstRan.compareAndSet(false, true)) {
                hung.countDown();
                blockIgnoringInterrupts(release);
                firstReturned.set(true);
            }
        };
        WorkerTask task = task(TaskDefinition.builder("hang").maxAttempts(3).build(), handler, Push.class, 1,
                Duration.ofMillis(100));
        QueueClient client = nodes.client(task);
        MeterRegistry meters = new SimpleMeterRegistry();
        try {
            QueueWorkers node = nodes.start(quick("node-a").build(), task);
            QueueMeterBinder binder = QueueMeterBinder.NONE.withPools(Map.of(QueueDefaults.POOL, List.of("hang")),
                    node::pools);
            binder.bindTo(meters);
            long first = client.enqueue("hang", new Push("u", 1)).jobId();
            await().atMost(Duration.ofSeconds(10)).until(() -> hung.getCount() == 0);
            long second = client.enqueue("hang", new Push("u", 2)).jobId();

            // One slot, held by a handler that ignores its timeout: once it is declared hung, the
            // second job runs in its slot on this node, the only one, while it still blocks.
            await().atMost(Duration.ofSeconds(10)).until(() -> state(client, second) == JobState.COMPLETED);
            assertThat(firstReturned).as("the hung handler still blocks").isFalse();
            PoolState.Task state = node.pools().get(0).tasks().get("hang");
            assertThat(state.hung()).isEqualTo(1);
            assertThat(meters.get(QueueMeterNames.POOL_HUNG).tags("pool", QueueDefaults.POOL).gauge().value())
                .isEqualTo(1);
            // The first job itself is rescued and runs again here too.
            await().atMost(Duration.ofSeconds(10)).until(() -> state(client, first) == JobState.COMPLETED);
            assertThat(firstReturned).isFalse();

            release.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> node.pools().get(0).hung() == 0);
            assertThat(node.pools().get(0).busy()).isZero();
            assertThat(meters.get(QueueMeterNames.POOL_HUNG).tags("pool", QueueDefaults.POOL).gauge().value()).isZero();
            assertThat(client.find(first).orElseThrow().attempt()).as("the rerun's attempt stands").isEqualTo(2);
            // Gauges hold their binder weakly.
            Reference.reachabilityFence(binder);
        }
        finally {
            release.countDown();
        }
    }

    @Test
    void pastTheBoundAHungHandlerKeepsItsSlotAndTheTaskClaimsNothingMoreUntilAHungOneReturns() {
        Map<Integer, CountDownLatch> releases = Map.of(1, new CountDownLatch(1), 2, new CountDownLatch(1));
        Set<Integer> started = ConcurrentHashMap.newKeySet();
        Set<Integer> hanging = ConcurrentHashMap.newKeySet();
        Set<Integer> ran = ConcurrentHashMap.newKeySet();
        TaskHandler<Push> handler = (payload, context) -> {
            // Jobs 1 and 2 hang in their first run, ignoring the interrupt of their timeout.
            if (releases.containsKey(payload.n()) && started.add(payload.n())) {
                hanging.add(payload.n());
                blockIgnoringInterrupts(releases.get(payload.n()));
                hanging.remove(payload.n());
                return;
            }
            ran.add(payload.n());
        };
        WorkerTask task = task(TaskDefinition.builder("hang").maxAttempts(3).build(), handler, Push.class, 1,
                Duration.ofMillis(100));
        QueueClient client = nodes.client(task);
        try {
            QueueWorkers node = nodes.start(quick("node-a").build(), task);
            client.enqueue("hang", new Push("u", 1));
            client.enqueue("hang", new Push("u", 2));

            // The first hung handler gives up its slot (the most a task with one slot allows), the
            // second keeps it: the task's only slot is held so and it claims nothing more here.
            await().atMost(Duration.ofSeconds(20)).until(() -> node.pools().get(0).tasks().get("hang").hung() == 2);
            assertThat(hanging).containsExactlyInAnyOrder(1, 2);
            PoolState.Task state = node.pools().get(0).tasks().get("hang");
            assertThat(state.running()).as("the hung handler that kept its slot").isEqualTo(1);
            assertThat(state.buffered()).isZero();
            long third = client.enqueue("hang", new Push("u", 3)).jobId();
            await("nothing more claimed while the hung handlers hold the slot").during(Duration.ofSeconds(1))
                .atMost(Duration.ofSeconds(3)).until(() -> state(client, third) == JobState.READY && ran.isEmpty());

            // Job 1 returns: job 2's handler gives up the slot in its place, and the task runs again.
            releases.get(1).countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> state(client, third) == JobState.COMPLETED);
            assertThat(hanging).as("job 2's handler still blocks").containsExactly(2);
            assertThat(node.pools().get(0).tasks().get("hang").hung()).isEqualTo(1);
            await().atMost(Duration.ofSeconds(10)).until(() -> ran.containsAll(List.of(1, 2, 3)));

            releases.get(2).countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> node.pools().get(0).hung() == 0);
            assertThat(node.pools().get(0).busy()).isZero();
        }
        finally {
            releases.values().forEach(CountDownLatch::countDown);
        }
    }

    @Test
    void shutdownDoesNotWaitForHungHandlers() {
        CountDownLatch hung = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        TaskHandler<Push> handler = (payload, context) -> {
            if (hung.getCount() > 0) {
                hung.countDown();
                blockIgnoringInterrupts(release);
            }
        };
        WorkerTask task = task(TaskDefinition.builder("hang").maxAttempts(3).build(), handler, Push.class, 1,
                Duration.ofMillis(100));
        QueueClient client = nodes.client(task);
        client.enqueue("hang", new Push("u", 1));
        try {
            QueueWorkers node = nodes.start(quick("node-a").shutdownTimeout(Duration.ofSeconds(30)).build(), task);
            await().atMost(Duration.ofSeconds(10)).until(() -> node.pools().get(0).hung() == 1);

            long start = System.nanoTime();
            node.stop();

            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("stopped without waiting for the hung handler")
                .isLessThan(Duration.ofSeconds(10));
            assertThat(release.getCount()).isOne();
        }
        finally {
            release.countDown();
        }
    }

    @Test
    void shutdownInterruptsHandlersPastTheTimeoutAndRequeuesTheirJobs() {
        CountDownLatch running = new CountDownLatch(1);
        TaskHandler<Push> stubborn = (payload, context) -> {
            running.countDown();
            // Keeps running through a graceful shutdown until interrupted.
            Thread.sleep(60_000);
        };
        // Its only attempt: an interrupted shutdown must not use it up.
        WorkerTask task = task(TaskDefinition.builder("copy").maxAttempts(1).build(), stubborn, Push.class, 1,
                Duration.ofMinutes(5));
        QueueClient client = nodes.client(task);
        long id = client.enqueue("copy", new Push("u", 1)).jobId();
        QueueWorkers workers = nodes.start(settings("node-a").shutdownTimeout(Duration.ofMillis(300)).build(), task);
        await().atMost(Duration.ofSeconds(20)).until(() -> running.getCount() == 0);

        workers.stop();

        JobSnapshot job = client.find(id).orElseThrow();
        assertThat(job.state()).isEqualTo(JobState.READY);
        assertThat(job.attempt()).isZero();
        assertThat(job.lastError()).contains("Interrupted by the shutdown of node node-a");
        // Another node picks it up and runs it.
        AtomicInteger ranAgain = new AtomicInteger();
        nodes.start(settings("node-b").build(), task(task.definition(), (payload, context) -> ranAgain.incrementAndGet(),
                Push.class, 1, Duration.ofMinutes(1)));
        await().atMost(Duration.ofSeconds(20)).until(() -> state(client, id) == JobState.COMPLETED);
        assertThat(ranAgain.get()).isEqualTo(1);
    }

    @Test
    void aFinishedJobKeepsItsLeaseWhileItsOutcomeCannotBeWritten() throws Exception {
        try (CompletionBlock block = blockCompletions("false")) {
            AtomicInteger runs = new AtomicInteger();
            WorkerTask task = task("push", (payload, context) -> runs.incrementAndGet(), Push.class, 1,
                    Duration.ofMinutes(1));
            QueueClient client = nodes.client(task);
            long id = client.enqueue("push", new Push("u", 1)).jobId();
            // A 1 s lease, renewed every 300 ms, rescued within 200 ms of expiring.
            nodes.start(settings("node-a").lease(Duration.ofSeconds(1)).heartbeatInterval(Duration.ofMillis(300))
                .rescueInterval(Duration.ofMillis(200)).build(), task);
            await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 1);

            // The outcome cannot be written for longer than the lease; the lease must not lapse: it is
            // renewed past its deadline by more than a rescue interval, when a lapsed one would be rescued.
            Instant deadline = client.find(id).orElseThrow().leaseDeadline();
            await("the lease renewed past its deadline").atMost(Duration.ofSeconds(10)).until(() -> {
                Instant renewed = client.find(id).orElseThrow().leaseDeadline();
                return renewed != null && renewed.isAfter(deadline.plus(Duration.ofMillis(1200)));
            });
            JobSnapshot held = client.find(id).orElseThrow();
            assertThat(held.state()).as("still held, not rescued").isIn(JobState.STARTING, JobState.RUNNING);
            assertThat(held.attempt()).isEqualTo(1);
            block.lift();

            await().atMost(Duration.ofSeconds(10)).until(() -> state(client, id) == JobState.COMPLETED);
            assertThat(runs.get()).as("the finished job was not rescued and run again").isEqualTo(1);
        }
    }

    @Test
    void anOutcomeTheDatabaseRejectsDoesNotHoldBackTheOthersOfItsBatch() throws Exception {
        // The poison job's completion is always rejected.
        try (CompletionBlock block = blockCompletions("OLD.payload ->> 'user' = 'poison'")) {
            AtomicInteger runs = new AtomicInteger();
            WorkerTask task = task("push", (payload, context) -> runs.incrementAndGet(), Push.class, 8,
                    Duration.ofMinutes(1));
            QueueClient client = nodes.client(task);
            List<JobRequest> jobs = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                jobs.add(JobRequest.of("push", new Push(i == 17 ? "poison" : "u", i)));
            }
            client.enqueueAll(jobs);
            nodes.start(settings("node-a").build(), task);
            // All 40 ran; their outcomes wait in the completer, retried as one batch.
            await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 40);
            block.lift();

            await().atMost(Duration.ofSeconds(10)).until(() -> queue.finishedJobs(JobState.COMPLETED) == 39);
            assertThat(queue.jdbc().queryForObject("SELECT payload ->> 'user' FROM pgqueue.job", String.class))
                .as("only the rejected outcome is left, its job still held").isEqualTo("poison");
            assertThat(runs.get()).isEqualTo(40);
        }
    }

    @Test
    void aTaskWithLargePayloadsBuffersOnlyWhatThePrefetchBudgetHolds() {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        TaskHandler<Push> handler = (payload, context) -> {
            if (runs.incrementAndGet() > 20) {
                release.await();
            }
        };
        WorkerTask task = task("bulky", handler, Push.class, 1, Duration.ofMinutes(1));
        QueueClient client = nodes.client(task);
        String large = "x".repeat(100_000);
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            jobs.add(JobRequest.of("bulky", new Push(large, i)));
        }
        client.enqueueAll(jobs);
        // Fast jobs and a 10 s window would buffer up to max-prefetch (1,000); a budget of 1,000,000
        // bytes holds 9 jobs of ~100 kB, so a node holds at most concurrency 1 + 9 of them.
        nodes.start(settings("node-a").pools(Map.of("default", new PoolSettings(1000, Duration.ofSeconds(10), 1_000_000)))
            .build(), task);
        await().atMost(Duration.ofSeconds(20)).until(() -> runs.get() > 20 && claimedJobs() >= 2);
        await("jobs claimed while a handler blocks, at most 10").during(Duration.ofSeconds(1))
            .atMost(Duration.ofSeconds(3)).until(() -> claimedJobs() <= 10);

        release.countDown();
        await().atMost(Duration.ofSeconds(30)).until(() -> queue.finishedJobs(JobState.COMPLETED) == 200);
        assertThat(runs.get()).isEqualTo(200);
    }

    private static long claimedJobs() {
        return queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.job WHERE state <> 'READY'", Long.class);
    }

    @Test
    void claimingDoesNotRunAheadOfOutcomesThatCannotBeWritten() throws Exception {
        try (CompletionBlock block = blockCompletions("false")) {
            AtomicInteger runs = new AtomicInteger();
            WorkerTask task = task("push", (payload, context) -> runs.incrementAndGet(), Push.class, 2,
                    Duration.ofMinutes(1));
            QueueClient client = nodes.client(task);
            List<JobRequest> jobs = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                jobs.add(JobRequest.of("push", new Push("u", i)));
            }
            client.enqueueAll(jobs);
            // Concurrency 2 + prefetch 4, and 4 finished jobs beyond them waiting for the writer: at
            // most 10 jobs held.
            nodes.start(settings("node-a").pools(Map.of("default", new PoolSettings(4, Duration.ofMillis(200)))).build(),
                    task);
            await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() >= 2);
            await("jobs run while no outcome could be written, at most 10").during(Duration.ofMillis(1500))
                .atMost(Duration.ofSeconds(3)).until(() -> runs.get() <= 10);
            int ran = runs.get();
            await("no more claimed meanwhile").during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2))
                .until(() -> runs.get() == ran);

            block.lift();
            await().atMost(Duration.ofSeconds(30)).until(() -> queue.finishedJobs(JobState.COMPLETED) == 200);
            assertThat(runs.get()).isEqualTo(200);
        }
    }

    @Test
    void aFailureAroundTheHandlerFailsTheAttemptAndFreesTheSlot() {
        TaskHandler<Push> failing = (payload, context) -> {
            throw new IllegalStateException("bad\u0000byte");
        };
        // A custom retry policy that itself throws, on a task with a single slot.
        WorkerTask task = task(TaskDefinition.builder("broken").retryPolicy(attempt -> {
            throw new ArrayIndexOutOfBoundsException(attempt);
        }).build(), failing, Push.class, 1, Duration.ofMinutes(1));
        QueueClient client = nodes.client(task);
        long first = client.enqueue("broken", new Push("u", 1)).jobId();
        long second = client.enqueue("broken", new Push("u", 2)).jobId();

        nodes.start(settings("node-a").build(), task);

        await().atMost(Duration.ofSeconds(20)).until(() -> state(client, first) == JobState.FAILED
                && state(client, second) == JobState.FAILED);
        assertThat(client.find(first).orElseThrow().lastError()).contains("ArrayIndexOutOfBoundsException");
    }

    @Test
    void aBusyTaskDoesNotStarveScheduledJobsOfAnother() {
        AtomicInteger busyRuns = new AtomicInteger();
        WorkerTask busy = task("busy", (payload, context) -> {
            busyRuns.incrementAndGet();
            // 2 ms of work a job: the backlog outlasts the test.
            Thread.sleep(2);
        }, Long.class, 1, Duration.ofMinutes(1));
        AtomicInteger quietRuns = new AtomicInteger();
        WorkerTask quiet = task("quiet", (payload, context) -> quietRuns.incrementAndGet(), Long.class,
                1, Duration.ofMinutes(1));
        QueueClient client = nodes.client(busy, quiet);
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 4000; i++) {
            jobs.add(JobRequest.of("busy", (long) i));
        }
        client.enqueueAll(jobs);
        nodes.start(settings("node-a").pollInterval(Duration.ofMillis(500)).build(), busy, quiet);
        await().atMost(Duration.ofSeconds(10)).until(() -> busyRuns.get() > 50);

        // Scheduled: no notification announces it when it becomes due.
        client.enqueue("quiet", 1L, EnqueueOptions.defaults().withDelay(Duration.ofMillis(300)));

        await().atMost(Duration.ofSeconds(3)).until(() -> quietRuns.get() == 1);
        assertThat(queue.activeJobs(JobState.READY)).as("the busy backlog is still there").isPositive();
    }

    @Test
    void notificationsWakeIdleWorkersLongBeforeThePoll() {
        List<Long> latencies = new java.util.concurrent.CopyOnWriteArrayList<>();
        TaskHandler<Long> handler = (enqueuedAt, context) -> latencies.add(System.nanoTime() - enqueuedAt);
        WorkerTask task = task("ping", handler, Long.class, 2, Duration.ofMinutes(1));
        QueueClient client = nodes.client(task);
        nodes.start(settings("node-a").pollInterval(Duration.ofMinutes(10)).build(), task);
        await().atMost(Duration.ofSeconds(10)).until(() -> queue.activeJobs(JobState.READY) == 0);

        for (int i = 0; i < 20; i++) {
            client.enqueue("ping", System.nanoTime());
            int expected = i + 1;
            await().atMost(Duration.ofSeconds(10)).until(() -> latencies.size() == expected);
        }

        // With a 10-minute poll, only notifications can have started these jobs.
        assertThat(latencies).hasSize(20).allMatch(nanos -> nanos < TimeUnit.SECONDS.toNanos(5));
    }

    @Test
    void pollingFindsJobsWhenNotificationsAreOff() {
        AtomicInteger runs = new AtomicInteger();
        WorkerTask task = task("ping", (payload, context) -> runs.incrementAndGet(), Long.class, 1,
                Duration.ofMinutes(1));
        QueueClient client = nodes.client(task);
        nodes.start(settings("node-a").notifications(false).pollInterval(Duration.ofMillis(200)).build(), task);

        client.enqueue("ping", 1L);

        await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 1);
    }

    @Test
    void twoNodesShareTheWorkWithoutRunningAJobTwice() {
        Map<Integer, AtomicInteger> runs = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> perNode = new ConcurrentHashMap<>();
        List<WorkerTask> tasks = new ArrayList<>();
        for (String node : List.of("node-a", "node-b")) {
            tasks.add(task("push", (payload, context) -> {
                runs.computeIfAbsent(payload.n(), n -> new AtomicInteger()).incrementAndGet();
                perNode.computeIfAbsent(node, n -> new AtomicInteger()).incrementAndGet();
                // 1 ms of work a job, so that neither node drains the queue alone.
                Thread.sleep(1);
            }, Push.class, 4, Duration.ofMinutes(1)));
        }
        QueueClient client = nodes.client(tasks.get(0));
        nodes.start(settings("node-a").build(), tasks.get(0));
        nodes.start(settings("node-b").build(), tasks.get(1));
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            jobs.add(JobRequest.of("push", new Push("u", i)));
        }
        client.enqueueAll(jobs);

        await().atMost(Duration.ofSeconds(60)).until(() -> queue.finishedJobs(JobState.COMPLETED) == 2000);
        assertThat(runs).hasSize(2000);
        assertThat(runs.values()).allMatch(count -> count.get() == 1);
        assertThat(perNode).containsOnlyKeys("node-a", "node-b");
    }

    /**
     * Makes completions (the DELETE out of the active table) fail until {@link CompletionBlock#lift},
     * and always for rows matching the given condition on {@code OLD}.
     */
    private static CompletionBlock blockCompletions(String alwaysRejected) {
        queue.jdbc().execute("CREATE TABLE IF NOT EXISTS pgqueue_block_completions (blocked boolean)");
        queue.jdbc().execute("""
                CREATE OR REPLACE FUNCTION block_completions() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF (%s) OR EXISTS (SELECT 1 FROM pgqueue_block_completions) THEN
                        RAISE EXCEPTION 'completion rejected by the test';
                    END IF;
                    RETURN OLD;
                END $$""".formatted(alwaysRejected));
        queue.jdbc().execute("DROP TRIGGER IF EXISTS block_completions ON pgqueue.job");
        queue.jdbc().execute("CREATE TRIGGER block_completions BEFORE DELETE ON pgqueue.job FOR EACH ROW "
                + "EXECUTE FUNCTION block_completions()");
        queue.jdbc().execute("INSERT INTO pgqueue_block_completions VALUES (true)");
        return new CompletionBlock();
    }

    private static final class CompletionBlock implements AutoCloseable {

        void lift() {
            queue.jdbc().execute("DELETE FROM pgqueue_block_completions");
        }

        @Override
        public void close() {
            lift();
            queue.jdbc().execute("DROP TRIGGER IF EXISTS block_completions ON pgqueue.job");
        }
    }

    @Test
    void completedJobsAreKeptForTheQueuesRetention() {
        // The queue's completed retention decides both whether completed jobs are archived and
        // when the janitor deletes them; the worker settings have no say in it.
        String insert = "INSERT INTO pgqueue.job_finished (id, task, state, priority, payload, headers, schedule_time, "
                + "attempt, max_attempts, created_at, started_at, finished_at) "
                + "VALUES (?, 'push', ?, 0, '1', '{}', now(), 1, 3, now(), now(), now() - CAST(? AS interval))";
        queue.jdbc().update(insert, 1L, "COMPLETED", "10 minutes");
        queue.jdbc().update(insert, 2L, "COMPLETED", "1 minute");
        queue.jdbc().update(insert, 3L, "FAILED", "10 minutes");
        WorkerTask task = task("push", (Push payload, io.pgqueue.TaskContext context) -> {
        }, Push.class, 1, Duration.ofMinutes(1));

        nodes.start(QueueConfig.defaults().withCompletedRetention(Duration.ofMinutes(5)),
                settings("janitor").retentionInterval(Duration.ofMillis(100)).build(), task);

        await().atMost(Duration.ofSeconds(20)).until(() -> queue.jdbc().queryForObject(
                "SELECT count(*) FROM pgqueue.job_finished WHERE id = 1", Long.class) == 0);
        assertThat(queue.jdbc().queryForList("SELECT id FROM pgqueue.job_finished ORDER BY id", Long.class))
            .containsExactly(2L, 3L);
    }

    private static <P> WorkerTask task(String name, TaskHandler<P> handler, Class<P> type, int concurrency,
            Duration timeout) {
        return task(TaskDefinition.builder(name).build(), handler, type, concurrency, timeout);
    }

    private static <P> WorkerTask task(TaskDefinition definition, TaskHandler<P> handler, Class<P> type,
            int concurrency, Duration timeout) {
        return WorkerTask.of(definition, handler, type, concurrency, timeout, QueueDefaults.POOL);
    }

    /** Settings with a short lease for tests of handlers that outlive their timeout. */
    private static WorkerSettings.Builder quick(String nodeId) {
        return settings(nodeId).lease(Duration.ofMillis(600)).heartbeatInterval(Duration.ofMillis(150))
            .rescueInterval(Duration.ofMillis(100));
    }

    /** Blocks until released, ignoring interrupts (such as the one of the attempt's timeout). */
    private static void blockIgnoringInterrupts(CountDownLatch release) {
        while (release.getCount() > 0) {
            try {
                release.await();
            }
            catch (InterruptedException ignored) {
                // keeps waiting
            }
        }
    }

    private static JobState state(QueueClient client, long id) {
        return client.find(id).orElseThrow().state();
    }
}
