package io.pgqueue.message;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.pgqueue.message.MessageMoveTask.Status;
import io.pgqueue.internal.message.MessageEngine;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Message move tasks on real PostgreSQL, stepped by the engine's sweeper once a second: a
 * dead-letter queue's messages go back to the queues they came from, or to a destination, at the
 * task's rate; tasks are listed, cancelled, fail when messages have no queue to go to, and bad
 * requests are refused with SQS's errors and nothing started.
 */
class MessageMoveTaskTests {

    @RegisterExtension
    static final TestMessageEngines engine = new TestMessageEngines(TestQueue.perClass());

    static final TestQueue queue = engine.queue();

    static MessageEngine messages() {
        return engine.messages();
    }

    /** A dead-letter queue and two sources whose messages reach it after one receive each. */
    private static void sourcesAndDeadLetters(int fromA, int fromB) {
        messages().createQueue("dead", MessageQueueAttributes.defaults(), Map.of());
        MessageQueueAttributes redriven = MessageQueueAttributes.defaults().withVisibilityTimeout(Duration.ZERO)
            .withRedrivePolicy(new RedrivePolicy("dead", 1));
        messages().createQueue("source-a", redriven, Map.of());
        messages().createQueue("source-b", redriven, Map.of());
        send("source-a", fromA);
        send("source-b", fromB);
        for (String source : List.of("source-a", "source-b")) {
            // Visible again at once: a message's second receive finds it received once and moves it.
            while (messages().counts(source).visible() > 0) {
                messages().receive(source, ReceiveRequest.of(10).withWaitTime(Duration.ZERO));
            }
        }
        assertThat(messages().counts("dead").visible()).isEqualTo(fromA + fromB);
    }

