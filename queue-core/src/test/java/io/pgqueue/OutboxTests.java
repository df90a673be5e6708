package io.pgqueue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;

import io.pgqueue.internal.enqueue.Duplicates;
import io.pgqueue.internal.enqueue.OutboxRelay;
import io.pgqueue.internal.enqueue.PayloadWriter;
import io.pgqueue.internal.shard.PartitionHash;
import io.pgqueue.internal.shard.Shards;
import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.internal.store.OutboxStore;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.testing.TestDatabase;
import io.pgqueue.testing.TestShards;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Transactional enqueue across shards: a job enqueued in a transaction on the main shard exists on
 * its own shard if and only if the transaction commits, exactly once, even when the relay dies
 * between writing a shard and clearing the outbox.
 */
@Order(1)
class OutboxTests {

    private static final TaskRegistry TASKS = TaskRegistry.of(List.of(TaskDefinition.builder("mail").build(),
            TaskDefinition.builder("sync").dedupPolicy(DedupPolicy.replaceIfReady()).build()));

    @RegisterExtension
    final TestShards shards = TestShards.perTest("outbox", 3);

    private TestDatabase main;

    private TestDatabase b;

    private TestDatabase c;

    private PgQueue queue;

    private TransactionTemplate transactions;

    @BeforeEach
    void open() {
        this.main = this.shards.get(0);
        this.b = this.shards.get(1);
        this.c = this.shards.get(2);
        this.queue = PgQueue.builder(this.main.dataSource())
            .tasks(TASKS)
            .shard("b", this.b.dataSource())
            .shard("c", this.c.dataSource())
            .migrateSchema(true)
            .build();
        this.transactions = new TransactionTemplate(new DataSourceTransactionManager(this.main.dataSource()));
    }

    @AfterEach
    void close() {
        this.queue.stop();
    }

    @Test
    void jobsEnqueuedInATransactionThatRollsBackAppearOnNoShard() {
        this.transactions.executeWithoutResult(status -> {
            this.queue.client().enqueueAll(requests(0, 90));
            new JdbcTemplate(this.main.dataSource()).update("CREATE TABLE business_change (id int)");
            status.setRollbackOnly();
        });
        Engines.of(this.queue).enqueuer().relay().relayOnce();

        assertThat(jobs(this.main) + jobs(this.b) + jobs(this.c) + outbox()).isZero();
    }

    @Test
    void jobsEnqueuedInATransactionThatCommitsReachTheirShardsOnce() {
        List<EnqueueResult> results = this.transactions.execute(status -> this.queue.client().enqueueAll(requests(0, 90)));
        awaitOutboxEmpty();

        assertThat(jobs(this.main) + jobs(this.b) + jobs(this.c)).isEqualTo(90);
        assertThat(jobs(this.b)).isPositive();
        assertThat(jobs(this.c)).isPositive();
        for (TestDatabase shard : List.of(this.main, this.b, this.c)) {
            assertThat(new JdbcTemplate(shard.dataSource()).queryForList("SELECT DISTINCT partition % 3 FROM pgqueue.job",
                    Integer.class)).hasSize(1);
        }
        assertThat(results).extracting(EnqueueResult::jobId)
            .allSatisfy(id -> assertThat(this.queue.client().find(id)).isPresent());
        assertThat(marks(this.b) + marks(this.c)).as("relay marks left").isZero();
    }

    @Test
    void aTransactionWhoseJobsAllLiveOnTheMainShardWritesThemThereDirectly() {
        String key = keyIn(0);
        this.transactions.executeWithoutResult(status -> this.queue.client().enqueue("mail", Map.of(),
                EnqueueOptions.defaults().withPartitionKey(key)));

        assertThat(jobs(this.main)).isOne();
        assertThat(outbox()).isZero();
    }

