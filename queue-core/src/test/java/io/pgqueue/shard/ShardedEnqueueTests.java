package io.pgqueue.shard;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;

import io.pgqueue.CancelResult;
import io.pgqueue.DedupPolicy;
import io.pgqueue.Engines;
import io.pgqueue.EnqueueOptions;
import io.pgqueue.EnqueueOutcome;
import io.pgqueue.EnqueueResult;
import io.pgqueue.JobFailure;
import io.pgqueue.JobRequest;
import io.pgqueue.JobState;
import io.pgqueue.PgQueue;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.internal.shard.PartitionHash;
import io.pgqueue.internal.shard.PartitionMover;
import io.pgqueue.internal.shard.Shards;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.NewJob;
import io.pgqueue.internal.store.PartitionNotHeldException;
import io.pgqueue.internal.store.PartitionStore;
import io.pgqueue.testing.TestDatabase;
import io.pgqueue.testing.TestShards;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Enqueues on three shards (three databases on the test server): where jobs land, that the shards
 * refuse jobs of partitions they do not hold, and that dedup holds across nodes.
 */
@Order(1)
class ShardedEnqueueTests {

    private static final TaskRegistry TASKS = TaskRegistry.of(List.of(TaskDefinition.builder("mail").build()));

    @RegisterExtension
    final TestShards shards = TestShards.perTest("shard", 3);

    private TestDatabase main;

    private TestDatabase b;

    private TestDatabase c;

    private final List<PgQueue> queues = new ArrayList<>();

    @BeforeEach
    void databases() {
        this.main = this.shards.get(0);
        this.b = this.shards.get(1);
        this.c = this.shards.get(2);
    }

    @AfterEach
    void close() {
        this.queues.forEach(PgQueue::stop);
    }

    private PgQueue node() {
        PgQueue queue = PgQueue.builder(this.main.dataSource())
            .tasks(TASKS)
            .shard("b", this.b.dataSource())
            .shard("c", this.c.dataSource())
            .migrateSchema(true)
            .build();
        this.queues.add(queue);
        return queue;
    }

    @Test
    void aNewInstallationSpreadsItsPartitionsEvenlyAndNumbersItsShards() {
        Shards shards = Engines.of(node()).shards();

        assertThat(shards.sharded()).isTrue();
        assertThat(shards.map().partitionsPerShard()).containsExactly(Map.entry("main", 342), Map.entry("b", 341),
                Map.entry("c", 341));
        assertThat(shards.all()).extracting(Shards.Shard::name, Shards.Shard::number)
            .containsExactly(org.assertj.core.groups.Tuple.tuple("main", 0), org.assertj.core.groups.Tuple.tuple("b", 1),
                    org.assertj.core.groups.Tuple.tuple("c", 2));
        assertThat(held(this.b)).hasSize(341).allMatch(p -> p % 3 == 1);
        // A second node opens the same installation unchanged.
        assertThat(Engines.of(node()).shards().map().version()).isEqualTo(shards.map().version());
    }

