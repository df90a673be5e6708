package io.pgqueue.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.pgqueue.EnqueueOptions;
import io.pgqueue.JobRequest;
import io.pgqueue.JobSnapshot;
import io.pgqueue.JobState;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueConfig;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskHandler;
import io.pgqueue.TaskRegistry;
import io.pgqueue.retry.RetryPolicy;
import io.pgqueue.store.QueueSchema;
import io.pgqueue.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The worker runtime without Spring: pools, batching, timeouts, cancellation, shutdown.
 */
class WorkersTests {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.perClass();

    static final JsonMapper mapper = JsonMapper.builder().build();

    static JdbcTemplate jdbc;

    record Push(String user, int n) {
    }

    List<QueueWorkers> started = new ArrayList<>();

    @BeforeAll
    static void migrate() {
        QueueSchema.migrate(db.dataSource(), "pgqueue");
        jdbc = new JdbcTemplate(db.dataSource());
    }

    @BeforeEach
    void clear() {
        jdbc.execute("TRUNCATE pgqueue.job, pgqueue.job_finished, pgqueue.node");
    }

    @AfterEach
    void stop() {
        this.started.forEach(QueueWorkers::stop);
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
        QueueClient client = client(task);
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            jobs.add(JobRequest.of("push", new Push("u", i), EnqueueOptions.defaults().withHeader("origin", "test")));
        }
        client.enqueueAll(jobs);

        start(settings("node-a").build(), task);

