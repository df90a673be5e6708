package io.pgqueue.shard;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import java.util.stream.IntStream;

import javax.sql.DataSource;

import io.pgqueue.Engines;
import io.pgqueue.EnqueueOptions;
import io.pgqueue.JobRequest;
import io.pgqueue.JobSnapshot;
import io.pgqueue.PgQueue;
import io.pgqueue.RateLimit;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.internal.shard.PartitionHash;
import io.pgqueue.shard.ShardException;
import io.pgqueue.testing.TestDatabase;
import io.pgqueue.testing.TestShards;
import io.pgqueue.testing.TestWorkers;
import io.pgqueue.worker.PoolSettings;
import io.pgqueue.worker.PoolState;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Worker nodes on three shards (three databases on the test server): every job runs exactly once
 * wherever it lives, a node holds no more than one shard's worth of jobs per pool, and a shard
 * that is down holds up only its own jobs. Checked by a recorder.
 */
@Order(1)
class ShardedWorkersTests {

    private static final int CONCURRENCY = 4;

    @RegisterExtension
    final TestShards shards = TestShards.perTest("shard", 3);

    private TestDatabase main;

    private TestDatabase b;

    private TestDatabase c;

    /** Shard c's connections, which fail while {@link #cDown} is set. */
    private final AtomicBoolean cDown = new AtomicBoolean();

    private final List<PgQueue> nodes = new ArrayList<>();

    private final Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();

    @BeforeEach
    void databases() {
        this.main = this.shards.get(0);
        this.b = this.shards.get(1);
        this.c = this.shards.get(2);
    }

    @AfterEach
    void close() {
        this.nodes.forEach(PgQueue::stop);
    }

    private PgQueue node(String id) {
        WorkerTask task = WorkerTask.of(TaskDefinition.builder("record").build(), (Integer n, TaskContext context) -> {
            this.runs.computeIfAbsent(context.jobId(), any -> new AtomicInteger()).incrementAndGet();
        }, Integer.class, CONCURRENCY, Duration.ofSeconds(30), "default");
        PgQueue node = PgQueue.builder(this.main.dataSource())
            .shard("b", this.b.dataSource())
            .shard("c", switchable(this.c.dataSource(), this.cDown))
            .migrateSchema(true)
            .workers(TestWorkers.settings(id).build(), List.of(task))
            .build();
        this.nodes.add(node);
        return node;
    }

    @Test
    void twoNodesOfFourThreadsRunTwentyThousandJobsOnThreeShardsExactlyOnce() throws Exception {
        PgQueue producer = node("node-1");
        for (int from = 0; from < 20_000; from += 500) {
            producer.client().enqueueAll(IntStream.range(from, from + 500)
                .mapToObj(i -> JobRequest.of("record", i, EnqueueOptions.defaults().withPartitionKey("k" + i)))
                .toList());
        }
        // Batches over several shards go through the outbox: wait until it is relayed.
        long relayDeadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (new JdbcTemplate(this.main.dataSource()).queryForObject("SELECT count(*) FROM pgqueue.job_outbox", Long.class) > 0
                && System.nanoTime() < relayDeadline) {
            Thread.sleep(10);
        }
        assertThat(List.of(this.main, this.b, this.c)).allSatisfy(shard -> assertThat(active(shard)).isGreaterThan(5_000));
        io.pgqueue.observe.QueueStats counted = producer.stats().refresh();
        assertThat(counted.task("record").ready()).as("ready jobs summed over the shards").isEqualTo(20_000);
        assertThat(counted.shards()).containsOnlyKeys("main", "b", "c");
        assertThat(counted.shards().get("b").task("record").ready()).isEqualTo(active(this.b));
        PgQueue other = node("node-2");
        int bound = CONCURRENCY + PoolSettings.defaults().maxPrefetch();
        int mostHeld = 0;

        producer.start();
        other.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (this.runs.size() < 20_000 && System.nanoTime() < deadline) {
            for (PgQueue node : List.of(producer, other)) {
                for (PoolState pool : Engines.of(node).workers().orElseThrow().pools()) {
                    mostHeld = Math.max(mostHeld, pool.busy() + pool.buffered());
                }
            }
            Thread.sleep(5);
        }

        assertThat(this.runs).hasSize(20_000);
        assertThat(this.runs.values()).allSatisfy(count -> assertThat(count.get()).isOne());
        assertThat(mostHeld).as("jobs held by a node's pool at once, over three shards").isLessThanOrEqualTo(bound);
        awaitEmpty();
        long completed = 0;
        for (TestDatabase shard : List.of(this.main, this.b, this.c)) {
            completed += new JdbcTemplate(shard.dataSource()).queryForObject(
                    "SELECT count(*) FROM pgqueue.job_finished WHERE state = 'COMPLETED'", Long.class);
        }
        assertThat(completed).isEqualTo(20_000);
    }

