package io.pgqueue;

import java.util.List;
import java.util.Map;

import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.FencedResult;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * U+0000, which PostgreSQL's text and jsonb cannot hold: refused at the call, naming the field, with
 * nothing written, where the caller gave it; stored without it where the text is the system's own (a
 * handler's error), and never holding up the other outcomes written with it.
 */
class NulCharacterTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(TaskDefinition.builder("t").maxAttempts(1).build());

    @BeforeEach
    void empty() {
        queue.jdbc().update("DELETE FROM pgqueue.job");
    }

    @Test
    void everyFieldOfAnEnqueueRefusesItNamingTheFieldAndWritesNothing() {
        // Each enqueue with the words its error names the field by.
        List<Map.Entry<String, Runnable>> enqueues = List.of(
                Map.entry("The payload", () -> queue.client().enqueue("t", Map.of("a", "x\u0000y"))),
                Map.entry("A header", () -> queue.client().enqueue("t", 1, EnqueueOptions.defaults().withHeader("h", "x\u0000"))),
                Map.entry("A header", () -> queue.client().enqueue("t", 1, EnqueueOptions.defaults().withHeader("h\u0000", "x"))),
                Map.entry("Dedup key", () -> queue.client().enqueue("t", 1, EnqueueOptions.defaults().withDedupKey("k\u0000"))),
                Map.entry("group key", () -> queue.client().enqueue("t", 1, EnqueueOptions.defaults().withGroup("g\u0000"))),
                Map.entry("Task name", () -> queue.client().enqueue("t\u0000", 1)),
                Map.entry("A workflow name", () -> queue.client().workflow("w\u0000").add("a", "t", 1).enqueue()),
                Map.entry("A step name", () -> queue.client().workflow("w").add("a\u0000", "t", 1).enqueue()),
                Map.entry("The payload", () -> queue.client().enqueueAll(List.of(JobRequest.of("t", 1),
                        JobRequest.of("t", "x\u0000")))));
        enqueues.forEach(enqueue -> assertThatThrownBy(enqueue.getValue()::run).as(enqueue.getKey())
            .isInstanceOf(InvalidJobException.class).hasMessageContaining(enqueue.getKey()));
        assertThat(queue.activeJobs()).as("nothing written, the batch's other job neither").isZero();
    }

    @Test
    void aResultWithItIsRefusedToTheHandlerThatRecordsIt() {
        queue.client().enqueue("t", 1);
        ClaimedJob job = queue.claim("t", 1).get(0);

        assertThatThrownBy(() -> queue.store().workflows().recordResult(job.lease(), "{\"a\": \"x\\u0000\"}"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("U+0000");
        assertThat(queue.store().workflows().recordResult(job.lease(), "{\"a\": \"\\\\u0000\"}"))
            .as("an escaped backslash before u0000 is text").isTrue();
    }

    @Test
    void theTextBackslashU0000IsNotTheCharacter() {
        long id = queue.client().enqueue("t", Map.of("a", "\\u0000", "b", "\\\\\\u0000")).jobId();

        assertThat(queue.job(id).payload()).contains("\\\\u0000");
    }

    @Test
    void aHandlersErrorWithItIsStoredWithoutItAndTheOtherOutcomesOfTheBatchAreWritten() {
        long first = queue.client().enqueue("t", 1).jobId();
        long second = queue.client().enqueue("t", 2).jobId();
        List<ClaimedJob> claimed = queue.claim("t", 2);

        FencedResult result = queue.store().record(List.of(
                queue.outcomes().failed(claimed.get(0), new IllegalStateException("bad\u0000message")),
                queue.outcomes().failed(claimed.get(1), new IllegalStateException("fine"))));

        assertThat(result.applied()).containsOnlyKeys(first, second);
        assertThat(queue.job(first).lastError()).startsWith("java.lang.IllegalStateException: badmessage");
        assertThat(queue.job(second).lastError()).startsWith("java.lang.IllegalStateException: fine");
    }
}
