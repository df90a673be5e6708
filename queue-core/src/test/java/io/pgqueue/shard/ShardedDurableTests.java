package io.pgqueue.shard;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.pgqueue.EnqueueOptions;
import io.pgqueue.Engines;
import io.pgqueue.JobRequest;
import io.pgqueue.PgQueue;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueDefaults;
import io.pgqueue.SignalResult;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskHandler;
import io.pgqueue.internal.shard.PartitionHash;
import io.pgqueue.testing.TestShards;
import io.pgqueue.worker.WorkerSettings;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Durable handlers on a sharded installation: a job on a shard other than the main one records its
 * steps there, gets its signal there, and spawns its children there.
 */
class ShardedDurableTests {

    @RegisterExtension
    final TestShards shards = TestShards.perTest("durable", 2);

    private final List<PgQueue> nodes = new ArrayList<>();

    @AfterEach
    void stop() {
        this.nodes.forEach(PgQueue::stop);
    }

    @Test
    void aFlowOnAnotherShardRecordsItsStepsGetsItsSignalAndAwaitsItsChildThere() {
        WorkerTask flow = task("flow", (String payload, TaskContext context) -> {
            context.step("first", () -> "one");
            String go = context.awaitSignal("go", String.class, Duration.ofMinutes(5)).orElse("none");
            long child = context.spawn("child", "child", go);
            context.recordResult(go + " " + context.awaitChild(child, String.class));
        }, String.class);
        WorkerTask child = task("child", (String payload, TaskContext context) -> context.recordResult("child saw " + payload),
                String.class);
        PgQueue node = PgQueue.builder(this.shards.get(0).dataSource()).shard("b", this.shards.get(1).dataSource())
            .migrateSchema(true)
            .workers(WorkerSettings.builder("node").pollInterval(Duration.ofMillis(100)).build(), List.of(flow, child))
            .build();
        this.nodes.add(node);
        node.start();
        QueueClient client = node.client();
        String key = keyOnShard(node, "b");

        long id = client.enqueue("flow", "x", EnqueueOptions.defaults().withPartitionKey(key)).jobId();
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20))
            .until(() -> client.steps(id).orElseThrow().size() == 2);
        assertThat(client.signal(id, "go", "now")).isEqualTo(SignalResult.WOKEN);

        assertThat(client.await(id, String.class, Duration.ofSeconds(30))).isEqualTo("now child saw now");
        JdbcTemplate b = new JdbcTemplate(this.shards.get(1).dataSource());
        assertThat(b.queryForObject("SELECT count(*) FROM pgqueue.job_step WHERE job_id = ?", Long.class, id))
            .as("the steps on the job's shard").isEqualTo(4);
        long childId = Long.parseLong(client.steps(id).orElseThrow().get(2).result());
        assertThat(b.queryForObject("SELECT count(*) FROM pgqueue.job_finished WHERE id = ?", Long.class, childId))
            .as("the child on its parent's shard").isOne();
    }

    private static String keyOnShard(PgQueue node, String shard) {
        for (int n = 0;; n++) {
            String key = "k-" + n;
            if (Engines.of(node).shards().map().shardOf(PartitionHash.partitionOf(key, 1024)).equals(shard)) {
                return key;
            }
        }
    }

    private static <P> WorkerTask task(String name, TaskHandler<P> handler, Class<P> type) {
        return WorkerTask.of(TaskDefinition.builder(name).maxAttempts(3).build(), handler, type, 4, Duration.ofMinutes(1),
                QueueDefaults.POOL);
    }
}