    @Test
    void aShardThatIsDownHoldsUpOnlyItsOwnJobs() throws Exception {
        PgQueue node = node("node-1");
        node.start();
        this.cDown.set(true);
        List<Long> elsewhere = new ArrayList<>();
        for (int i = 0; elsewhere.size() < 200; i++) {
            String key = "k" + i;
            if (!Engines.of(node).shards().map().shardOf(PartitionHash.partitionOf(key, 1024)).equals("c")) {
                elsewhere.add(node.client().enqueue("record", i, EnqueueOptions.defaults().withPartitionKey(key)).jobId());
            }
        }
        awaitRuns(elsewhere, Duration.ofSeconds(20));
        io.pgqueue.observe.QueueStats stats = node.stats().refresh();
        assertThat(stats.error()).hasMessageContaining("Shard 'c'");
        assertThat(stats.shards().get("c").error()).isNotNull();
        assertThat(stats.shards().get("b").error()).isNull();

        this.cDown.set(false);
        assertThat(node.stats().refresh().error()).isNull();
        List<Long> onC = new ArrayList<>();
        for (int i = 0; onC.size() < 50; i++) {
            String key = "c" + i;
            if (Engines.of(node).shards().map().shardOf(PartitionHash.partitionOf(key, 1024)).equals("c")) {
                onC.add(node.client().enqueue("record", i, EnqueueOptions.defaults().withPartitionKey(key)).jobId());
            }
        }
        awaitRuns(onC, Duration.ofSeconds(20));
        assertThat(onC).allMatch(id -> id >>> 48 == 2);
    }