        await().atMost(Duration.ofSeconds(60)).until(() -> count("COMPLETED") == 3000);
        assertThat(seen).hasSize(3000);
        assertThat(runs.get()).isEqualTo(3000);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM pgqueue.job", Long.class)).isZero();
    }

    @Test
    void retriesFailuresAndFailsUnreadablePayloadsAtOnce() {
        AtomicInteger attempts = new AtomicInteger();
        TaskHandler<Push> flaky = (payload, context) -> {
            if (attempts.incrementAndGet() < 3) {
                throw new IllegalStateException("dependency down");
            }
        };
        WorkerTask task = new WorkerTask(TaskDefinition.builder("flaky").retryPolicy(RetryPolicy.fixed(Duration.ZERO))
            .maxAttempts(5).build(), cast(flaky), Push.class, 1, Duration.ofMinutes(1), "default");
        QueueClient client = client(task);
        long good = client.enqueue("flaky", new Push("u", 1)).jobId();
        long bad = client.enqueue("flaky", Map.of("n", "not a number")).jobId();

        start(settings("node-a").pollInterval(Duration.ofMillis(100)).build(), task);

        await().atMost(Duration.ofSeconds(30)).until(() -> state(client, good) == JobState.COMPLETED);
        assertThat(client.find(good).orElseThrow().attempt()).isEqualTo(3);
        await().atMost(Duration.ofSeconds(30)).until(() -> state(client, bad) == JobState.FAILED);
        JobSnapshot failed = client.find(bad).orElseThrow();
        assertThat(failed.attempt()).isEqualTo(1);
        assertThat(failed.lastError()).contains("Payload cannot be read as");
    }

    @Test
    void timeoutInterruptsTheHandlerAndFailsTheAttempt() {
        CountDownLatch interrupted = new CountDownLatch(1);
        TaskHandler<Push> slow = (payload, context) -> {
            try {
                Thread.sleep(60_000);
            }
            catch (InterruptedException ex) {
                interrupted.countDown();
                throw ex;
            }
        };
        WorkerTask task = new WorkerTask(TaskDefinition.builder("slow").maxAttempts(1).build(), cast(slow), Push.class, 1,
                Duration.ofMillis(300), "default");
        QueueClient client = client(task);
        long id = client.enqueue("slow", new Push("u", 1)).jobId();

        start(settings("node-a").build(), task);

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
                Thread.sleep(20);
            }
        };
        WorkerTask task = task("copy", cooperative, Push.class, 1, Duration.ofMinutes(1));
        QueueClient client = client(task);
        long id = client.enqueue("copy", new Push("u", 1)).jobId();
        start(settings("node-a").heartbeatInterval(Duration.ofMillis(200)).build(), task);
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
        QueueClient client = client(task);
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            jobs.add(JobRequest.of("copy", new Push("u", i)));
        }
        client.enqueueAll(jobs);
        QueueWorkers workers = start(settings("node-a").build(), task);
        await().atMost(Duration.ofSeconds(20)).until(() -> started.get() == 2);
        // Two running, some buffered (STARTING), the rest READY.
        assertThat(count("job", "STARTING") + count("job", "RUNNING")).isGreaterThan(2);

        Thread stopper = new Thread(workers::stop);
        stopper.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> count("job", "STARTING") == 0);
        release.countDown();
        stopper.join(20_000);

        assertThat(count("COMPLETED")).isEqualTo(2);
        assertThat(count("job", "READY")).isEqualTo(8);
        assertThat(jdbc.queryForObject("SELECT max(attempt) FROM pgqueue.job", Integer.class)).isZero();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM pgqueue.node", Long.class)).isZero();
    }

    @Test
    void shutdownInterruptsHandlersPastTheTimeoutAndRequeuesTheirJobs() {
        CountDownLatch running = new CountDownLatch(1);
        TaskHandler<Push> stubborn = (payload, context) -> {
            running.countDown();
            Thread.sleep(60_000);
        };
        // Its only attempt: an interrupted shutdown must not use it up.
        WorkerTask task = new WorkerTask(TaskDefinition.builder("copy").maxAttempts(1).build(), cast(stubborn), Push.class,
                1, Duration.ofMinutes(5), "default");
        QueueClient client = client(task);
        long id = client.enqueue("copy", new Push("u", 1)).jobId();
        QueueWorkers workers = start(settings("node-a").shutdownTimeout(Duration.ofMillis(300)).build(), task);
        await().atMost(Duration.ofSeconds(20)).until(() -> running.getCount() == 0);

        workers.stop();

        JobSnapshot job = client.find(id).orElseThrow();
        assertThat(job.state()).isEqualTo(JobState.READY);
        assertThat(job.attempt()).isZero();
        assertThat(job.lastError()).contains("Interrupted by the shutdown of node node-a");
        // Another node picks it up and runs it.
        AtomicInteger ranAgain = new AtomicInteger();
        start(settings("node-b").build(), new WorkerTask(task.definition(),
                cast((TaskHandler<Push>) (payload, context) -> ranAgain.incrementAndGet()), Push.class, 1,
                Duration.ofMinutes(1), "default"));
        await().atMost(Duration.ofSeconds(20)).until(() -> state(client, id) == JobState.COMPLETED);
        assertThat(ranAgain.get()).isEqualTo(1);
    }

    @Test
    void aFinishedJobKeepsItsLeaseWhileItsOutcomeCannotBeWritten() throws Exception {
        try (CompletionBlock block = blockCompletions("false")) {
            AtomicInteger runs = new AtomicInteger();
            WorkerTask task = task("push", (TaskHandler<Push>) (payload, context) -> runs.incrementAndGet(), Push.class, 1,
                    Duration.ofMinutes(1));
            QueueClient client = client(task);
            long id = client.enqueue("push", new Push("u", 1)).jobId();
            // A 1 s lease, renewed every 300 ms, rescued within 200 ms of expiring.
            start(settings("node-a").lease(Duration.ofSeconds(1)).heartbeatInterval(Duration.ofMillis(300))
                .rescueInterval(Duration.ofMillis(200)).build(), task);
            await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 1);

            // The outcome cannot be written for longer than the lease; the lease must not lapse.
            Thread.sleep(1500);
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
            WorkerTask task = task("push", (TaskHandler<Push>) (payload, context) -> runs.incrementAndGet(), Push.class, 8,
                    Duration.ofMinutes(1));
            QueueClient client = client(task);
            List<JobRequest> jobs = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                jobs.add(JobRequest.of("push", new Push(i == 17 ? "poison" : "u", i)));
            }
            client.enqueueAll(jobs);
            start(settings("node-a").build(), task);
            // All 40 ran; their outcomes wait in the completer, retried as one batch.
            await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 40);
            block.lift();

            await().atMost(Duration.ofSeconds(10)).until(() -> count("COMPLETED") == 39);
            assertThat(jdbc.queryForObject("SELECT payload ->> 'user' FROM pgqueue.job", String.class))
                .as("only the rejected outcome is left, its job still held").isEqualTo("poison");
            assertThat(runs.get()).isEqualTo(40);
        }
    }

    @Test
    void claimingDoesNotRunAheadOfOutcomesThatCannotBeWritten() throws Exception {
        try (CompletionBlock block = blockCompletions("false")) {
            AtomicInteger runs = new AtomicInteger();
            WorkerTask task = task("push", (TaskHandler<Push>) (payload, context) -> runs.incrementAndGet(), Push.class, 2,
                    Duration.ofMinutes(1));
            QueueClient client = client(task);
            List<JobRequest> jobs = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                jobs.add(JobRequest.of("push", new Push("u", i)));
            }
            client.enqueueAll(jobs);
            // Concurrency 2 + prefetch 4: at most 6 jobs held, finished ones included.
            start(settings("node-a").pools(Map.of("default", new PoolSettings(4, Duration.ofMillis(200)))).build(), task);
            await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() >= 2);
            Thread.sleep(1500);
            int ran = runs.get();
            assertThat(ran).as("jobs run while no outcome could be written").isLessThanOrEqualTo(6);
            Thread.sleep(500);
            assertThat(runs.get()).as("no more claimed meanwhile").isEqualTo(ran);

            block.lift();
            await().atMost(Duration.ofSeconds(30)).until(() -> count("COMPLETED") == 200);
            assertThat(runs.get()).isEqualTo(200);
        }
    }

    @Test
    void aFailureAroundTheHandlerFailsTheAttemptAndFreesTheSlot() {
        TaskHandler<Push> failing = (payload, context) -> {
            throw new IllegalStateException("bad\u0000byte");
        };
        // A custom retry policy that itself throws, on a task with a single slot.
        WorkerTask task = new WorkerTask(TaskDefinition.builder("broken").retryPolicy(attempt -> {
            throw new ArrayIndexOutOfBoundsException(attempt);
        }).build(), cast(failing), Push.class, 1, Duration.ofMinutes(1), "default");
        QueueClient client = client(task);
        long first = client.enqueue("broken", new Push("u", 1)).jobId();
        long second = client.enqueue("broken", new Push("u", 2)).jobId();

        start(settings("node-a").build(), task);

        await().atMost(Duration.ofSeconds(20)).until(() -> state(client, first) == JobState.FAILED
                && state(client, second) == JobState.FAILED);
        assertThat(client.find(first).orElseThrow().lastError()).contains("ArrayIndexOutOfBoundsException");
    }

    @Test
    void aBusyTaskDoesNotStarveScheduledJobsOfAnother() {
        AtomicInteger busyRuns = new AtomicInteger();
        WorkerTask busy = task("busy", (TaskHandler<Long>) (payload, context) -> {
            busyRuns.incrementAndGet();
            Thread.sleep(2);
        }, Long.class, 1, Duration.ofMinutes(1));
        AtomicInteger quietRuns = new AtomicInteger();
        WorkerTask quiet = task("quiet", (TaskHandler<Long>) (payload, context) -> quietRuns.incrementAndGet(), Long.class,
                1, Duration.ofMinutes(1));
        QueueClient client = client(busy, quiet);
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 4000; i++) {
            jobs.add(JobRequest.of("busy", (long) i));
        }
        client.enqueueAll(jobs);
        start(settings("node-a").pollInterval(Duration.ofMillis(500)).build(), busy, quiet);
        await().atMost(Duration.ofSeconds(10)).until(() -> busyRuns.get() > 50);

        // Scheduled: no notification announces it when it becomes due.
        client.enqueue("quiet", 1L, EnqueueOptions.defaults().withDelay(Duration.ofMillis(300)));

        await().atMost(Duration.ofSeconds(3)).until(() -> quietRuns.get() == 1);
        assertThat(count("job", "READY")).as("the busy backlog is still there").isPositive();
    }

    @Test
    void notificationsWakeIdleWorkersLongBeforeThePoll() {
        List<Long> latencies = new java.util.concurrent.CopyOnWriteArrayList<>();
        TaskHandler<Long> handler = (enqueuedAt, context) -> latencies.add(System.nanoTime() - enqueuedAt);
        WorkerTask task = task("ping", handler, Long.class, 2, Duration.ofMinutes(1));
        QueueClient client = client(task);
        start(settings("node-a").pollInterval(Duration.ofMinutes(10)).build(), task);
        await().atMost(Duration.ofSeconds(10)).until(() -> count("job", "READY") == 0);

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
        WorkerTask task = task("ping", (TaskHandler<Long>) (payload, context) -> runs.incrementAndGet(), Long.class, 1,
                Duration.ofMinutes(1));
        QueueClient client = client(task);
        start(settings("node-a").notifications(false).pollInterval(Duration.ofMillis(200)).build(), task);

        client.enqueue("ping", 1L);

        await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 1);
    }

    @Test
    void twoNodesShareTheWorkWithoutRunningAJobTwice() {
        Map<Integer, AtomicInteger> runs = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> perNode = new ConcurrentHashMap<>();
        List<WorkerTask> tasks = new ArrayList<>();
        for (String node : List.of("node-a", "node-b")) {
            tasks.add(task("push", (TaskHandler<Push>) (payload, context) -> {
                runs.computeIfAbsent(payload.n(), n -> new AtomicInteger()).incrementAndGet();
                perNode.computeIfAbsent(node, n -> new AtomicInteger()).incrementAndGet();
                Thread.sleep(1);
            }, Push.class, 4, Duration.ofMinutes(1)));
        }
        QueueClient client = client(tasks.get(0));
        start(settings("node-a").build(), tasks.get(0));
        start(settings("node-b").build(), tasks.get(1));
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            jobs.add(JobRequest.of("push", new Push("u", i)));
        }
        client.enqueueAll(jobs);

        await().atMost(Duration.ofSeconds(60)).until(() -> count("COMPLETED") == 2000);
        assertThat(runs).hasSize(2000);
        assertThat(runs.values()).allMatch(count -> count.get() == 1);
        assertThat(perNode).containsOnlyKeys("node-a", "node-b");
    }

    /**
     * Makes completions (the DELETE out of the active table) fail until {@link CompletionBlock#lift},
     * and always for rows matching the given condition on {@code OLD}.
     */
    private static CompletionBlock blockCompletions(String alwaysRejected) {
        jdbc.execute("CREATE TABLE IF NOT EXISTS pgqueue_block_completions (blocked boolean)");
        jdbc.execute("""
                CREATE OR REPLACE FUNCTION block_completions() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF (%s) OR EXISTS (SELECT 1 FROM pgqueue_block_completions) THEN
                        RAISE EXCEPTION 'completion rejected by the test';
                    END IF;
                    RETURN OLD;
                END $$""".formatted(alwaysRejected));
        jdbc.execute("DROP TRIGGER IF EXISTS block_completions ON pgqueue.job");
        jdbc.execute("CREATE TRIGGER block_completions BEFORE DELETE ON pgqueue.job FOR EACH ROW "
                + "EXECUTE FUNCTION block_completions()");
        jdbc.execute("INSERT INTO pgqueue_block_completions VALUES (true)");
        return new CompletionBlock();
    }

    private static final class CompletionBlock implements AutoCloseable {

        void lift() {
            jdbc.execute("DELETE FROM pgqueue_block_completions");
        }

        @Override
        public void close() {
            lift();
            jdbc.execute("DROP TRIGGER IF EXISTS block_completions ON pgqueue.job");
        }
    }

    @Test
    void completedJobsAreKeptForTheQueuesRetention() {
        // The queue's completed retention decides both whether completed jobs are archived and
        // when the janitor deletes them; the worker settings have no say in it.
        String insert = "INSERT INTO pgqueue.job_finished (id, task, state, priority, payload, headers, schedule_time, "
                + "attempt, max_attempts, created_at, started_at, finished_at) "
                + "VALUES (?, 'push', ?, 0, '1', '{}', now(), 1, 3, now(), now(), now() - CAST(? AS interval))";
        jdbc.update(insert, 1L, "COMPLETED", "10 minutes");
        jdbc.update(insert, 2L, "COMPLETED", "1 minute");
        jdbc.update(insert, 3L, "FAILED", "10 minutes");
        WorkerTask task = task("push", (Push payload, io.pgqueue.TaskContext context) -> {
        }, Push.class, 1, Duration.ofMinutes(1));

        start(QueueConfig.defaults().withCompletedRetention(Duration.ofMinutes(5)),
                settings("janitor").retentionInterval(Duration.ofMillis(100)).build(), task);

        await().atMost(Duration.ofSeconds(20)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM pgqueue.job_finished WHERE id = 1", Long.class) == 0);
        assertThat(jdbc.queryForList("SELECT id FROM pgqueue.job_finished ORDER BY id", Long.class)).containsExactly(2L, 3L);
    }

    private QueueWorkers start(WorkerSettings settings, WorkerTask... tasks) {
        return start(QueueConfig.defaults(), settings, tasks);
    }

    private QueueWorkers start(QueueConfig config, WorkerSettings settings, WorkerTask... tasks) {
        QueueWorkers workers = new QueueWorkers(db.dataSource(), config, settings, List.of(tasks), mapper,
                WorkerExecutors.platformThreads());
        workers.start();
        this.started.add(workers);
        return workers;
    }

    private static WorkerSettings.Builder settings(String node) {
        return WorkerSettings.builder(node);
    }

    private static QueueClient client(WorkerTask... tasks) {
        return QueueClient.create(db.dataSource(), QueueConfig.defaults(),
                TaskRegistry.of(java.util.Arrays.stream(tasks).map(WorkerTask::definition).toList()), mapper);
    }

    private static <P> WorkerTask task(String name, TaskHandler<P> handler, Class<P> type, int concurrency,
            Duration timeout) {
        return new WorkerTask(TaskDefinition.builder(name).build(), cast(handler), type, concurrency, timeout, "default");
    }

    @SuppressWarnings("unchecked")
    private static TaskHandler<Object> cast(TaskHandler<?> handler) {
        return (TaskHandler<Object>) handler;
    }

    private static JobState state(QueueClient client, long id) {
        return client.find(id).orElseThrow().state();
    }

    private static long count(String finishedState) {
        return jdbc.queryForObject("SELECT count(*) FROM pgqueue.job_finished WHERE state = ?", Long.class, finishedState);
    }

    private static long count(String table, String state) {
        return jdbc.queryForObject("SELECT count(*) FROM pgqueue." + table + " WHERE state = ?", Long.class, state);
    }
}