    private static void send(String queueName, int count) {
        List<BatchEntry<OutgoingMessage>> batch = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            batch.add(new BatchEntry<>("m" + i, OutgoingMessage.of(queueName + " " + i)));
            if (batch.size() == 10 || i == count - 1) {
                messages().sendBatch(queueName, batch);
                batch.clear();
            }
        }
    }

    private static List<ReceivedMessage> receive(String queueName) {
        return messages().receive(queueName, ReceiveRequest.of(10).withWaitTime(Duration.ZERO)
            .withVisibilityTimeout(Duration.ofMinutes(5)));
    }

    private static MessageMoveTask awaitEnd(MessageMoveTask task) {
        await().atMost(Duration.ofSeconds(30)).until(() -> messages().moveTasks(task.source(), 10).stream()
            .filter(each -> each.handle().equals(task.handle())).findFirst().orElseThrow().status() != Status.RUNNING);
        return messages().moveTasks(task.source(), 10).stream().filter(each -> each.handle().equals(task.handle()))
            .findFirst().orElseThrow();
    }

    @Test
    void eachMessageGoesBackToTheQueueItCameFromAtTheTasksRate() {
        sourcesAndDeadLetters(30, 20);
        long started = System.nanoTime();

        MessageMoveTask task = messages().startMoveTask("dead", null, 20);

        assertThat(task.status()).isEqualTo(Status.RUNNING);
        assertThat(task.toMove()).isEqualTo(50);
        assertThat(task.destination()).isNull();
        MessageMoveTask ended = awaitEnd(task);
        assertThat(ended.status()).isEqualTo(Status.COMPLETED);
        assertThat(ended.moved()).isEqualTo(50);
        // 20 a second, one batch a second: 50 messages take three steps, two seconds apart at least.
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThan(Duration.ofMillis(1900));
        assertThat(messages().counts("dead").visible()).isZero();
        assertThat(receiveAll("source-a")).hasSize(30).allSatisfy(body -> assertThat(body).startsWith("source-a "));
        assertThat(receiveAll("source-b")).hasSize(20).allSatisfy(body -> assertThat(body).startsWith("source-b "));
    }

    private static List<String> receiveAll(String queueName) {
        List<String> bodies = new ArrayList<>();
        for (List<ReceivedMessage> batch = receive(queueName); !batch.isEmpty(); batch = receive(queueName)) {
            batch.forEach(message -> bodies.add(message.body()));
        }
        return bodies;
    }

    @Test
    void aDestinationTakesEveryMessageAndTheTasksAreListedNewestFirst() {
        sourcesAndDeadLetters(5, 5);
        messages().createQueue("review", MessageQueueAttributes.defaults(), Map.of());

        MessageMoveTask first = awaitEnd(messages().startMoveTask("dead", "review", null));
        send("dead", 3);
        MessageMoveTask second = awaitEnd(messages().startMoveTask("dead", "review", null));

        assertThat(first.moved()).isEqualTo(10);
        assertThat(second.moved()).isEqualTo(3);
        assertThat(receiveAll("review")).hasSize(13);
        assertThat(messages().moveTasks("dead", 10)).extracting(MessageMoveTask::handle)
            .containsExactly(second.handle(), first.handle());
        assertThat(messages().moveTasks("dead", 1)).extracting(MessageMoveTask::destination).containsExactly("review");
    }

    @Test
    void aCancelledTaskKeepsWhatItMovedAndAnotherMayStart() {
        sourcesAndDeadLetters(40, 0);
        MessageMoveTask task = messages().startMoveTask("dead", null, 1);
        assertThatThrownBy(() -> messages().startMoveTask("dead", null, null))
            .isInstanceOfSatisfying(MessageQueueException.class,
                    ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.UNSUPPORTED_OPERATION))
            .hasMessageContaining("A move task is running for dead already");
        await().atMost(Duration.ofSeconds(10)).until(() -> messages().moveTasks("dead", 1).get(0).moved() >= 1);

        MessageMoveTask cancelled = messages().cancelMoveTask(task.handle());

        assertThat(cancelled.status()).isEqualTo(Status.CANCELLED);
        assertThat(cancelled.moved()).isBetween(1L, 5L);
        assertThat(messages().counts("source-a").visible() + messages().counts("dead").visible()).isEqualTo(40);
        assertThatThrownBy(() -> messages().cancelMoveTask(task.handle())).isInstanceOfSatisfying(
                MessageQueueException.class, ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.UNSUPPORTED_OPERATION))
            .hasMessageContaining("The move task is CANCELLED: only a running task can be cancelled");
        assertThatThrownBy(() -> messages().cancelMoveTask("no-such-handle")).isInstanceOfSatisfying(
                MessageQueueException.class, ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.RESOURCE_NOT_FOUND));
        assertThat(awaitEnd(messages().startMoveTask("dead", null, null)).status()).isEqualTo(Status.COMPLETED);
        assertThat(messages().counts("source-a").visible()).isEqualTo(40);
    }

    @Test
    void messagesWithNoQueueToGoBackToFailTheTaskSayingWhy() {
        sourcesAndDeadLetters(2, 0);
        // Sent to the dead-letter queue directly: they came from no queue.
        send("dead", 3);

        MessageMoveTask ended = awaitEnd(messages().startMoveTask("dead", null, null));

        assertThat(ended.status()).isEqualTo(Status.FAILED);
        assertThat(ended.moved()).isEqualTo(2);
        assertThat(ended.failureReason()).startsWith("3 messages have no queue to go back to")
            .endsWith("start a task with a destination");
        assertThat(messages().counts("dead").visible()).isEqualTo(3);
    }

    @Test
    void badRequestsAreRefusedWithSqsErrorsAndStartNothing() {
        sourcesAndDeadLetters(1, 0);
        messages().createQueue("ordered.fifo", MessageQueueAttributes.defaults(), Map.of());
        messages().createQueue("ordered-source.fifo", MessageQueueAttributes.defaults()
            .withRedrivePolicy(new RedrivePolicy("ordered.fifo", 1)), Map.of());

        assertRefused(() -> messages().startMoveTask("nowhere", null, null), MessageQueueError.RESOURCE_NOT_FOUND,
                "The source queue nowhere does not exist");
        assertRefused(() -> messages().startMoveTask("dead", "nowhere", null), MessageQueueError.RESOURCE_NOT_FOUND,
                "The destination queue nowhere does not exist");
        assertRefused(() -> messages().startMoveTask("source-a", null, null), MessageQueueError.INVALID_PARAMETER_VALUE,
                "Source queue must be configured as a Dead Letter Queue");
        assertRefused(() -> messages().startMoveTask("dead", "dead", null), MessageQueueError.INVALID_PARAMETER_VALUE,
                "other than its source");
        assertRefused(() -> messages().startMoveTask("dead", null, 0), MessageQueueError.INVALID_PARAMETER_VALUE,
                "MaxNumberOfMessagesPerSecond must be 1 to 500, not 0");
        assertRefused(() -> messages().startMoveTask("dead", null, 501), MessageQueueError.INVALID_PARAMETER_VALUE, "501");
        assertRefused(() -> messages().startMoveTask("ordered.fifo", null, null), MessageQueueError.UNSUPPORTED_OPERATION,
                "is a FIFO queue");
        assertRefused(() -> messages().moveTasks("nowhere", 1), MessageQueueError.RESOURCE_NOT_FOUND, "nowhere");
        assertRefused(() -> messages().moveTasks("dead", 11), MessageQueueError.INVALID_PARAMETER_VALUE, "MaxResults");
        assertThat(messages().moveTasks("dead", 10)).as("nothing started").isEmpty();
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.message_move_task", Long.class)).isZero();
    }

    private static void assertRefused(Runnable call, MessageQueueError error, String message) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(MessageQueueException.class,
                ex -> assertThat(ex.error()).isEqualTo(error)).hasMessageContaining(message);
    }
}