    @Test
    void aWorkerNodeReadsTheMapAsSoonAsItsChangeIsAnnounced() throws Exception {
        PgQueue node = node("node-1");
        // Only the workers: no periodic check of the map's version runs on this node.
        node.startWorkers();
        long before = Engines.of(node).shards().map().version();
        Thread.sleep(500);

        JdbcTemplate coordinator = new JdbcTemplate(this.main.dataSource());
        coordinator.update("UPDATE pgqueue.partition_map SET shard = 'c' WHERE partition = 0");
        coordinator.queryForList("WITH bumped AS (UPDATE pgqueue.partition_map_version SET version = version + 1 "
                + "RETURNING version) SELECT pg_notify('pgqueue.partition_map', CAST(version AS text)) FROM bumped");

        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (Engines.of(node).shards().map().version() == before && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(Engines.of(node).shards().map().version()).isEqualTo(before + 1);
        assertThat(Engines.of(node).shards().map().shardOf(0)).isEqualTo("c");
    }

    private void awaitRuns(List<Long> ids, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!ids.stream().allMatch(this.runs::containsKey) && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(ids).allMatch(this.runs::containsKey);
    }

    private void awaitEmpty() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < deadline && active(this.main) + active(this.b) + active(this.c) > 0) {
            Thread.sleep(20);
        }
        assertThat(active(this.main) + active(this.b) + active(this.c)).isZero();
    }

    @Test
    void aCallerAwaitsJobsOnOtherShardsWokenByEachShardsNotification() {
        CountDownLatch release = new CountDownLatch(1);
        WorkerTask square = WorkerTask.of(TaskDefinition.builder("square").build(), (Integer n, TaskContext context) -> {
            release.await(30, TimeUnit.SECONDS);
            context.recordResult(n * n);
        }, Integer.class, CONCURRENCY, Duration.ofSeconds(60), "default");
        // Polls every minute: a job's end seen within seconds was notified by its shard.
        PgQueue node = PgQueue.builder(this.main.dataSource()).shard("b", this.b.dataSource())
            .shard("c", this.c.dataSource()).migrateSchema(true)
            .workers(TestWorkers.settings("awaited").pollInterval(Duration.ofMinutes(1)).build(), List.of(square))
            .build();
        this.nodes.add(node);
        node.start();
        Map<String, Long> jobByShard = new TreeMap<>();
        for (int i = 0; jobByShard.size() < 3 && i < 200; i++) {
            long id = node.client().enqueue("square", i, EnqueueOptions.defaults().withPartitionKey("k" + i)).jobId();
            for (Map.Entry<String, TestDatabase> shard : Map.of("main", this.main, "b", this.b, "c", this.c).entrySet()) {
                if (new JdbcTemplate(shard.getValue().dataSource()).queryForObject("SELECT (SELECT count(*) FROM "
                        + "pgqueue.job WHERE id = ?) + (SELECT count(*) FROM pgqueue.job_finished WHERE id = ?)", Long.class,
                        id, id) > 0) {
                    jobByShard.putIfAbsent(shard.getKey(), id);
                }
            }
        }
        assertThat(jobByShard).containsOnlyKeys("b", "c", "main");
        // The other shards' jobs only: a notification on main would have the awaiter read every shard.
        Map<String, CompletableFuture<JobSnapshot>> ends = new TreeMap<>();
        ends.put("b", node.client().whenFinished(jobByShard.get("b")));
        ends.put("c", node.client().whenFinished(jobByShard.get("c")));
        assertThat(ends.values()).noneMatch(CompletableFuture::isDone);

        release.countDown();

        ends.forEach((shard, end) -> {
            JobSnapshot job = end.orTimeout(30, TimeUnit.SECONDS).join();
            int payload = Integer.parseInt(job.payload());
            assertThat(job.result()).as("the job on %s", shard).isEqualTo(String.valueOf(payload * payload));
        });
    }

    @Test
    void aGlobalConcurrencyHoldsAcrossTheShards() {
        int limit = 3;
        AtomicInteger running = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        WorkerTask task = WorkerTask.of(TaskDefinition.builder("limited").globalConcurrency(limit).build(),
                (Integer n, TaskContext context) -> {
                    most.accumulateAndGet(running.incrementAndGet(), Math::max);
                    try {
                        Thread.sleep(20);
                    }
                    finally {
                        running.decrementAndGet();
                    }
                    this.runs.computeIfAbsent(context.jobId(), any -> new AtomicInteger()).incrementAndGet();
                }, Integer.class, 12, Duration.ofSeconds(30), "default");
        PgQueue node = PgQueue.builder(this.main.dataSource()).shard("b", this.b.dataSource()).shard("c", this.c.dataSource())
            .migrateSchema(true).workers(TestWorkers.settings("node-1").build(), List.of(task)).build();
        this.nodes.add(node);
        for (int i = 0; i < 150; i++) {
            node.client().enqueue("limited", i, EnqueueOptions.defaults().withPartitionKey("tenant-" + i));
        }
        assertThat(List.of(this.main, this.b, this.c)).allSatisfy(shard -> assertThat(active(shard)).isGreaterThan(20));
        node.start();
        await().atMost(Duration.ofSeconds(60)).until(() -> this.runs.size() == 150);

        // Each shard runs its share (1 of 3 here): never more than the limit across the installation.
        assertThat(most.get()).as("jobs running at once on three shards").isLessThanOrEqualTo(limit);
        assertThat(this.runs.values()).allSatisfy(count -> assertThat(count.get()).isEqualTo(1));
    }

    @Test
    void theTestKitRefusesAShardedQueueSayingWhatToDo() {
        PgQueue node = node("node-1");
        assertThatThrownBy(() -> node.testSupport(List.of())).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("this one has shards [main, b, c]")
            .hasMessageContaining("leave pgqueue.shards (PgQueue.Builder.shard) out of the tests' configuration");
    }

    @Test
    void aGlobalLimitBelowTheShardCountIsRefusedSayingWhatToSet() {
        PgQueue.Builder builder = PgQueue.builder(this.main.dataSource()).shard("b", this.b.dataSource())
            .shard("c", this.c.dataSource()).migrateSchema(true)
            .tasks(TaskRegistry.of(TaskDefinition.builder("scarce").globalConcurrency(2).build()));
        assertThatThrownBy(builder::build).isInstanceOf(ShardException.class)
            .hasMessageContaining("Task 'scarce' has a global-concurrency 2 on 3 shards")
            .hasMessageContaining("set pgqueue.tasks.scarce.global-concurrency");
        PgQueue.Builder rated = PgQueue.builder(this.main.dataSource()).shard("b", this.b.dataSource())
            .shard("c", this.c.dataSource())
            .tasks(TaskRegistry.of(TaskDefinition.builder("slow").rateLimit(new RateLimit(2, Duration.ofSeconds(1), 1))
                .build()));
        assertThatThrownBy(rated::build).isInstanceOf(ShardException.class)
            .hasMessageContaining("Task 'slow' has a rate of 2 per PT1S on 3 shards");
    }

    private static long active(TestDatabase shard) {
        return new JdbcTemplate(shard.dataSource()).queryForObject("SELECT count(*) FROM pgqueue.job", Long.class);
    }

    /** A DataSource whose connections fail while the switch is set, as if its server were down. */
    private static DataSource switchable(DataSource target, AtomicBoolean down) {
        return new DataSource() {

            @Override
            public Connection getConnection() throws SQLException {
                if (down.get()) {
                    throw new SQLException("Connection refused (shard down in the test)", "08001");
                }
                return target.getConnection();
            }

            @Override
            public Connection getConnection(String username, String password) throws SQLException {
                return getConnection();
            }

            @Override
            public PrintWriter getLogWriter() throws SQLException {
                return target.getLogWriter();
            }

            @Override
            public void setLogWriter(PrintWriter out) throws SQLException {
                target.setLogWriter(out);
            }

            @Override
            public void setLoginTimeout(int seconds) throws SQLException {
                target.setLoginTimeout(seconds);
            }

            @Override
            public int getLoginTimeout() throws SQLException {
                return target.getLoginTimeout();
            }

            @Override
            public Logger getParentLogger() throws SQLFeatureNotSupportedException {
                return target.getParentLogger();
            }

            @Override
            public <T> T unwrap(Class<T> type) throws SQLException {
                return target.unwrap(type);
            }

            @Override
            public boolean isWrapperFor(Class<?> type) throws SQLException {
                return target.isWrapperFor(type);
            }
        };
    }
}
