package io.pgqueue.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.pgqueue.AttemptResult;
import io.pgqueue.JobAttempt;
import io.pgqueue.JobState;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueDefaults;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskHandler;
import io.pgqueue.TaskSnoozedException;
import io.pgqueue.internal.store.AttemptHistory;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.retry.RetryPolicy;
import io.pgqueue.testing.TestQueue;
import io.pgqueue.testing.TestWorkers;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.pgqueue.testing.TestWorkers.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A job's attempt history on a real PostgreSQL: every attempt of a task that keeps one, with the
 * lines its handler logged, written under the attempt's lease, a rescued attempt added by the
 * rescue, the newest attempts kept, and nothing written for a task that keeps none.
 */
class AttemptHistoryTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(TaskDefinition.builder("kept").history(true).build(),
            TaskDefinition.builder("plain").build()).withPoolSize(12);

    @RegisterExtension
    final TestWorkers nodes = TestWorkers.on(queue);

    @Test
    void eachAttemptIsKeptWithItsJobWithTheLinesItsHandlerLoggedOnEitherNode() {
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        WorkerTask importer = task("import", true, (payload, context) -> {
            int run = runs.computeIfAbsent(context.jobId(), id -> new AtomicInteger()).incrementAndGet();
            context.log("run " + run + " of " + payload);
            if (run == 1) {
                context.logger().warn("rows {} of {} unreadable", 3, 10);
                throw new IllegalStateException("disk full");
            }
            if (run == 2) {
                throw new TaskSnoozedException(Duration.ofMillis(50));
            }
        });
        QueueClient client = this.nodes.client(importer);
        List<Long> ids = List.of(client.enqueue("import", "a.csv").jobId(), client.enqueue("import", "b.csv").jobId());
        Instant enqueued = Instant.now();
        this.nodes.start(settings("node-a").build(), importer);
        this.nodes.start(settings("node-b").build(), importer);

        for (long id : ids) {
            await().atMost(Duration.ofSeconds(20)).until(() -> client.find(id).orElseThrow().state() == JobState.COMPLETED);
            List<JobAttempt> attempts = client.attempts(id).orElseThrow();
            assertThat(attempts).extracting(JobAttempt::attempt, JobAttempt::outcome).containsExactly(
                    org.assertj.core.groups.Tuple.tuple(1, AttemptResult.RETRY),
                    org.assertj.core.groups.Tuple.tuple(2, AttemptResult.SNOOZED),
                    org.assertj.core.groups.Tuple.tuple(2, AttemptResult.COMPLETED));
            JobAttempt first = attempts.get(0);
            assertThat(first.error()).startsWith("java.lang.IllegalStateException: disk full");
            assertThat(first.log()).extracting(JobAttempt.LogLine::level, JobAttempt.LogLine::message).containsExactly(
                    org.assertj.core.groups.Tuple.tuple("INFO", "run 1 of " + (id == ids.get(0) ? "a.csv" : "b.csv")),
                    org.assertj.core.groups.Tuple.tuple("WARN", "rows 3 of 10 unreadable"));
            assertThat(attempts.get(2).error()).isNull();
            assertThat(attempts.get(2).log()).hasSize(1);
            for (JobAttempt attempt : attempts) {
                assertThat(attempt.node()).isIn("node-a", "node-b");
                assertThat(attempt.startedAt()).isAfter(enqueued.minusSeconds(5));
                assertThat(attempt.endedAt()).isAfterOrEqualTo(attempt.startedAt());
                assertThat(attempt.droppedLogLines()).isZero();
            }
        }
        assertThat(client.attempts(987654321L)).isEmpty();
    }

    @Test
    void aTaskThatKeepsNoHistoryWritesNoneAndItsLogLinesGoNowhere() {
        WorkerTask plain = task("plain", false, (payload, context) -> context.log("not kept"));
        QueueClient client = this.nodes.client(plain);
        long id = client.enqueue("plain", "x").jobId();
        this.nodes.start(settings("node").build(), plain);

        await().atMost(Duration.ofSeconds(20)).until(() -> client.find(id).orElseThrow().state() == JobState.COMPLETED);
        assertThat(client.attempts(id)).hasValue(List.of());
        assertThat(queue.jdbc().queryForObject("SELECT history IS NULL FROM " + queue.config().schema()
                + ".job_finished WHERE id = ?", Boolean.class, id)).isTrue();
    }

    @Test
    void aLogKeepsItsFirstLinesCutToLengthAndCountsTheRest() {
        WorkerTask chatty = task("chatty", true, (payload, context) -> {
            context.log("x".repeat(5000));
            for (int i = 1; i < 150; i++) {
                context.logger().info("line {}", i);
            }
        });
        QueueClient client = this.nodes.client(chatty);
        long id = client.enqueue("chatty", "x").jobId();
        this.nodes.start(settings("node").build(), chatty);

        await().atMost(Duration.ofSeconds(20)).until(() -> client.find(id).orElseThrow().state() == JobState.COMPLETED);
        JobAttempt attempt = client.attempts(id).orElseThrow().get(0);
        assertThat(attempt.log()).hasSize(QueueDefaults.MAX_LOG_LINES);
        assertThat(attempt.log().get(0).message()).hasSize(QueueDefaults.MAX_LOG_LINE_LENGTH).endsWith("…");
        assertThat(attempt.log().get(99).message()).isEqualTo("line 99");
        assertThat(attempt.droppedLogLines()).isEqualTo(50);
    }

    @Test
    void aRescueAddsTheAttemptItCutShortAndALostLeaseAddsNothing() {
        long id = queue.client().enqueue("kept", "x").jobId();
        ClaimedJob first = queue.claim("worker-a", "kept", 1).get(0);
        queue.store().markRunning(List.of(first.lease()), TestQueue.LEASE);
        queue.expireLease(id);
        assertThat(queue.store().rescueExpiredLeases(10, List.of("kept")).applied()).containsEntry(id, JobState.READY);
        // A node that does not know the task adds to a history the job has.
        ClaimedJob second = queue.claim("worker-b", "kept", 1).get(0);
        queue.expireLease(id);
        assertThat(queue.store().rescueExpiredLeases(10, List.of()).applied()).containsEntry(id, JobState.READY);

        ClaimedJob third = queue.claim("worker-c", "kept", 1).get(0);
        Outcome stale = Outcome.completed(second.lease()).withHistory(entry(2, "worker-b"));
        assertThat(queue.store().record(List.of(stale)).lost()).containsExactly(second.lease());
        queue.store().record(List.of(Outcome.completed(third.lease()).withHistory(entry(3, "worker-c"))));

        List<JobAttempt> attempts = queue.client().attempts(id).orElseThrow();
        assertThat(attempts).extracting(JobAttempt::outcome, JobAttempt::node).containsExactly(
                org.assertj.core.groups.Tuple.tuple(AttemptResult.RESCUED, "worker-a"),
                org.assertj.core.groups.Tuple.tuple(AttemptResult.RESCUED, "worker-b"),
                org.assertj.core.groups.Tuple.tuple(AttemptResult.COMPLETED, "worker-c"));
        assertThat(attempts.get(0).error()).isEqualTo("Lease of worker-a expired");
        assertThat(attempts.get(0).startedAt()).isNotNull();
        assertThat(attempts.get(0).attempt()).isEqualTo(1);
    }

    @Test
    void aRescueOfATaskThisNodeDoesNotKnowAddsNothing() {
        long id = queue.client().enqueue("plain", "x").jobId();
        ClaimedJob claimed = queue.claim("worker-a", "plain", 1).get(0);
        queue.store().markRunning(List.of(claimed.lease()), TestQueue.LEASE);
        queue.expireLease(id);

        queue.store().rescueExpiredLeases(10, List.of());

        assertThat(queue.client().attempts(id)).hasValue(List.of());
    }

    @Test
    void theHistoryKeepsTheNewestAttempts() {
        long id = queue.client().enqueue("kept", "x").jobId();
        for (int run = 1; run <= QueueDefaults.MAX_HISTORY_ATTEMPTS + 5; run++) {
            ClaimedJob claimed = queue.claim("worker", "kept", 1).get(0);
            queue.store().record(List.of(Outcome.snoozed(claimed.lease(), Duration.ZERO).withHistory(entry(1, "run " + run))));
        }

        List<JobAttempt> attempts = queue.client().attempts(id).orElseThrow();
        assertThat(attempts).hasSize(QueueDefaults.MAX_HISTORY_ATTEMPTS);
        assertThat(attempts.get(0).node()).isEqualTo("run 6");
        assertThat(attempts.get(attempts.size() - 1).node()).isEqualTo("run " + (QueueDefaults.MAX_HISTORY_ATTEMPTS + 5));
    }

    @Test
    void aRerunJobKeepsItsHistoryAndAddsToIt() {
        long id = queue.client().enqueue("kept", "x").jobId();
        ClaimedJob failed = queue.claim("worker", "kept", 1).get(0);
        queue.store().record(List.of(Outcome.failed(failed.lease(), "bad").withHistory(entry(1, "first"))));
        assertThat(queue.store().rerunFailed(id)).isTrue();
        ClaimedJob again = queue.claim("worker", "kept", 1).get(0);
        queue.store().record(List.of(Outcome.completed(again.lease()).withHistory(entry(1, "second"))));

        assertThat(queue.client().attempts(id).orElseThrow()).extracting(JobAttempt::node).containsExactly("first", "second");
    }

    private static String entry(int attempt, String node) {
        Instant now = Instant.now();
        return AttemptHistory.entry(new JobAttempt(attempt, AttemptResult.COMPLETED, node, now, now, null, List.of(), 0));
    }

    private static WorkerTask task(String name, boolean history, TaskHandler<String> handler) {
        return WorkerTask.of(TaskDefinition.builder(name).history(history).maxAttempts(3)
            .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(50))).build(), handler, String.class, 4, Duration.ofSeconds(30),
                "default");
    }
}