    @Test
    void jobsLandOnTheShardOfTheirPartitionWithIdsFromItsRange() {
        PgQueue queue = node();
        for (int i = 0; i < 600; i++) {
            queue.client().enqueue("mail", Map.of("n", i));
        }
        // A batch over several shards goes through the main shard's outbox, all or nothing, with ids from its range.
        List<EnqueueResult> batch = queue.client().enqueueAll(IntStream.range(0, 300)
            .mapToObj(i -> JobRequest.of("mail", Map.of("k", i), EnqueueOptions.defaults().withPartitionKey("tenant-" + i % 7)))
            .toList());
        assertThat(batch).allMatch(result -> result.outcome() == EnqueueOutcome.CREATED && result.jobId() >>> 48 == 0);
        awaitOutboxEmpty();

        long total = 0;
        for (TestDatabase shard : List.of(this.main, this.b, this.c)) {
            JdbcTemplate jdbc = new JdbcTemplate(shard.dataSource());
            long count = jdbc.queryForObject("SELECT count(*) FROM pgqueue.job", Long.class);
            assertThat(count).as("jobs on %s", shard.name()).isGreaterThan(50);
            assertThat(jdbc.queryForList("SELECT DISTINCT partition % 3 FROM pgqueue.job", Integer.class))
                .as("partitions of the jobs on %s", shard.name()).hasSize(1);
            int number = jdbc.queryForObject("SELECT shard_number FROM pgqueue.installation", Integer.class);
            assertThat(jdbc.queryForList("SELECT DISTINCT id >> 48 FROM pgqueue.job WHERE payload ? 'n'", Long.class))
                .containsExactly((long) number);
            total += count;
        }
        assertThat(total).isEqualTo(900);
        // Routing is stable: a key's jobs all go to one partition, the one every node computes.
        int partition = PartitionHash.partitionOf("tenant-3", 1024);
        for (TestDatabase shard : List.of(this.main, this.b, this.c)) {
            List<Integer> partitions = new JdbcTemplate(shard.dataSource()).queryForList(
                    "SELECT DISTINCT partition FROM pgqueue.job WHERE payload->>'n' IN ('3', '10', '17') "
                            + "AND partition = ?", Integer.class, partition);
            assertThat(partitions).hasSizeLessThanOrEqualTo(1);
        }
        assertThat(new JdbcTemplate(shardOf(partition).dataSource()).queryForObject(
                "SELECT count(*) FROM pgqueue.job WHERE partition = ?", Long.class, partition))
            .isGreaterThanOrEqualTo(300 / 7);
    }

    @Test
    void findAndCancelReachTheJobOnItsShard() {
        PgQueue queue = node();
        EnqueueResult onC = queue.client().enqueue("mail", Map.of(), EnqueueOptions.defaults().withDedupKey("order-1"));

        assertThat(PartitionHash.partitionOf("order-1", 1024) % 3).as("order-1's partition is on c").isEqualTo(2);
        assertThat(onC.jobId() >>> 48).isEqualTo(2);
        assertThat(queue.client().find(onC.jobId())).get().extracting(job -> job.state()).isEqualTo(JobState.READY);
        assertThat(queue.client().cancel(onC.jobId())).isEqualTo(CancelResult.CANCELLED);
        assertThat(queue.client().find(onC.jobId())).get().extracting(job -> job.state()).isEqualTo(JobState.CANCELLED);
        assertThat(queue.client().cancel((2L << 48) + 999_999)).isEqualTo(CancelResult.NOT_FOUND);
    }

    @Test
    void operatorsSeeAndReRunFailuresOnEveryShard() {
        PgQueue queue = node();
        long id = queue.client().enqueue("mail", Map.of(), EnqueueOptions.defaults().withDedupKey("order-1")).jobId();
        io.pgqueue.internal.store.JobStore c = Engines.of(queue).shards().find("c").orElseThrow().stores().jobs();
        io.pgqueue.internal.store.ClaimedJob claimed = c.claim(List.of(new io.pgqueue.internal.store.ClaimLimit("mail", 1)), "node/p",
                JobState.RUNNING, Duration.ofMinutes(1)).get(0);
        c.record(List.of(io.pgqueue.internal.store.Outcome.failed(claimed.lease(), "boom")));

        assertThat(queue.admin().recentFailures("mail", 5)).extracting(JobFailure::id).containsExactly(id);
        queue.admin().rerun(id);

        assertThat(queue.client().find(id)).get().extracting(job -> job.state()).isEqualTo(JobState.READY);
        assertThat(count(this.c)).isOne();
    }

