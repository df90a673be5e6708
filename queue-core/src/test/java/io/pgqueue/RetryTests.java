package io.pgqueue;

import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;

import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.FencedResult;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.retry.RetryPolicy;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Failures, end to end: the decision (retry, fail) and its effect in the database.
 */
class RetryTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(
            TaskDefinition.builder("fixed").retryPolicy(RetryPolicy.fixed(Duration.ofSeconds(30))).maxAttempts(3).build(),
            TaskDefinition.builder("linear")
                .retryPolicy(RetryPolicy.linear(Duration.ofSeconds(10), Duration.ofSeconds(20), Duration.ofMinutes(1)))
                .build(),
            TaskDefinition.builder("exponential")
                .retryPolicy(RetryPolicy.exponential(Duration.ofSeconds(4), 3.0, Duration.ofMinutes(1), 0.0))
                .build(),
            TaskDefinition.builder("custom").retryPolicy(attempt -> Duration.ofMinutes(attempt * 7L)).build(),
            TaskDefinition.builder("strict").terminalExceptions(IllegalArgumentException.class).build());

    @Test
    void fixedPolicyRetriesUntilAttemptsRunOut() {
        long id = queue.client().enqueue("fixed", 1).jobId();

        for (int attempt = 1; attempt <= 2; attempt++) {
            assertThat(failOnce("fixed", new IllegalStateException("flaky " + attempt))).containsEntry(id, JobState.READY);
            JobSnapshot job = queue.job(id);
            assertThat(job.attempt()).isEqualTo(attempt);
            assertThat(job.lastError()).startsWith("java.lang.IllegalStateException: flaky " + attempt);
            assertThat(queue.secondsUntilDue(id)).isCloseTo(30.0, within(1.0));
            queue.makeDue(id);
        }
        assertThat(failOnce("fixed", new IllegalStateException("flaky 3"))).containsEntry(id, JobState.FAILED);
        assertThat(queue.job(id).attempt()).isEqualTo(3);
        assertThat(queue.job(id).lastError()).contains("flaky 3");
    }

    @Test
    void linearPolicyGrowsTheDelay() {
        long id = queue.client().enqueue("linear", 1).jobId();

        assertThat(delaysOfFailures(id, "linear", 4)).containsExactly(10.0, 30.0, 50.0, 60.0);
    }

    @Test
    void exponentialPolicyMultipliesTheDelay() {
        long id = queue.client().enqueue("exponential", 1).jobId();

        assertThat(delaysOfFailures(id, "exponential", 4)).containsExactly(4.0, 12.0, 36.0, 60.0);
    }

    @Test
    void customPolicyIsUsedAsGiven() {
        long id = queue.client().enqueue("custom", 1).jobId();

        assertThat(delaysOfFailures(id, "custom", 2)).containsExactly(420.0, 840.0);
    }

    @Test
    void terminalExceptionsFailAtOnce() {
        long declared = queue.client().enqueue("strict", 1).jobId();
        assertThat(failOnce("strict", new IllegalArgumentException("bad file id"))).containsEntry(declared, JobState.FAILED);

        long marked = queue.client().enqueue("strict", 2).jobId();
        assertThat(failOnce("strict", new TerminalTaskException("folder deleted"))).containsEntry(marked, JobState.FAILED);

        long retried = queue.client().enqueue("strict", 3).jobId();
        assertThat(failOnce("strict", new UncheckedIOException(new java.io.IOException("timeout"))))
            .containsEntry(retried, JobState.READY);
        assertThat(queue.job(declared).lastError()).contains("bad file id").contains("\tat ");
    }

    @Test
    void perJobMaxAttemptsOverridesTheTask() {
        long id = queue.client().enqueue("linear", 1, EnqueueOptions.defaults().withMaxAttempts(1)).jobId();

        assertThat(failOnce("linear", new RuntimeException("once"))).containsEntry(id, JobState.FAILED);
    }

    @Test
    void retryKeepsTheDelayToleranceWindow() {
        long id = queue.client().enqueue("fixed", 1, EnqueueOptions.defaults().withDelayTolerance(Duration.ofSeconds(5)))
            .jobId();

        failOnce("fixed", new RuntimeException("x"));

        JobSnapshot job = queue.job(id);
        assertThat(Duration.between(job.scheduleTime(), job.delayToleranceDeadline())).isEqualTo(Duration.ofSeconds(5));
    }

    private java.util.Map<Long, JobState> failOnce(String task, Throwable failure) {
        ClaimedJob job = queue.claim(task, 1).get(0);
        Outcome outcome = queue.outcomes().failed(job, failure);
        FencedResult result = queue.store().record(List.of(outcome));
        assertThat(result.lost()).isEmpty();
        return result.applied();
    }

    private List<Double> delaysOfFailures(long id, String task, int failures) {
        List<Double> delays = new java.util.ArrayList<>();
        for (int i = 0; i < failures; i++) {
            failOnce(task, new RuntimeException("failure " + i));
            delays.add((double) Math.round(queue.secondsUntilDue(id)));
            queue.makeDue(id);
        }
        return delays;
    }
}
