package io.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import io.pgqueue.TaskGroups.OnFailure;
import io.pgqueue.schedule.Schedule;
import io.pgqueue.schedule.Schedules;
import io.pgqueue.testing.PgBouncer;
import io.pgqueue.testing.TestShards;
import io.pgqueue.testing.TestWorkers;
import io.pgqueue.worker.WorkerSettings;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * The engine through a real PgBouncer: enqueues (single and grouped), claims, heartbeats and
 * outcomes in session pooling with notifications, and in transaction pooling with the settings it
 * needs (prepareThreshold=0, polling instead of LISTEN). Every job runs exactly once, and a job
 * that runs longer than its lease keeps it by heartbeats; across two nodes in transaction pooling,
 * global concurrency, rate limits and group sequences hold (their transaction-scoped advisory
 * locks) and a cron schedule fires each slot once.
 */
class PgBouncerTests {

    @RegisterExtension
    final TestShards databases = TestShards.perTest("bouncer", 1);

    private final List<AutoCloseable> resources = new ArrayList<>();

    /** How often each job ran. */
    private final Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();

    @BeforeEach
    void pgbouncer() {
        assumeThat(PgBouncer.installed()).as("PgBouncer at " + PgBouncer.BINARY + " (Debian's pgbouncer package)").isTrue();
        // The schema is migrated on a direct connection: Flyway holds a session lock.
        PgQueue.builder(this.databases.get(0).dataSource()).tasks(TaskRegistry.of(List.of())).migrateSchema(true).build();
    }

    @AfterEach
    void close() throws Exception {
        for (int i = this.resources.size() - 1; i >= 0; i--) {
            this.resources.get(i).close();
        }
    }

    @Test
    void inSessionPoolingEverythingWorksAndNotificationsWakeTheWorkers() throws Exception {
        PgBouncer bouncer = bouncer("session", 20);
        HikariDataSource dataSource = own(bouncer.dataSource("", 12));
        // Polling every 30 s: only a notification can start a job within seconds.
        PgQueue queue = node(dataSource, TestWorkers.settings("session").pollInterval(Duration.ofSeconds(30))
            .lease(Duration.ofSeconds(2)).heartbeatInterval(Duration.ofMillis(300)));

        drainsEveryJobOnceAndKeepsALongJobsLease(queue, dataSource);
        long single = queue.client().enqueue("work", 0L).jobId();
        await().atMost(Duration.ofSeconds(10)).until(() -> this.runs.containsKey(single));
    }

    @Test
    void inTransactionPoolingWithPreparedStatementsOffAndPollingEverythingWorks() throws Exception {
        PgBouncer bouncer = bouncer("transaction", 4);
        // More clients than server connections: each transaction may run on another server connection.
        HikariDataSource dataSource = own(bouncer.dataSource("prepareThreshold=0", 12));
        PgQueue queue = node(dataSource, TestWorkers.settings("transaction").notifications(false)
            .pollInterval(Duration.ofMillis(100)).lease(Duration.ofSeconds(2)).heartbeatInterval(Duration.ofMillis(300)));

        drainsEveryJobOnceAndKeepsALongJobsLease(queue, dataSource);
    }

    @Test
    void inTransactionPoolingFlowControlGroupsAndSchedulesHoldAcrossTwoNodes() throws Exception {
        PgBouncer bouncer = bouncer("transaction", 4);
        TaskDefinition limited = TaskDefinition.builder("limited").globalConcurrency(2).build();
        TaskDefinition paced = TaskDefinition.builder("paced").rateLimit(RateLimit.of(10, Duration.ofSeconds(1))).build();
        TaskDefinition sequenced = TaskDefinition.builder("sequenced").groups(TaskGroups.sequence(OnFailure.SKIP)).build();
        TaskDefinition tick = TaskDefinition.builder("tick").build();
        TaskRegistry tasks = TaskRegistry.of(List.of(limited, paced, sequenced, tick));
        AtomicInteger running = new AtomicInteger();
        AtomicInteger mostRunning = new AtomicInteger();
        List<Long> pacedStarts = new CopyOnWriteArrayList<>();
        Map<String, List<Integer>> sequences = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> groupRunning = new ConcurrentHashMap<>();
        AtomicInteger groupOverlaps = new AtomicInteger();
        TaskHandler<Integer> limitedHandler = (payload, context) -> {
            mostRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
            Thread.sleep(50);
            running.decrementAndGet();
            count(context);
        };
        TaskHandler<Integer> pacedHandler = (payload, context) -> {
            pacedStarts.add(System.nanoTime());
            count(context);
        };
        TaskHandler<Integer> sequencedHandler = (payload, context) -> {
            String group = "g" + payload / 100;
            if (groupRunning.computeIfAbsent(group, any -> new AtomicInteger()).incrementAndGet() > 1) {
                groupOverlaps.incrementAndGet();
            }
            sequences.computeIfAbsent(group, any -> new CopyOnWriteArrayList<>()).add(payload);
            Thread.sleep(5);
            groupRunning.get(group).decrementAndGet();
            count(context);
        };
        TaskHandler<Object> tickHandler = (payload, context) -> count(context);
        List<PgQueue> nodes = new ArrayList<>();
        for (String node : List.of("first", "second")) {
            HikariDataSource dataSource = own(bouncer.dataSource("prepareThreshold=0", 8));
            PgQueue queue = PgQueue.builder(dataSource).tasks(tasks)
                .schedules(List.of(Schedule.of("every-second", "tick", "* * * * * *")))
                .workers(TestWorkers.settings(node).notifications(false).pollInterval(Duration.ofMillis(100)).build(),
                        List.of(WorkerTask.of(limited, limitedHandler, Integer.class, 4, Duration.ofSeconds(30), "default"),
                                WorkerTask.of(paced, pacedHandler, Integer.class, 4, Duration.ofSeconds(30), "default"),
                                WorkerTask.of(sequenced, sequencedHandler, Integer.class, 4, Duration.ofSeconds(30), "default"),
                                WorkerTask.of(tick, tickHandler, Object.class, 1, Duration.ofSeconds(30), "default")))
                .build();
            this.resources.add(queue::stop);
            nodes.add(queue);
        }
        QueueClient client = nodes.get(0).client();
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            jobs.add(JobRequest.of("limited", i));
            jobs.add(JobRequest.of("paced", i));
        }
        for (int group = 0; group < 3; group++) {
            for (int i = 0; i < 20; i++) {
                int payload = group * 100 + i;
                jobs.add(JobRequest.of("sequenced", payload, EnqueueOptions.defaults().withGroup("g" + group)));
            }
        }
        client.enqueueAll(jobs);
        long started = System.nanoTime();
        nodes.forEach(PgQueue::start);
        HikariDataSource reader = own(bouncer.dataSource("prepareThreshold=0", 1));
        await().atMost(Duration.ofSeconds(60)).until(() -> finished(reader, "limited", "paced", "sequenced") == 140
                && finished(reader, "tick") >= 2);
        long elapsedSeconds = Duration.ofNanos(System.nanoTime() - started).toSeconds();