    @Test
    void failedJobsFollowTheirPartitionAndAreReRunWhereItIs() {
        PgQueue queue = node();
        String key = "order-9";
        int partition = PartitionHash.partitionOf(key, 1024);
        Shards.Shard source = Engines.of(queue).shards().shardOf(partition);
        Shards.Shard target = Engines.of(queue).shards().all().stream().filter(shard -> shard != source).findFirst().orElseThrow();
        long moved = fail(queue, source, key);
        // Another failure of the partition stays behind on the source, as a job still running there when its
        // partition left would.
        queue.admin().movePartition(partition, target.name());
        long straggler = fail(queue, target, keyIn(partition, "late-"));
        assertThat(PartitionMover.bringFailedJob(target, source, straggler)).isTrue();

        assertThat(finishedOn(target, moved)).as("the failure moved with its partition").isTrue();
        assertThat(finishedOn(source, moved)).isFalse();
        // Re-running everything failed leaves the straggler alone on the shard its partition left.
        assertThat(queue.admin().rerunFailed("mail")).containsExactly(moved);
        assertThat(activeOn(target, moved)).isTrue();
        assertThat(activeOn(source, straggler)).isFalse();

        queue.admin().rerun(straggler);

        assertThat(activeOn(target, straggler)).as("re-run where its partition is").isTrue();
        assertThat(finishedOn(source, straggler)).isFalse();
        assertThat(activeOn(source, straggler)).isFalse();
    }

    @Test
    void aUniqueKeyHeldByACompletedJobStaysHeldThroughTheOutboxAndAfterItsPartitionMoved() {
        PgQueue queue = node();
        DedupPolicy unique = DedupPolicy.unique(Duration.ofMinutes(10), JobState.COMPLETED);
        int partition = 1;
        String key = keyIn(partition, "import-");
        Shards.Shard source = Engines.of(queue).shards().shardOf(partition);
        assertThat(source.name()).isNotEqualTo("main");
        long first = queue.client().enqueue("mail", Map.of(), EnqueueOptions.defaults().withDedup(key, unique)).jobId();
        JobStore jobs = source.stores().jobs();
        jobs.record(List.of(io.pgqueue.internal.store.Outcome.completed(jobs.claim(List.of(
                new io.pgqueue.internal.store.ClaimLimit("mail", 1)), "node/p", JobState.RUNNING, Duration.ofMinutes(1))
            .get(0).lease())));

        // A batch over two shards goes through the main shard's outbox; its relay keeps the key held.
        List<EnqueueResult> batch = queue.client().enqueueAll(List.of(
                JobRequest.of("mail", Map.of(), EnqueueOptions.defaults().withDedup(key, unique)),
                JobRequest.of("mail", Map.of(), EnqueueOptions.defaults().withPartitionKey(keyIn(0, "other-")))));
        assertThat(batch.get(0).outcome()).isEqualTo(EnqueueOutcome.RELAYED);
        awaitOutboxEmpty();
        assertThat(activeWithKey(source, key)).as("the relayed job was not written").isZero();

        // The partition moves; the completed job stays on the shard it finished on, and still holds the key.
        Shards.Shard target = Engines.of(queue).shards().all().stream().filter(shard -> shard != source).findFirst()
            .orElseThrow();
        queue.admin().movePartition(partition, target.name());
        assertThat(queue.client().enqueue("mail", Map.of(), EnqueueOptions.defaults().withDedup(key, unique)))
            .isEqualTo(new EnqueueResult(first, EnqueueOutcome.KEPT_EXISTING));
        assertThat(activeWithKey(target, key)).isZero();
        assertThat(activeWithKey(source, key)).isZero();
    }

    private static long activeWithKey(Shards.Shard shard, String key) {
        return new JdbcTemplate(shard.stores().dataSource()).queryForObject(
                "SELECT count(*) FROM pgqueue.job WHERE dedup_key = ?", Long.class, key);
    }

    private static long fail(PgQueue queue, Shards.Shard shard, String key) {
        long id = queue.client().enqueue("mail", Map.of(), EnqueueOptions.defaults().withDedupKey(key)).jobId();
        JobStore jobs = shard.stores().jobs();
        io.pgqueue.internal.store.ClaimedJob claimed = jobs.claim(List.of(new io.pgqueue.internal.store.ClaimLimit("mail", 1)), "node/p",
                JobState.RUNNING, Duration.ofMinutes(1)).get(0);
        assertThat(claimed.id()).isEqualTo(id);
        jobs.record(List.of(io.pgqueue.internal.store.Outcome.failed(claimed.lease(), "boom")));
        return id;
    }

