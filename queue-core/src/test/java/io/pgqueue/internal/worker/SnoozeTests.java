package io.pgqueue.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import io.pgqueue.AttemptResult;
import io.pgqueue.JobSnapshot;
import io.pgqueue.JobState;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueDefaults;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskHandler;
import io.pgqueue.TaskSnoozedException;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.FencedResult;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.retry.RetryPolicy;
import io.pgqueue.testing.TestQueue;
import io.pgqueue.testing.TestWorkers;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.pgqueue.testing.TestWorkers.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A handler that says "not now": the job is due again after the delay, the attempt is given back
 * (max attempts and the retry policy's backoff do not see it), the outcome is fenced and reported.
 */
class SnoozeTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass().withPoolSize(12);

    @RegisterExtension
    final TestWorkers nodes = TestWorkers.on(queue);

    @Test
    void aSnoozedJobRunsAgainAfterItsDelayWithoutSpendingAnAttempt() {
        Map<Long, AtomicInteger> runs = new ConcurrentHashMap<>();
        Queue<Integer> attemptsSeen = new ConcurrentLinkedQueue<>();
        Queue<AttemptResult> outcomes = new ConcurrentLinkedQueue<>();
        // One attempt only: were a snooze an attempt, the job would fail at its second run.
        WorkerTask partner = task("partner", 1, (payload, context) -> {
            attemptsSeen.add(context.attempt());
            if (runs.computeIfAbsent(context.jobId(), id -> new AtomicInteger()).incrementAndGet() <= 3) {
                throw new TaskSnoozedException(Duration.ofMillis(300));
            }
            context.recordResult("done");
        });
        QueueClient client = this.nodes.client(partner);
        long id = client.enqueue("partner", "x").jobId();
        Instant enqueued = Instant.now();
        this.nodes.start(settings("node").build(), TestWorkers.recordingOutcomes(outcomes), partner);

        assertThat(client.await(id, String.class, Duration.ofSeconds(30))).isEqualTo("done");
        JobSnapshot job = client.find(id).orElseThrow();
        assertThat(job.state()).isEqualTo(JobState.COMPLETED);
        assertThat(job.attempt()).as("the snoozes spent no attempt").isEqualTo(1);
        assertThat(List.copyOf(attemptsSeen)).containsExactly(1, 1, 1, 1);
        assertThat(job.finishedAt()).as("three snoozes of 300 ms").isAfter(enqueued.plusMillis(850));
        assertThat(List.copyOf(outcomes)).containsExactly(AttemptResult.SNOOZED, AttemptResult.SNOOZED,
                AttemptResult.SNOOZED, AttemptResult.COMPLETED);
        assertThat(job.lastError()).as("a snooze is no error").isNull();
    }

    @Test
    void theBackoffAfterASnoozeIsTheOneOfTheAttemptItGaveBack() {
        Queue<String> events = new ConcurrentLinkedQueue<>();
        AtomicInteger run = new AtomicInteger();
        // Fails, snoozes, fails, completes: the second failure is attempt 2, and its backoff is attempt 1's.
        WorkerTask flaky = WorkerTask.of(TaskDefinition.builder("flaky").maxAttempts(3)
                .retryPolicy(attempt -> Duration.ofMillis(attempt == 1 ? 100 : 60_000)).build(),
                (TaskHandler<String>) (payload, context) -> {
                    int n = run.incrementAndGet();
                    events.add("run " + n + " attempt " + context.attempt());
                    if (n == 1 || n == 3) {
                        throw new IllegalStateException("failure " + n);
                    }
                    if (n == 2) {
                        throw new TaskSnoozedException(Duration.ZERO);
                    }
                }, String.class, 1, Duration.ofMinutes(1), QueueDefaults.POOL);
        QueueClient client = this.nodes.client(flaky);
        long id = client.enqueue("flaky", "x").jobId();
        this.nodes.start(settings("node").build(), flaky);

        await().atMost(Duration.ofSeconds(20)).until(() -> run.get() >= 3
                && client.find(id).map(job -> job.state() == JobState.READY).orElse(false));
        JobSnapshot afterSecondFailure = client.find(id).orElseThrow();
        assertThat(afterSecondFailure.attempt()).isEqualTo(2);
        assertThat(List.copyOf(events)).containsExactly("run 1 attempt 1", "run 2 attempt 2", "run 3 attempt 2");
        assertThat(afterSecondFailure.scheduleTime()).as("attempt 2's backoff: a minute")
            .isAfter(Instant.now().plusSeconds(30));
    }

    @Test
    void aSnoozeIsFencedByItsLeaseAndACancellationRequestWins() {
        QueueClient client = this.nodes.client(task("partner", 1, (payload, context) -> {
        }));
        long stale = client.enqueue("partner", "stale").jobId();
        long cancelled = client.enqueue("partner", "cancelled").jobId();
        List<ClaimedJob> claimed = queue.claim("partner", 2);
        ClaimedJob staleJob = claimed.stream().filter(job -> job.lease().jobId() == stale).findFirst().orElseThrow();
        queue.jdbc().update("UPDATE " + queue.config().schema() + ".job SET lease_epoch = lease_epoch + 1 WHERE id = ?",
                stale);
        client.cancel(cancelled);

        FencedResult result = queue.store().record(claimed.stream()
            .map(job -> Outcome.snoozed(job.lease(), Duration.ofMinutes(5))).toList());

        assertThat(result.applied()).doesNotContainKey(stale).containsEntry(cancelled, JobState.CANCELLED);
        assertThat(queue.job(stale).state()).as("the stale holder's snooze changed nothing").isEqualTo(JobState.STARTING);
        assertThat(queue.job(stale).scheduleTime()).isBefore(Instant.now().plusSeconds(60));
        assertThat(staleJob.attempt()).isEqualTo(1);
    }

    @Test
    void aSnoozeOfANegativeOrMissingDelayIsRefusedSayingWhy() {
        assertThatThrownBy(() -> new TaskSnoozedException(Duration.ofSeconds(-1)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("zero or more");
        assertThatThrownBy(() -> new TaskSnoozedException(null))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("zero or more");
    }


    private static WorkerTask task(String name, int maxAttempts, TaskHandler<String> handler) {
        return WorkerTask.of(TaskDefinition.builder(name).maxAttempts(maxAttempts).build(), handler, String.class, 2,
                Duration.ofMinutes(1), QueueDefaults.POOL);
    }
}
