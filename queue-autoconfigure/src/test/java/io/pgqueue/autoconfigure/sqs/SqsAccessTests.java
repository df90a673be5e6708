package io.pgqueue.autoconfigure.sqs;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Permissions of access keys and queues, and request quotas per queue and per key, on a clock the
 * test moves.
 */
class SqsAccessTests {

    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

    private static QueueSqsProperties.Credential credential(String key, List<String> queues, List<String> actions) {
        QueueSqsProperties.Credential credential = new QueueSqsProperties.Credential();
        credential.setAccessKeyId(key);
        credential.setSecretAccessKey("secret");
        credential.setQueues(queues);
        credential.setActions(actions);
        return credential;
    }

    private SqsAccess access(QueueSqsProperties properties) {
        return SqsAccess.of(properties, this.nanos::get);
    }

    @Test
    void aKeyCallsItsActionsOnItsQueuesAndWhatADeclaredQueueGrantsIt() {
        QueueSqsProperties properties = new QueueSqsProperties();
        properties.setCredentials(List.of(credential("admin", List.of(), List.of()),
                credential("producer", List.of("orders-*"), List.of("sqs:SendMessage*", "GetQueueUrl")),
                credential("auditor", List.of(), List.of("Get*", "List*"))));
        QueueSqsProperties.DeclaredQueue audit = new QueueSqsProperties.DeclaredQueue();
        audit.setPermissions(Map.of("producer", List.of("ReceiveMessage", "DeleteMessage")));
        properties.setQueues(Map.of("audit", audit));
        SqsAccess access = access(properties);

        assertThatCode(() -> {
            access.authorize("admin", "DeleteQueue", "anything");
            access.authorize(null, "DeleteQueue", "anything");
            access.authorize("producer", "SendMessage", "orders-eu");
            access.authorize("producer", "SendMessageBatch", "orders-us");
            access.authorize("producer", "ReceiveMessage", "audit");
            access.authorize("auditor", "GetQueueAttributes", "orders-eu");
            access.authorize("auditor", "ListQueues", null);
        }).doesNotThrowAnyException();
        assertDenied(() -> access.authorize("producer", "ReceiveMessage", "orders-eu"),
                "The access key producer may not call ReceiveMessage on the queue orders-eu.");
        assertDenied(() -> access.authorize("producer", "SendMessage", "payments"), "on the queue payments");
        assertDenied(() -> access.authorize("producer", "SendMessage", "audit"), "SendMessage on the queue audit");
        assertDenied(() -> access.authorize("producer", "ListQueues", null), "may not call ListQueues.");
        assertDenied(() -> access.authorize("auditor", "PurgeQueue", "orders-eu"), "PurgeQueue");

        assertThat(access.shows("producer", "orders-eu")).isTrue();
        assertThat(access.shows("producer", "audit")).as("granted by the queue").isTrue();
        assertThat(access.shows("producer", "payments")).isFalse();
        assertThat(access.shows("auditor", "payments")).isTrue();
    }

    @Test
    void quotasAreKeptApartPerQueueAndPerKeyForWritesReadsAndDeletes() {
        QueueSqsProperties properties = new QueueSqsProperties();
        properties.getQuotas().setWrite(2.0);
        QueueSqsProperties.Credential limited = credential("limited", List.of(), List.of());
        limited.getQuotas().setRead(1.0);
        properties.setCredentials(List.of(limited, credential("free", List.of(), List.of())));
        QueueSqsProperties.DeclaredQueue busy = new QueueSqsProperties.DeclaredQueue();
        busy.setQuotas(new QueueSqsProperties.Quotas());
        busy.getQuotas().setWrite(0.5);
        properties.setQueues(Map.of("busy", busy));
        SqsAccess access = access(properties);

        // Two writes a second per queue, each queue apart, whoever sends; a batch is one call.
        access.throttle("free", "SendMessage", "a");
        access.throttle("limited", "SendMessageBatch", "a");
        assertThrottled(() -> access.throttle("free", "SendMessage", "a"), "the write quota of the queue a (2.0 calls "
                + "per second). Retry after 1 s.", 1);
        access.throttle("free", "SendMessage", "b");
        // Reads and deletes of queue a are not writes.
        access.throttle("free", "ReceiveMessage", "a");
        access.throttle("free", "DeleteMessageBatch", "a");
        access.throttle("free", "GetQueueAttributes", "a");
        // A second later a write is back; half a second gives back one.
        this.nanos.addAndGet(TimeUnit.MILLISECONDS.toNanos(500));
        access.throttle("free", "SendMessage", "a");
        assertThrottled(() -> access.throttle("free", "SendMessage", "a"), "queue a", 1);

        // The key's read quota holds over every queue; a refused call gives its queue's call back.
        access.throttle("limited", "ReceiveMessage", "x");
        assertThrottled(() -> access.throttle("limited", "ReceiveMessage", "y"), "the read quota of the access key "
                + "limited (1.0 calls per second)", 1);
        access.throttle("free", "ReceiveMessage", "y");

        // A declared queue's own quota: one write in two seconds.
        access.throttle("free", "SendMessage", "busy");
        assertThrottled(() -> access.throttle("free", "SendMessage", "busy"), "queue busy (0.5 calls per second). Retry "
                + "after 2 s.", 2);
    }

    private static void assertDenied(Runnable call, String message) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(MessageQueueException.class,
                ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.ACCESS_DENIED)).hasMessageContaining(message);
    }

    private static void assertThrottled(Runnable call, String message, long retryAfter) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(RequestThrottledException.class, ex -> {
            assertThat(ex.error()).isEqualTo(MessageQueueError.REQUEST_THROTTLED);
            assertThat(ex.retryAfterSeconds()).isEqualTo(retryAfter);
        }).hasMessageContaining(message);
    }
}