    private static String keyIn(int partition, String prefix) {
        for (int i = 0;; i++) {
            if (PartitionHash.partitionOf(prefix + i, 1024) == partition) {
                return prefix + i;
            }
        }
    }

    private static boolean finishedOn(Shards.Shard shard, long id) {
        return new JdbcTemplate(shard.stores().dataSource()).queryForObject(
                "SELECT EXISTS (SELECT 1 FROM pgqueue.job_finished WHERE id = ?)", Boolean.class, id);
    }

    private static boolean activeOn(Shards.Shard shard, long id) {
        return new JdbcTemplate(shard.stores().dataSource()).queryForObject(
                "SELECT EXISTS (SELECT 1 FROM pgqueue.job WHERE id = ?)", Boolean.class, id);
    }

    @Test
    void aShardWritesNothingOfAPartitionItDoesNotHold() {
        PgQueue queue = node();
        Shards.Shard c = Engines.of(queue).shards().find("c").orElseThrow();
        int partition = PartitionHash.partitionOf("order-1", 1024);
        NewJob job = new NewJob("mail", "{}", "{}", 0, null, 0, null, 3, "order-1", partition);
        NewJob elsewhere = new NewJob("mail", "{}", "{}", 0, null, 0, null, 3, null, 0);

        assertThatThrownBy(() -> Engines.of(queue).shards().main().stores().jobs().insert(List.of(job)))
            .isInstanceOf(PartitionNotHeldException.class)
            .satisfies(ex -> assertThat(((PartitionNotHeldException) ex).partitions()).containsExactly(partition));
        // A batch with one partition the shard does not hold is written not at all.
        assertThatThrownBy(() -> c.stores().jobs().insert(List.of(job, elsewhere)))
            .isInstanceOf(PartitionNotHeldException.class)
            .satisfies(ex -> assertThat(((PartitionNotHeldException) ex).partitions()).containsExactly(0));
        assertThat(count(this.c) + count(this.main)).isZero();
        assertThat(c.stores().jobs().insert(List.of(job))).hasSize(1).doesNotContainNull();
    }

    @Test
    void aNodeWithAStaleMapWritesToTheShardThatHoldsThePartitionNow() {
        PgQueue stale = node();
        int partition = PartitionHash.partitionOf("order-1", 1024);
        // Partition 545 moves from c to b behind the node's back (as a finished move leaves it).
        new JdbcTemplate(this.c.dataSource()).update("DELETE FROM pgqueue.shard_partition WHERE partition = ?", partition);
        new JdbcTemplate(this.b.dataSource()).update("INSERT INTO pgqueue.shard_partition (partition) VALUES (?)", partition);
        JdbcTemplate coordinator = new JdbcTemplate(this.main.dataSource());
        coordinator.update("UPDATE pgqueue.partition_map SET shard = 'b' WHERE partition = ?", partition);
        coordinator.update("UPDATE pgqueue.partition_map_version SET version = version + 1");
        assertThat(Engines.of(stale).shards().map().shardOf(partition)).isEqualTo("c");

        EnqueueResult result = stale.client().enqueue("mail", Map.of(), EnqueueOptions.defaults().withDedupKey("order-1"));

        assertThat(result.outcome()).isEqualTo(EnqueueOutcome.CREATED);
        assertThat(count(this.b)).isOne();
        assertThat(count(this.c)).isZero();
        assertThat(Engines.of(stale).shards().map().shardOf(partition)).isEqualTo("b");
    }