        assertThat(this.runs).allSatisfy((id, count) -> assertThat(count.get()).as("job " + id).isOne());
        assertThat(mostRunning.get()).as("most limited jobs running at once on both nodes").isBetween(1, 2);
        // 10 per second with a burst of 10: the 40 starts span at least 3 s, less a rate period's rounding.
        assertThat(Duration.ofNanos(pacedStarts.stream().mapToLong(Long::longValue).max().orElseThrow()
                - pacedStarts.stream().mapToLong(Long::longValue).min().orElseThrow())).as("40 paced starts at 10/s")
            .isGreaterThan(Duration.ofMillis(2500));
        assertThat(groupOverlaps.get()).as("jobs of one group running at once").isZero();
        assertThat(sequences).hasSize(3).allSatisfy((group, payloads) -> assertThat(payloads).isSorted().hasSize(20));
        List<String> slots = new JdbcTemplate(reader).queryForList(
                "SELECT headers ->> '" + Schedules.SLOT_HEADER + "' FROM pgqueue.job_finished WHERE task = 'tick'", String.class);
        assertThat(slots).as("one tick per second slot, whichever node fired it")
            .hasSizeLessThanOrEqualTo((int) elapsedSeconds + 2).doesNotContainNull().doesNotHaveDuplicates();
    }

    private void count(TaskContext context) {
        this.runs.computeIfAbsent(context.jobId(), id -> new AtomicInteger()).incrementAndGet();
    }

    private long finished(HikariDataSource dataSource, String... tasks) {
        return new JdbcTemplate(dataSource).queryForObject("SELECT count(*) FROM pgqueue.job_finished WHERE task = ANY(?)",
                Long.class, (Object) tasks);
    }

    private void drainsEveryJobOnceAndKeepsALongJobsLease(PgQueue queue, HikariDataSource dataSource) {
        long slow = queue.client().enqueue("work", -1L).jobId();
        List<JobRequest> batch = new ArrayList<>();
        for (long i = 1; i <= 300; i++) {
            batch.add(JobRequest.of("work", i));
            if (batch.size() == 100) {
                queue.client().enqueueAll(batch);
                batch.clear();
            }
        }
        for (long i = 301; i <= 340; i++) {
            queue.client().enqueue("work", i);
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> finished(dataSource) == 341);
        assertThat(this.runs).hasSize(341).allSatisfy((id, count) -> assertThat(count.get()).as("job " + id).isOne());
        assertThat(new JdbcTemplate(dataSource).queryForObject("SELECT attempt FROM pgqueue.job_finished WHERE id = ?",
                Integer.class, slow)).as("the slow job kept its lease: one attempt").isOne();
        assertThat(new JdbcTemplate(dataSource).queryForObject(
                "SELECT count(*) FROM pgqueue.job_finished WHERE state <> 'COMPLETED'", Long.class)).isZero();
    }

    private long finished(HikariDataSource dataSource) {
        return new JdbcTemplate(dataSource).queryForObject("SELECT count(*) FROM pgqueue.job_finished", Long.class);
    }

    private PgQueue node(HikariDataSource dataSource, WorkerSettings.Builder settings) {
        TaskDefinition work = TaskDefinition.builder("work").maxAttempts(3).build();
        TaskHandler<Long> handler = (payload, context) -> {
            if (payload < 0) {
                // Longer than the lease: only heartbeats keep it.
                Thread.sleep(5_000);
            }
            this.runs.computeIfAbsent(context.jobId(), id -> new AtomicInteger()).incrementAndGet();
        };
        PgQueue queue = PgQueue.builder(dataSource).tasks(TaskRegistry.of(List.of(work)))
            .workers(settings.build(), List.of(WorkerTask.of(work, handler, Long.class, 8, Duration.ofSeconds(30), "default")))
            .build();
        this.resources.add(queue::stop);
        queue.start();
        return queue;
    }

    private PgBouncer bouncer(String mode, int poolSize) throws Exception {
        return own(PgBouncer.start(this.databases.get(0), mode, poolSize));
    }

    private <T extends AutoCloseable> T own(T resource) {
        this.resources.add(resource);
        return resource;
    }
}