    @Test
    void aRelayThatDiesAfterTheShardCommittedWritesNothingTwice() {
        // No relay runs on this node: the test plays the relays.
        this.queue.client().close();
        this.transactions.executeWithoutResult(status -> this.queue.client().enqueueAll(requests(0, 60)));
        Shards shards = Engines.of(this.queue).shards();
        Shards.Shard b = shards.find("b").orElseThrow();
        int onB = (int) IntStream.range(0, 60).filter(i -> shardOfKey("k" + i).equals("b")).count();

        // The relay locks the rows, writes shard b and commits there, then dies: PostgreSQL rolls
        // back its transaction on the main shard, and the rows stay in the outbox.
        new TransactionTemplate(new DataSourceTransactionManager(this.main.dataSource())).executeWithoutResult(status -> {
            List<OutboxStore.Pending> rows = shards.main().outbox().lockPending(500).stream()
                .filter(row -> shards.map().shardOf(row.partition()).equals("b"))
                .toList();
            new TransactionTemplate(new DataSourceTransactionManager(this.b.dataSource()))
                .executeWithoutResult(inner -> b.outbox().relay(rows, b.stores().jobs().channel(""), Set.of()));
            status.setRollbackOnly();
        });
        assertThat(jobs(this.b)).isEqualTo(onB);
        assertThat(outbox()).isEqualTo(60 - jobs(this.main));
        // Meanwhile shard b's workers run those jobs: they leave its job table.
        List<Lease> leases = b.stores().jobs().claim(List.of(new ClaimLimit("mail", 100)), "node/p", JobState.RUNNING,
                Duration.ofMinutes(1)).stream().map(ClaimedJob::lease).toList();
        assertThat(leases).hasSize(onB);
        b.stores().jobs().record(leases.stream().map(Outcome::completed).toList());
        assertThat(jobs(this.b)).isZero();

        // Another relay takes the rows over: the marks keep it from writing b's jobs again.
        OutboxRelay relay = new OutboxRelay(shards,
                new Duplicates(TASKS, new PayloadWriter(JsonMapper.builder().build(), QueueConfig.defaults().maxPayloadBytes(), PayloadEncryption.NONE),
                        shards));
        while (relay.relayOnce() > 0) {
            // until the outbox is empty
        }

        assertThat(outbox()).isZero();
        assertThat(jobs(this.b)).as("b's jobs, which ran once already").isZero();
        assertThat(jobs(this.main) + jobs(this.c)).isEqualTo(60 - onB);
        assertThat(new JdbcTemplate(this.b.dataSource()).queryForObject(
                "SELECT count(*) FROM pgqueue.job_finished WHERE state = 'COMPLETED'", Long.class)).isEqualTo(onB);
        assertThat(marks(this.b) + marks(this.c)).isZero();
    }

    @Test
    void aRelayedDuplicateIsResolvedOnItsShardByTheTasksPolicy() {
        String key = keyIn(1);
        EnqueueResult first = this.queue.client().enqueue("sync", Map.of("v", 1), EnqueueOptions.defaults().withDedupKey(key));
        assertThat(first.outcome()).isEqualTo(EnqueueOutcome.CREATED);

        EnqueueResult second = this.transactions.execute(status -> this.queue.client().enqueue("sync", Map.of("v", 2),
                EnqueueOptions.defaults().withDedupKey(key)));
        assertThat(second.outcome()).isEqualTo(EnqueueOutcome.RELAYED);
        awaitOutboxEmpty();

        assertThat(jobs(this.b)).isOne();
        assertThat(new JdbcTemplate(this.b.dataSource()).queryForObject("SELECT payload->>'v' FROM pgqueue.job WHERE id = ?",
                String.class, first.jobId())).isEqualTo("2");
    }

    private static List<JobRequest> requests(int from, int to) {
        return IntStream.range(from, to)
            .mapToObj(i -> JobRequest.of("mail", Map.of("n", i), EnqueueOptions.defaults().withPartitionKey("k" + i)))
            .toList();
    }

    /** A key whose partition is on the shard of the given number (main 0, b 1, c 2). */
    private static String keyIn(int shard) {
        for (int i = 0;; i++) {
            if (PartitionHash.partitionOf("key-" + i, 1024) % 3 == shard) {
                return "key-" + i;
            }
        }
    }

    private String shardOfKey(String key) {
        return Engines.of(this.queue).shards().map().shardOf(PartitionHash.partitionOf(key, 1024));
    }

    private void awaitOutboxEmpty() {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (outbox() > 0) {
            assertThat(System.nanoTime() - deadline).as("outbox relayed in time").isNegative();
            LockSupport.parkNanos(5_000_000);
        }
    }

    private long outbox() {
        return new JdbcTemplate(this.main.dataSource()).queryForObject("SELECT count(*) FROM pgqueue.job_outbox", Long.class);
    }

    private static long jobs(TestDatabase shard) {
        return new JdbcTemplate(shard.dataSource()).queryForObject("SELECT count(*) FROM pgqueue.job", Long.class);
    }

    private static long marks(TestDatabase shard) {
        return new JdbcTemplate(shard.dataSource()).queryForObject("SELECT count(*) FROM pgqueue.job_relayed", Long.class);
    }
}
