package io.pgqueue.internal.balance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;

import io.pgqueue.Engines;
import io.pgqueue.EnqueueOptions;
import io.pgqueue.JobRequest;
import io.pgqueue.PgQueue;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.balance.BalancerLeader;
import io.pgqueue.balance.BalancerSettings;
import io.pgqueue.balance.MoveReason;
import io.pgqueue.balance.PartitionBalancer;
import io.pgqueue.balance.RecordedDecision;
import io.pgqueue.internal.shard.PartitionHash;
import io.pgqueue.testing.TestShards;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The balancer on three real databases: one node at a time runs it, it evens out a skewed load by
 * moving partitions (every job still in exactly one place), records each decision, and drains a
 * shard on request.
 */
class BalancerServiceTests {

    private static final TaskRegistry TASKS = TaskRegistry.of(List.of(TaskDefinition.builder("mail").build()));

    private static final int PARTITIONS = 16;

    @RegisterExtension
    final TestShards shards = TestShards.perTest("balance", 3);

    private final List<PgQueue> nodes = new ArrayList<>();

    @AfterEach
    void close() {
        this.nodes.forEach(PgQueue::stop);
    }

    private PgQueue node(boolean balancer) {
        BalancerSettings settings = new BalancerSettings(Duration.ofMillis(300), 1, Duration.ofSeconds(10),
                Duration.ofMinutes(1), 0.15, 0.05, 3, Duration.ofHours(1), Map.of());
        PgQueue node = PgQueue.builder(this.shards.get(0).dataSource())
            .tasks(TASKS)
            .partitions(PARTITIONS)
            .shard("b", this.shards.get(1).dataSource())
            .shard("c", this.shards.get(2).dataSource())
            .statsInterval(Duration.ofMillis(200))
            .balancer(balancer, settings, Duration.ofMinutes(1))
            .migrateSchema(true)
            .build();
        this.nodes.add(node);
        node.start();
        return node;
    }

    @Test
    void oneNodeEvensOutASkewedLoadAndRecordsWhy() {
        PgQueue first = node(true);
        PgQueue second = node(true);
        // All the load on the partitions of the main shard (p % 3 == 0 in a new installation), unevenly.
        int enqueued = 0;
        for (int partition = 0; partition < PARTITIONS; partition += 3) {
            String key = keyOf(partition);
            int jobs = 100 * (partition + 1);
            first.client().enqueueAll(IntStream.range(0, jobs)
                .mapToObj(i -> JobRequest.of("mail", Map.of("n", i), EnqueueOptions.defaults().withPartitionKey(key)))
                .toList());
            enqueued += jobs;
        }
        PartitionBalancer store = first.balancer();

        // A round that read the statistics from before the enqueues sees no load at all (Gini 0): the
        // skew is evened out once moves are recorded and a later round finds the load even.
        await().atMost(Duration.ofSeconds(60)).until(() -> leader(first, second) != null
                && !store.recentDecisions(1).isEmpty()
                && leader(first, second).balancer().lastRound().map(round -> round.gini() < 0.05).orElse(false));

        List<RecordedDecision> decisions = store.recentDecisions(100);
        assertThat(decisions).isNotEmpty().allSatisfy(decision -> {
            assertThat(decision.reason()).isEqualTo("GINI");
            assertThat(decision.outcome()).isEqualTo("MOVED");
            assertThat(decision.source()).isEqualTo("main");
            assertThat(decision.giniAfter()).isLessThan(decision.giniBefore());
        });
        assertThat(decisions.stream().map(RecordedDecision::node).distinct()).as("one node decided").hasSize(1);
        assertThat(store.leader()).get().extracting(BalancerLeader::node).isEqualTo(decisions.get(0).node());
        // Every job is still in exactly one place.
        long total = 0;
        Set<Long> ids = new HashSet<>();
        for (int i = 0; i < 3; i++) {
            List<Long> here = new JdbcTemplate(this.shards.get(i).dataSource()).queryForList("SELECT id FROM pgqueue.job",
                    Long.class);
            total += here.size();
            ids.addAll(here);
        }
        assertThat(total).isEqualTo(enqueued);
        assertThat(ids).hasSize(enqueued);
        assertThat(jobsOn(1) + jobsOn(2)).as("jobs moved off main").isPositive();

        // The leader stops: the other node takes over and counts the recent moves for friction.
        PgQueue leader = leader(first, second);
        PgQueue other = leader == first ? second : first;
        leader.stop();
        await().atMost(Duration.ofSeconds(10)).until(() -> other.balancer().leading());
    }

    @Test
    void aDrainedShardGivesUpEveryPartition() {
        PgQueue node = node(true);
        for (int partition = 0; partition < PARTITIONS; partition++) {
            String key = keyOf(partition);
            node.client().enqueueAll(IntStream.range(0, 20)
                .mapToObj(i -> JobRequest.of("mail", Map.of("n", i), EnqueueOptions.defaults().withPartitionKey(key)))
                .toList());
        }

        node.balancer().drain("c", true);

        await().atMost(Duration.ofSeconds(60)).until(() -> !Engines.of(node).shards().refresh().partitionsPerShard().containsKey("c"));
        assertThat(jobsOn(2)).isZero();
        assertThat(jobsOn(0) + jobsOn(1)).isEqualTo(PARTITIONS * 20L);
        assertThat(node.balancer().recentDecisions(50)).allSatisfy(decision -> {
            assertThat(decision.reason()).isEqualTo("DRAIN");
            assertThat(decision.source()).isEqualTo("c");
        });
        // Counted once the move returned, a moment after the map shows it.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(node.balancer().moves())
            .containsEntry(MoveReason.DRAIN, 5L));
    }

    private static PgQueue leader(PgQueue... nodes) {
        for (PgQueue node : nodes) {
            if (node.balancer().leading()) {
                return node;
            }
        }
        return null;
    }

    private long jobsOn(int shard) {
        return new JdbcTemplate(this.shards.get(shard).dataSource()).queryForObject("SELECT count(*) FROM pgqueue.job",
                Long.class);
    }

    private static String keyOf(int partition) {
        for (int n = 0;; n++) {
            if (PartitionHash.partitionOf("k" + n, PARTITIONS) == partition) {
                return "k" + n;
            }
        }
    }
}
