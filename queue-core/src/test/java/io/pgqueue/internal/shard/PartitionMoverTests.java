package io.pgqueue.internal.shard;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import io.pgqueue.AttemptResult;
import io.pgqueue.Engines;
import io.pgqueue.EnqueueOptions;
import io.pgqueue.JobAttempt;
import io.pgqueue.JobRequest;
import io.pgqueue.PgQueue;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.internal.store.AttemptHistory;
import io.pgqueue.shard.PartitionMoveResult;
import io.pgqueue.shard.ShardException;
import io.pgqueue.testing.TestDatabase;
import io.pgqueue.testing.TestShards;
import io.pgqueue.testing.TestWorkers;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Moving a partition between two shards: a move interrupted at any step (as if its node died)
 * leaves every job in exactly one place and is finished by another node; a move under load loses
 * and duplicates nothing, checked by a recorder.
 */
@Order(1)
class PartitionMoverTests {

    private static final TaskRegistry TASKS = TaskRegistry.of(List.of(TaskDefinition.builder("record").build()));

    @RegisterExtension
    final TestShards shards = TestShards.perTest("move", 2);

    private TestDatabase main;

    private TestDatabase b;

    private final List<PgQueue> nodes = new ArrayList<>();

    private final Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();

    /** How long each handler call takes. */
    private volatile long handlerMillis;

    @BeforeEach
    void databases() {
        this.main = this.shards.get(0);
        this.b = this.shards.get(1);
    }

    @AfterEach
    void close() {
        this.nodes.forEach(PgQueue::stop);
    }

    private PgQueue node(String id, boolean workers) {
        PgQueue.Builder builder = PgQueue.builder(this.main.dataSource())
            .tasks(TASKS)
            .shard("b", this.b.dataSource())
            .migrateSchema(true);
        if (workers) {
            builder.workers(TestWorkers.settings(id).build(), List.of(WorkerTask.of(TaskDefinition.builder("record").build(),
                    (Integer n, TaskContext context) -> {
                        this.runs.computeIfAbsent(context.jobId(), any -> new AtomicInteger()).incrementAndGet();
                        Thread.sleep(this.handlerMillis);
                    }, Integer.class, 4, Duration.ofSeconds(30), "default")));
        }
        PgQueue node = builder.build();
        this.nodes.add(node);
        return node;
    }

    /** A key of partition 0 (on main in a new two-shard installation), the one the tests move. */
    private static String key(int i) {
        for (int n = i * 1000;; n++) {
            if (PartitionHash.partitionOf("p0-" + n, 1024) == 0) {
                return "p0-" + n;
            }
        }
    }

    private List<Long> enqueueInPartitionZero(PgQueue node, int jobs) {
        String key = key(0);
        List<Long> ids = new ArrayList<>();
        for (int from = 0; from < jobs; from += 1000) {
            node.client().enqueueAll(IntStream.range(from, Math.min(jobs, from + 1000))
                .mapToObj(i -> JobRequest.of("record", i, EnqueueOptions.defaults().withPartitionKey(key)))
                .toList()).forEach(result -> ids.add(result.jobId()));
        }
        return ids;
    }

