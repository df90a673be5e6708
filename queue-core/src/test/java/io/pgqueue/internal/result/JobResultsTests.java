package io.pgqueue.internal.result;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.pgqueue.JobFailedException;
import io.pgqueue.JobNotFinishedException;
import io.pgqueue.JobSnapshot;
import io.pgqueue.JobState;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueDefaults;
import io.pgqueue.Retention;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskHandler;
import io.pgqueue.internal.store.ListenConnection;
import io.pgqueue.testing.TestQueue;
import io.pgqueue.testing.TestWorkers;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static io.pgqueue.testing.TestWorkers.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A job's result read and awaited by its caller on a real PostgreSQL: typed, through find, from a
 * node other than the one that ran it (woken by the end's notification), failures and timeouts,
 * many jobs awaited at once.
 */
class JobResultsTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass().withPoolSize(16);

    @RegisterExtension
    final TestWorkers nodes = TestWorkers.on(queue);

    record Quote(String symbol, int cents) {
    }

    @Test
    void theCallerAwaitsTheTypedResultAndFindShowsItOnceTheJobCompleted() {
        CountDownLatch release = new CountDownLatch(1);
        WorkerTask quote = task("quote", (symbol, context) -> {
            release.await(10, TimeUnit.SECONDS);
            context.recordResult(new Quote(symbol, 4200));
        });
        QueueClient producer = this.nodes.client(quote);
        long id = producer.enqueue("quote", "ACME").jobId();
        this.nodes.start(settings("runner").build(), quote);
        // The caller is another node: a client of its own on the same database, running no workers.
        QueueClient caller = this.nodes.client(quote);

        assertThatThrownBy(() -> caller.await(id, Quote.class, Duration.ofMillis(300)))
            .isInstanceOf(JobNotFinishedException.class).hasMessageContaining("Job " + id + " has not finished");
        assertThat(caller.find(id)).hasValueSatisfying(job -> assertThat(job.result()).isNull());
        release.countDown();

        assertThat(caller.await(id, Quote.class, Duration.ofSeconds(20))).isEqualTo(new Quote("ACME", 4200));
        JobSnapshot found = caller.find(id).orElseThrow();
        assertThat(found.state()).isEqualTo(JobState.COMPLETED);
        assertThat(found.result()).isEqualTo("{\"cents\": 4200, \"symbol\": \"ACME\"}");
        assertThat(caller.await(id, Map.class, Duration.ZERO)).as("awaiting a finished job reads it at once")
            .containsEntry("cents", 4200);
    }

    @Test
    void aJobThatFailedOrRecordedNothingIsToldApart() {
        WorkerTask flaky = task("flaky", (payload, context) -> {
            if (payload.equals("fail")) {
                context.recordResult("from an attempt that then failed");
                throw new IllegalStateException("the upstream said no");
            }
        });
        QueueClient client = this.nodes.client(flaky);
        long failing = client.enqueue("flaky", "fail").jobId();
        long silent = client.enqueue("flaky", "ok").jobId();
        this.nodes.start(settings("runner").build(), flaky);

        assertThatThrownBy(() -> client.await(failing, String.class, Duration.ofSeconds(20)))
            .isInstanceOfSatisfying(JobFailedException.class, ex -> {
                assertThat(ex.job().state()).isEqualTo(JobState.FAILED);
                assertThat(ex.job().result()).as("a failed attempt's result is never read").isNull();
            })
            .hasMessageContaining("ended FAILED after 1 attempt: java.lang.IllegalStateException: the upstream said no");
        assertThat(client.await(silent, String.class, Duration.ofSeconds(20))).isNull();
        assertThatThrownBy(() -> client.await(987654321L, String.class, Duration.ofSeconds(1)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("No job has id 987654321");
    }

    @Test
    void anAwaitInsideATransactionIsRefusedSayingWhy() {
        WorkerTask noop = task("noop", (payload, context) -> {
        });
        QueueClient client = this.nodes.client(noop);
        TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(queue.dataSource()));

        assertThatThrownBy(() -> transaction.executeWithoutResult(status -> {
            long id = client.enqueue("noop", "x").jobId();
            client.await(id, String.class, Duration.ofSeconds(1));
        })).isInstanceOf(IllegalStateException.class).hasMessageContaining("Await after the enqueuing transaction commits");
        assertThatThrownBy(() -> client.await(1, String.class, Duration.ofSeconds(-1)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("zero or positive");
    }

    @Test
    void theEndOfAnAwaitedJobIsNotifiedWithItsIdAndUnawaitedJobsNotifyNothing() throws Exception {
        WorkerTask noop = task("noop", (payload, context) -> context.recordResult(payload.length()));
        QueueClient client = this.nodes.client(noop);
        long awaited = client.enqueue("noop", "awaited").jobId();
        long other = client.enqueue("noop", "other").jobId();
        List<String> payloads = new ArrayList<>();
        try (ListenConnection listening = ListenConnection.open(queue.dataSource(),
                List.of(queue.store().endedChannel()))) {
            assertThat(queue.store().await(awaited)).isTrue();
            this.nodes.start(settings("runner").build(), noop);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (payloads.isEmpty() && System.nanoTime() < deadline) {
                listening.receive(200, (channel, payload) -> payloads.add(payload));
            }
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(20))
                .until(() -> client.find(other).map(JobSnapshot::finished).orElse(false));
            listening.receive(500, (channel, payload) -> payloads.add(payload));
        }
        assertThat(payloads).containsExactly(String.valueOf(awaited));
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM " + queue.config().schema() + ".job_awaiter",
                Long.class)).as("the awaiter's row goes with the notification").isZero();
    }

    @Test
    void retentionDeletesTheAwaitersOfJobsThatLeftWithoutAnEnd() {
        WorkerTask noop = task("noop", (payload, context) -> {
        });
        QueueClient client = this.nodes.client(noop);
        long gone = client.enqueue("noop", "deleted by hand").jobId();
        long waiting = client.enqueue("noop", "still queued").jobId();
        String schema = queue.config().schema();
        assertThat(queue.store().await(gone)).isTrue();
        assertThat(queue.store().await(waiting)).isTrue();
        queue.jdbc().update("DELETE FROM " + schema + ".job WHERE id = ?", gone);
        queue.jdbc().update("UPDATE " + schema + ".job_awaiter SET since = now() - interval '2 hours'");

        queue.store().workflows().purgeFinished(Retention.defaults(), 100);

        assertThat(queue.jdbc().queryForList("SELECT job_id FROM " + schema + ".job_awaiter", Long.class))
            .containsExactly(waiting);
    }

    @Test
    void manyCallersAwaitManyJobsAtOnceAndEachGetsItsOwnResult() throws Exception {
        WorkerTask square = task("square", (payload, context) -> context.recordResult(Integer.parseInt(payload)
                * Integer.parseInt(payload)));
        QueueClient client = this.nodes.client(square);
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            ids.add(client.enqueue("square", String.valueOf(i)).jobId());
        }
        List<CompletableFuture<JobSnapshot>> futures = ids.stream().map(client::whenFinished).toList();
        this.nodes.start(settings("runner-a").build(), square);
        this.nodes.start(settings("runner-b").build(), square);

        CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        for (int i = 0; i < ids.size(); i++) {
            JobSnapshot job = futures.get(i).get();
            assertThat(job.id()).isEqualTo(ids.get(i));
            assertThat(job.result()).isEqualTo(String.valueOf(i * i));
        }
    }

    private static WorkerTask task(String name, TaskHandler<String> handler) {
        return WorkerTask.of(TaskDefinition.builder(name).maxAttempts(1).build(), handler, String.class, 4,
                Duration.ofMinutes(1), QueueDefaults.POOL);
    }
}