    @Test
    void dedupHoldsAcrossNodesAndShards() throws Exception {
        List<PgQueue> nodes = List.of(node(), node(), node());
        ExecutorService threads = Executors.newFixedThreadPool(12);
        Map<String, List<EnqueueResult>> byKey = new ConcurrentHashMap<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> calls = new ArrayList<>();
        try {
            for (int t = 0; t < 12; t++) {
                PgQueue node = nodes.get(t % 3);
                calls.add(threads.submit(() -> {
                    start.await();
                    for (int k = 0; k < 100; k++) {
                        String key = "key-" + k;
                        EnqueueResult result = node.client().enqueue("mail", Map.of(), EnqueueOptions.defaults().withDedupKey(key));
                        byKey.computeIfAbsent(key, any -> Collections.synchronizedList(new ArrayList<>())).add(result);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> call : calls) {
                call.get();
            }
        }
        finally {
            threads.shutdownNow();
        }
        assertThat(count(this.main) + count(this.b) + count(this.c)).isEqualTo(100);
        byKey.forEach((key, results) -> {
            assertThat(results).hasSize(12);
            assertThat(results).filteredOn(r -> r.outcome() == EnqueueOutcome.CREATED).hasSize(1);
            assertThat(results).extracting(EnqueueResult::jobId).containsOnly(results.get(0).jobId());
        });
    }

    @Test
    void theSchemaHashesKeysAsTheNodesDo() {
        node();
        JdbcTemplate jdbc = new JdbcTemplate(this.main.dataSource());
        Random random = new Random(17);
        List<String> keys = new ArrayList<>(List.of("", "a", "ab", "abc", "abcd", "order-1", "Ünïcödé ключ", "😀 emoji"));
        for (int i = 0; i < 300; i++) {
            byte[] bytes = new byte[random.nextInt(40)];
            for (int j = 0; j < bytes.length; j++) {
                bytes[j] = (byte) (' ' + random.nextInt(95));
            }
            keys.add(new String(bytes, StandardCharsets.US_ASCII) + (i % 3 == 0 ? "é" : ""));
        }
        for (String key : keys) {
            assertThat(jdbc.queryForObject("SELECT pgqueue.partition_of(?, 1024)", Integer.class, key)).as(key)
                .isEqualTo(PartitionHash.partitionOf(key, 1024));
        }
    }

    @Test
    void refusesADatabaseOfAnotherInstallationAndANodeConfiguredWithoutTheShards() {
        node();
        TestDatabase other = TestDatabase.create("shard_other");
        try {
            PgQueue.builder(other.dataSource()).tasks(TASKS).migrateSchema(true).shard("x", this.b.dataSource()).build();
            throw new AssertionError("expected a refusal");
        }
        catch (ShardException ex) {
            assertThat(ex).hasMessageContaining("The database configured as shard 'x' is shard 'b' (number 1) of installation");
        }
        finally {
            other.close();
        }
        PgQueue unsharded = PgQueue.builder(this.main.dataSource()).tasks(TASKS).build();
        assertThatThrownBy(unsharded::start).isInstanceOf(ShardException.class)
            .hasMessageContaining("coordinates shards [b, c], which hold partitions; configure them under pgqueue.shards");
        assertThatThrownBy(() -> PgQueue.builder(this.main.dataSource()).tasks(TASKS).shard("b", this.b.dataSource()).build())
            .isInstanceOf(ShardException.class)
            .hasMessageContaining("places partitions on shards [c], which are not configured");
    }

    @Test
    void anInstallationWithJobsKeepsEveryPartitionOnItsDatabase() {
        PgQueue unsharded = PgQueue.builder(this.main.dataSource()).tasks(TASKS).migrateSchema(true).build();
        unsharded.client().enqueue("mail", Map.of(), EnqueueOptions.defaults().withDedupKey("order-1"));
        unsharded.stop();

        PgQueue sharded = node();

        assertThat(Engines.of(sharded).shards().map().partitionsPerShard()).containsExactly(Map.entry("main", 1024));
        assertThat(held(this.b)).isEmpty();
        assertThat(sharded.client().enqueue("mail", Map.of(), EnqueueOptions.defaults().withDedupKey("order-1")).outcome())
            .isEqualTo(EnqueueOutcome.KEPT_EXISTING);
        assertThat(sharded.client().enqueue("mail", Map.of()).jobId() >>> 48).isZero();
    }

    @Test
    void aNewInstallationTakesThePartitionCountAskedForAndKeepsIt() {
        PgQueue first = PgQueue.builder(this.main.dataSource()).tasks(TASKS).migrateSchema(true).partitions(64)
            .shard("b", this.b.dataSource()).shard("c", this.c.dataSource()).build();

        assertThat(Engines.of(first).shards().partitions()).isEqualTo(64);
        assertThat(Engines.of(first).shards().map().partitionsPerShard()).containsExactly(Map.entry("main", 22), Map.entry("b", 21),
                Map.entry("c", 21));
        for (TestDatabase shard : List.of(this.main, this.b, this.c)) {
            assertThat(new JdbcTemplate(shard.dataSource()).queryForObject("SELECT partitions FROM pgqueue.installation",
                    Integer.class)).as("count recorded on %s", shard.name()).isEqualTo(64);
        }
        first.client().enqueue("mail", Map.of(), EnqueueOptions.defaults().withDedupKey("order-7"));
        int partition = PartitionHash.partitionOf("order-7", 64);
        assertThat(new JdbcTemplate(shardOf(partition).dataSource()).queryForObject(
                "SELECT partition FROM pgqueue.job WHERE dedup_key = 'order-7'", Integer.class)).isEqualTo(partition);

        // A node that asks for no count routes by the recorded one; one that asks for another is refused.
        assertThat(Engines.of(node()).shards().partitions()).isEqualTo(64);
        assertThatThrownBy(() -> PgQueue.builder(this.main.dataSource()).tasks(TASKS).partitions(1024)
            .shard("b", this.b.dataSource()).shard("c", this.c.dataSource()).build())
            .isInstanceOf(ShardException.class)
            .hasMessageContaining("The installation records 64 partitions, not 1024");
    }

    @Test
    void anUnshardedInstallationTakesItsCountBeforeItsFirstJobOnly() {
        PgQueue created = PgQueue.builder(this.main.dataSource()).tasks(TASKS).migrateSchema(true).partitions(16).build();
        created.open();
        for (int i = 0; i < 200; i++) {
            created.client().enqueue("mail", Map.of(), EnqueueOptions.defaults().withDedupKey("k-" + i));
        }
        created.client().enqueue("mail", Map.of());
        JdbcTemplate jdbc = new JdbcTemplate(this.main.dataSource());
        assertThat(jdbc.queryForObject("SELECT max(partition) FROM pgqueue.job", Integer.class)).isLessThan(16);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM pgqueue.job WHERE partition <> pgqueue.partition_of(dedup_key, 16)",
                Long.class)).isZero();

        PgQueue other = PgQueue.builder(this.main.dataSource()).tasks(TASKS).partitions(32).build();
        assertThatThrownBy(other::open).isInstanceOf(ShardException.class)
            .hasMessageContaining("The installation records 16 partitions, not 32");
        // The other shards join with the recorded count.
        assertThat(Engines.of(node()).shards().map().partitionsPerShard()).containsExactly(Map.entry("main", 16));
        assertThat(new JdbcTemplate(this.b.dataSource()).queryForObject("SELECT partitions FROM pgqueue.installation",
                Integer.class)).isEqualTo(16);
    }

    private void awaitOutboxEmpty() {
        JdbcTemplate jdbc = new JdbcTemplate(this.main.dataSource());
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (jdbc.queryForObject("SELECT count(*) FROM pgqueue.job_outbox", Long.class) > 0) {
            assertThat(System.nanoTime() - deadline).as("outbox relayed in time").isNegative();
            LockSupport.parkNanos(5_000_000);
        }
    }

    private TestDatabase shardOf(int partition) {
        return List.of(this.main, this.b, this.c).get(partition % 3);
    }

    private static List<Integer> held(TestDatabase shard) {
        return new PartitionStore(shard.dataSource(), io.pgqueue.QueueConfig.defaults()).heldPartitions().keySet().stream().toList();
    }

    private static long count(TestDatabase shard) {
        return new JdbcTemplate(shard.dataSource()).queryForObject("SELECT count(*) FROM pgqueue.job", Long.class);
    }
}