    @Test
    void movesAPartitionsJobsAndItsEnqueuesToTheTarget() {
        PgQueue node = node("node-1", false);
        assertThat(Engines.of(node).shards().map().shardOf(0)).isEqualTo("main");
        List<Long> ids = enqueueInPartitionZero(node, 12_000);
        // A job retried once, with its attempt in its history.
        JobAttempt retried = new JobAttempt(1, AttemptResult.RETRY, "node-0", Instant.parse("2026-01-01T00:00:00Z"),
                Instant.parse("2026-01-01T00:00:01Z"), "java.io.IOException: timeout", List.of(), 0);
        new JdbcTemplate(this.main.dataSource()).update("UPDATE pgqueue.job SET history = jsonb_build_array(CAST(? AS jsonb)) "
                + "WHERE id = ?", AttemptHistory.entry(retried), ids.get(7));
        // A durable job sleeping after two steps.
        new JdbcTemplate(this.main.dataSource()).update("INSERT INTO pgqueue.job_step (job_id, name, seq, kind, result, "
                + "result_type, wake_at, attempt, lease_epoch, started_at) VALUES (?, 'charge', 0, 'STEP', '\"r-1\"', "
                + "'java.lang.String', NULL, 1, 1, now()), (?, 'sleep-1', 1, 'SLEEP', NULL, NULL, now() + interval '1 day', "
                + "1, 1, now())", ids.get(9), ids.get(9));

        PartitionMoveResult result = new PartitionMover(Engines.of(node).shards()).move(0, "b", Duration.ofSeconds(5));

        assertThat(result.jobsMoved()).isEqualTo(12_000);
        assertThat(result.jobsLeft()).isZero();
        assertThat(Engines.of(node).shards().map().shardOf(0)).isEqualTo("b");
        assertThat(Engines.of(node).shards().map().version()).isEqualTo(3);
        assertThat(sorted(ids(this.b))).isEqualTo(sorted(ids));
        assertThat(count(this.main, "job")).isZero();
        assertThat(count(this.main, "job_moving")).isZero();
        assertThat(count(this.main, "partition_move")).isZero();
        assertThat(held(this.main)).doesNotContain(0);
        assertThat(held(this.b)).contains(0);
        // Enqueues follow the partition; the jobs keep their ids.
        long next = node.client().enqueue("record", 1, EnqueueOptions.defaults().withPartitionKey(key(0))).jobId();
        assertThat(next >>> 48).isOne();
        assertThat(node.client().find(ids.get(0))).isPresent();
        assertThat(node.client().attempts(ids.get(7))).as("the history moves with its job").hasValue(List.of(retried));
        assertThat(count(this.main, "job_step")).isZero();
        assertThat(new JdbcTemplate(this.b.dataSource()).queryForList("SELECT name || ':' || coalesce(result::text, '') "
                + "|| ':' || coalesce(CAST(wake_at > now() AS text), '') FROM pgqueue.job_step WHERE job_id = ? ORDER BY seq", String.class, ids.get(9)))
            .as("the durable steps move with their job").containsExactly("charge:\"r-1\":", "sleep-1::true");
        assertThatThrownBy(() -> new PartitionMover(Engines.of(node).shards()).move(0, "b", Duration.ZERO))
            .isInstanceOf(ShardException.class).hasMessageContaining("is on shard 'b' already");
        assertThatThrownBy(() -> new PartitionMover(Engines.of(node).shards()).move(0, "x", Duration.ZERO))
            .isInstanceOf(ShardException.class).hasMessageContaining("There is no shard 'x'");
        assertThatThrownBy(() -> new PartitionMover(Engines.of(node).shards()).move(1024, "b", Duration.ZERO))
            .isInstanceOf(ShardException.class).hasMessageContaining("There is no partition 1024");
    }

