package io.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every enqueue argument a handler could not work with is rejected at the call site with an
 * {@link InvalidJobException} that names it, and nothing is written.
 */
class EnqueueValidationTests {

    /** The handler of a task whose payload is a record. */
    static final class UploadHandler implements TaskHandler<Upload> {

        @Override
        public void handle(Upload payload, TaskContext context) {
        }
    }

    record Upload(String fileId, int sizeKb) {
    }

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(TestQueue.task("send-push"),
            TaskDefinition.builder("upload").handlerType(UploadHandler.class).build());

    @AfterEach
    void nothingWasWritten() {
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.job", Long.class)).isZero();
    }

    @Test
    void aNullPayload() {
        rejected(() -> queue.client().enqueue("send-push", null), "payload of a 'send-push' job must not be null");
    }

    @Test
    void aBlankOrLongGroupKeyWritesNothing() {
        rejected(() -> EnqueueOptions.defaults().withGroup(" "), "Group key must be non-blank and at most 256 characters");
        rejected(() -> EnqueueOptions.defaults().withGroup("g".repeat(257)), "at most 256 characters");
        rejected(() -> queue.client().enqueue("send-push", 1, EnqueueOptions.defaults()
                .withHeader(QueueDefaults.GROUP_HEADER, "")), "Group key of a 'send-push' job must be non-blank");
        assertThat(queue.totalJobs()).isZero();
    }

    @Test
    void aNullDedupPolicy() {
        rejected(() -> EnqueueOptions.defaults().withDedup("k", null), "dedupPolicy of an enqueue must not be null");
    }

    @Test
    void aNullDedupKey() {
        rejected(() -> EnqueueOptions.defaults().withDedup(null, DedupPolicy.rerun()), "dedupKey of an enqueue must not be null");
    }

    @Test
    void aMergePolicyWithoutAMerger() {
        rejected(() -> DedupPolicy.mergeIfReady(null), "mergeIfReady needs a merger");
    }

    @Test
    void aHeaderWithANullValue() {
        rejected(() -> EnqueueOptions.defaults().withHeader("tenant", null), "Header 'tenant' has a null value");
        Map<String, String> headers = new HashMap<>();
        headers.put("tenant", null);
        rejected(() -> new EnqueueOptions(null, null, null, null, null, null, null, headers, null), "null names or values");
    }

    @Test
    void nullOptions() {
        rejected(() -> queue.client().enqueue("send-push", 1, null), "options of an enqueue must not be null");
    }

    @Test
    void aNullHandlerClass() {
        rejected(() -> queue.client().enqueue((Class<UploadHandler>) null, new Upload("f", 1)),
                "handler class of an enqueue must not be null");
    }

    @Test
    void aNullRequestInABatch() {
        rejected(() -> queue.client().enqueueAll(Arrays.asList(JobRequest.of("send-push", 1), null)),
                "job request of an enqueue must not be null");
    }

    @Test
    void aPayloadItsHandlerCannotRead() {
        rejected(() -> queue.client().enqueue("upload", "just a string"),
                "cannot be read as " + Upload.class.getName() + ", the payload type of its handler");
        // A payload of another type that reads as the handler's type is fine, e.g. a map.
        assertThat(queue.client().enqueue("upload", Map.of("fileId", "f-1", "sizeKb", 3)).created()).isTrue();
        queue.clear();
    }

    @Test
    void bothARunAtTimeAndADelay() {
        EnqueueOptions both = EnqueueOptions.defaults().withDelay(Duration.ofMinutes(1)).withRunAt(Instant.now());
        rejected(() -> queue.client().enqueue("send-push", 1, both), "has both a run-at time and a delay");
        EnqueueOptions reversed = EnqueueOptions.defaults().withRunAt(Instant.now()).withDelay(Duration.ofMinutes(1));
        rejected(() -> queue.client().enqueue("send-push", 1, reversed), "has both a run-at time and a delay");
    }

    @Test
    void aNullRunAtOrDelay() {
        rejected(() -> EnqueueOptions.defaults().withRunAt(null), "runAt of an enqueue must not be null");
        rejected(() -> EnqueueOptions.defaults().withDelay(null), "delay of an enqueue must not be null");
    }

    @Test
    void aValidEnqueueStillWorks() {
        assertThat(queue.client().enqueueAll(List.of(JobRequest.of("send-push", 1), JobRequest.of("upload",
                new Upload("f", 2))))).allSatisfy(result -> assertThat(result.created()).isTrue());
        queue.clear();
    }

    private static void rejected(Executable call, String message) {
        assertThatThrownBy(call::execute).isInstanceOf(InvalidJobException.class).hasMessageContaining(message);
    }
}
