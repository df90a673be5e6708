package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;

import io.pgqueue.ChunkHandler;
import io.pgqueue.ChunkItem;
import io.pgqueue.JobRequest;
import io.pgqueue.JobSnapshot;
import io.pgqueue.JobState;
import io.pgqueue.QueueClient;
import io.pgqueue.TaskDefinition;
import io.pgqueue.retry.RetryPolicy;
import io.pgqueue.testing.TestQueue;
import io.pgqueue.testing.TestWorkers;
import io.pgqueue.worker.ChunkedTaskHandler;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.pgqueue.testing.TestWorkers.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A chunk task on a real PostgreSQL, on two nodes: its jobs reach the handler in chunks of at most
 * the chunk size, and each job's attempt ends as its item says — a failed item is retried alone.
 */
class ChunkTasksTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass().withPoolSize(16);

    @RegisterExtension
    final TestWorkers nodes = TestWorkers.on(queue);

    @Test
    void jobsReachTheHandlerInChunksAndAFailedItemIsRetriedAlone() {
        List<Integer> sizes = new CopyOnWriteArrayList<>();
        Set<Long> failedOnce = ConcurrentHashMap.newKeySet();
        Map<Long, Integer> handled = new ConcurrentHashMap<>();
        ChunkHandler<Integer> index = chunk -> {
            sizes.add(chunk.size());
            for (ChunkItem<Integer> item : chunk) {
                handled.merge(item.context().jobId(), 1, Integer::sum);
                if (item.payload() % 7 == 0 && failedOnce.add(item.context().jobId())) {
                    item.fail(new IllegalStateException("index shard busy"));
                }
            }
        };
        QueueClient client = this.nodes.client(task(index));
        List<Long> ids = client.enqueueAll(IntStream.range(0, 60).mapToObj(i -> JobRequest.of("index", i)).toList())
            .stream().map(result -> result.jobId()).toList();

        this.nodes.start(settings("node-a").build(), task(index));
        this.nodes.start(settings("node-b").build(), task(index));

        await().atMost(Duration.ofSeconds(30)).until(() -> ids.stream()
            .allMatch(id -> client.find(id).map(JobSnapshot::state).orElse(null) == JobState.COMPLETED));
        assertThat(sizes).allMatch(size -> size >= 1 && size <= 5);
        assertThat(sizes).as("chunks were gathered").anyMatch(size -> size > 1);
        for (int i = 0; i < ids.size(); i++) {
            long id = ids.get(i);
            int runs = i % 7 == 0 ? 2 : 1;
            assertThat(handled.get(id)).as("job %s handled", id).isEqualTo(runs);
            assertThat(client.find(id).orElseThrow().attempt()).isEqualTo(runs);
        }
    }

    /** A node's own chunk handler, as each node of an application has its own bean. */
    private static WorkerTask task(ChunkHandler<Integer> handler) {
        return WorkerTask.of(TaskDefinition.builder("index").retryPolicy(RetryPolicy.fixed(Duration.ofMillis(50))).build(),
                new ChunkedTaskHandler<>(handler, 5, Duration.ofMillis(200)), Integer.class, 10, Duration.ofSeconds(30),
                "default");
    }
}