    @ParameterizedTest(name = "dies at {0}")
    @EnumSource(PartitionMover.Step.class)
    void aMoveWhoseNodeDiesAtAnyStepLeavesEveryJobInOnePlaceAndIsFinishedByAnother(PartitionMover.Step step) {
        PgQueue node = node("node-1", false);
        List<Long> ids = enqueueInPartitionZero(node, 12_000);
        PartitionMover dying = new PartitionMover(Engines.of(node).shards(), reached -> {
            if (reached == step) {
                throw new IllegalStateException("node died at " + step);
            }
        });

        assertThatThrownBy(() -> dying.move(0, "b", Duration.ofSeconds(5))).hasMessageContaining("node died");

        List<Long> everywhere = new ArrayList<>(ids(this.main));
        everywhere.addAll(ids(this.b));
        everywhere.addAll(new JdbcTemplate(this.main.dataSource()).queryForList(
                "SELECT CAST(job->>'id' AS bigint) FROM pgqueue.job_moving", Long.class));
        Set<Long> onTargetAndStaged = new HashSet<>(ids(this.b));
        // A batch written on the target and not yet dropped from the source is in both, and counted once.
        List<Long> staged = new JdbcTemplate(this.main.dataSource()).queryForList(
                "SELECT CAST(job->>'id' AS bigint) FROM pgqueue.job_moving", Long.class);
        staged.stream().filter(onTargetAndStaged::contains).forEach(everywhere::remove);
        assertThat(sorted(everywhere)).isEqualTo(sorted(ids));
        Set<Long> onSource = new HashSet<>(ids(this.main));
        assertThat(ids(this.b)).as("no job both on the source and on the target").noneMatch(onSource::contains);

        PgQueue other = node("node-2", false);
        List<PartitionMoveResult> resumed = new PartitionMover(Engines.of(other).shards()).resumeAll(Duration.ofSeconds(5));

        assertThat(resumed).hasSize(1);
        assertThat(sorted(ids(this.b))).isEqualTo(sorted(ids));
        assertThat(count(this.main, "job") + count(this.main, "job_moving") + count(this.main, "partition_move")).isZero();
        assertThat(Engines.of(other).shards().refresh().shardOf(0)).isEqualTo("b");
        assertThat(held(this.main)).doesNotContain(0);
    }

    @Test
    void aMoveUnderLoadLosesAndDuplicatesNothing() throws Exception {
        // Jobs that take a millisecond: the two nodes' 8 handlers cannot run the 10,000 jobs before
        // the move starts, so there are READY jobs for it to move while the workers claim beside it.
        this.handlerMillis = 1;
        PgQueue producer = node("node-1", true);
        PgQueue worker = node("node-2", true);
        List<Long> ids = new ArrayList<>(enqueueInPartitionZero(producer, 10_000));
        AtomicBoolean enqueuing = new AtomicBoolean(true);
        List<Long> more = Collections.synchronizedList(new ArrayList<>());
        Thread writer = new Thread(() -> {
            int i = 0;
            while (enqueuing.get()) {
                more.add(producer.client().enqueue("record", i, EnqueueOptions.defaults().withPartitionKey(key(0))).jobId());
                i++;
            }
        });
        producer.start();
        worker.start();
        writer.start();
        Thread.sleep(100);

        PartitionMoveResult result = new PartitionMover(Engines.of(producer).shards()).move(0, "b", Duration.ofSeconds(10));
        Thread.sleep(200);
        enqueuing.set(false);
        writer.join();
        ids.addAll(more);

        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!this.runs.keySet().containsAll(ids) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(this.runs.keySet()).containsAll(ids);
        assertThat(this.runs.values()).allSatisfy(count -> assertThat(count.get()).as("runs of one job").isOne());
        assertThat(result.jobsMoved()).isPositive();
        assertThat(more).isNotEmpty();
        assertThat(more.stream().filter(id -> id >>> 48 == 1)).as("jobs enqueued on the target after the switch").isNotEmpty();
    }

    private static List<Long> ids(TestDatabase shard) {
        return new JdbcTemplate(shard.dataSource()).queryForList("SELECT id FROM pgqueue.job", Long.class);
    }

    /**
     * The same ids in order: two sorted lists are equal exactly when they hold the same ids as often,
     * which AssertJ's any-order comparison checks in time quadratic in the 12,000 ids.
     */
    private static List<Long> sorted(List<Long> ids) {
        return ids.stream().sorted().toList();
    }

    private static long count(TestDatabase shard, String table) {
        return new JdbcTemplate(shard.dataSource()).queryForObject("SELECT count(*) FROM pgqueue." + table, Long.class);
    }

    private static List<Integer> held(TestDatabase shard) {
        return new JdbcTemplate(shard.dataSource()).queryForList("SELECT partition FROM pgqueue.shard_partition", Integer.class);
    }
}
