package io.pgqueue.message;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import io.pgqueue.internal.message.MessageEngine;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * FIFO queues and concurrency: order within a message group, one receive of a group at a time,
 * deduplication within five minutes, and many consumers that neither lose nor duplicate messages.
 */
class FifoMessageQueueTests {

    @RegisterExtension
    static final TestMessageEngines engine = new TestMessageEngines(TestQueue.perClass().withPoolSize(24));

    static final TestQueue queue = engine.queue();

    static MessageEngine messages() {
        return engine.messages();
    }

    static List<ReceivedMessage> receive(String name, int max) {
        return messages().receive(name, ReceiveRequest.of(max).withWaitTime(Duration.ZERO));
    }

    static void fifo(String name) {
        messages().createQueue(name, MessageQueueAttributes.defaults().withContentBasedDeduplication(true), Map.of());
    }

    @Test
    void aGroupDeliversInOrderOneReceiveAtATime() {
        fifo("orders.fifo");
        messages().send("orders.fifo", OutgoingMessage.fifo("a1", "a", null));
        messages().send("orders.fifo", OutgoingMessage.fifo("b1", "b", null));
        messages().send("orders.fifo", OutgoingMessage.fifo("a2", "a", null));
        messages().send("orders.fifo", OutgoingMessage.fifo("a3", "a", null));

        ReceivedMessage a1 = receive("orders.fifo", 1).get(0);
        assertThat(a1.body()).isEqualTo("a1");
        assertThat(a1.groupId()).isEqualTo("a");
        assertThat(a1.sequenceNumber()).hasSize(20);
        ReceivedMessage b1 = receive("orders.fifo", 1).get(0);
        assertThat(b1.body()).isEqualTo("b1");
        assertThat(receive("orders.fifo", 10)).as("both groups in flight").isEmpty();

        messages().delete("orders.fifo", a1.receiptHandle());
        List<ReceivedMessage> rest = receive("orders.fifo", 10);
        assertThat(rest).extracting(ReceivedMessage::body).containsExactly("a2", "a3");
        assertThat(rest.get(0).sequenceNumber()).isLessThan(rest.get(1).sequenceNumber());
    }

    @Test
    void aMessageWhoseVisibilityRunsOutIsDeliveredAgainBeforeTheNext() {
        fifo("retry.fifo");
        messages().send("retry.fifo", OutgoingMessage.fifo("first", "g", null));
        messages().send("retry.fifo", OutgoingMessage.fifo("second", "g", null));
        ReceivedMessage first = receive("retry.fifo", 1).get(0);
        messages().changeVisibility("retry.fifo", first.receiptHandle(), Duration.ZERO);
        ReceivedMessage again = receive("retry.fifo", 1).get(0);
        assertThat(again.body()).isEqualTo("first");
        assertThat(again.receiveCount()).isEqualTo(2);
        assertThatThrownBy(() -> messages().delete("retry.fifo", first.receiptHandle()))
            .isInstanceOf(MessageQueueException.class);
        messages().delete("retry.fifo", again.receiptHandle());
        assertThat(receive("retry.fifo", 1)).extracting(ReceivedMessage::body).containsExactly("second");
    }

    @Test
    void aDeduplicationIdIsSentOnceInFiveMinutes() {
        messages().createQueue("dedup.fifo", MessageQueueAttributes.defaults(), Map.of());
        SentMessage first = messages().send("dedup.fifo", OutgoingMessage.fifo("x", "g", "id-1"));
        SentMessage again = messages().send("dedup.fifo", OutgoingMessage.fifo("other body", "g", "id-1"));
        assertThat(again.messageId()).isEqualTo(first.messageId());
        assertThat(again.sequenceNumber()).isEqualTo(first.sequenceNumber()).isNotNull();
        BatchResult<SentMessage> batch = messages().sendBatch("dedup.fifo",
                List.of(new BatchEntry<>("a", OutgoingMessage.fifo("y", "g", "id-2")),
                        new BatchEntry<>("b", OutgoingMessage.fifo("y", "g", "id-2"))));
        assertThat(batch.successful().get("b").messageId()).isEqualTo(batch.successful().get("a").messageId());
        assertThat(batch.successful().get("b").sequenceNumber()).isEqualTo(batch.successful().get("a").sequenceNumber());
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.message", Long.class)).isEqualTo(2);

        queue.jdbc().update("UPDATE pgqueue.message_dedup SET expires_at = now() WHERE dedup_id = 'id-1'");
        SentMessage later = messages().send("dedup.fifo", OutgoingMessage.fifo("x", "g", "id-1"));
        assertThat(later.messageId()).isNotEqualTo(first.messageId());
        messages().deleteExpired();
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.message_dedup", Long.class)).isEqualTo(2);

        assertThatThrownBy(() -> messages().send("dedup.fifo", OutgoingMessage.fifo("no id", "g", null)))
            .isInstanceOf(MessageQueueException.class).hasMessageContaining("ContentBasedDeduplication");
        assertThatThrownBy(() -> messages().send("dedup.fifo", OutgoingMessage.of("no group")))
            .isInstanceOfSatisfying(MessageQueueException.class,
                    ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.MISSING_PARAMETER));
    }

    @Test
    void contentBasedDeduplicationUsesTheBody() {
        fifo("content.fifo");
        SentMessage first = messages().send("content.fifo", OutgoingMessage.fifo("same", "g1", null));
        assertThat(messages().send("content.fifo", OutgoingMessage.fifo("same", "g2", null)).messageId())
            .isEqualTo(first.messageId());
        assertThat(messages().send("content.fifo", OutgoingMessage.fifo("different", "g1", null)).messageId())
            .isNotEqualTo(first.messageId());
    }

    @Test
    void aFifoQueueRedrivesToAFifoDeadLetterQueue() {
        fifo("jobs-dlq.fifo");
        messages().createQueue("jobs.fifo", MessageQueueAttributes.defaults().withContentBasedDeduplication(true)
            .withRedrivePolicy(new RedrivePolicy("jobs-dlq.fifo", 1)), Map.of());
        messages().send("jobs.fifo", OutgoingMessage.fifo("bad", "g", null));
        messages().send("jobs.fifo", OutgoingMessage.fifo("good", "g", null));
        ReceivedMessage bad = receive("jobs.fifo", 1).get(0);
        messages().changeVisibility("jobs.fifo", bad.receiptHandle(), Duration.ZERO);
        assertThat(receive("jobs.fifo", 1)).extracting(ReceivedMessage::body).containsExactly("good");
        assertThat(receive("jobs-dlq.fifo", 1)).singleElement().satisfies(dead -> {
            assertThat(dead.body()).isEqualTo("bad");
            assertThat(dead.groupId()).isEqualTo("g");
        });
    }

    @Test
    void manyConsumersKeepEveryGroupInOrderAndOneReceiveAtATime() throws Exception {
        fifo("busy.fifo");
        int groups = 20;
        int perGroup = 50;
        ExecutorService threads = Executors.newFixedThreadPool(16);
        try {
            List<Future<?>> producers = new ArrayList<>();
            for (int g = 0; g < groups; g++) {
                String group = "g" + g;
                producers.add(threads.submit(() -> {
                    for (int i = 0; i < perGroup; i++) {
                        messages().send("busy.fifo", OutgoingMessage.fifo(group + ":" + i, group, null));
                    }
                }));
            }
            Map<String, List<Integer>> delivered = new ConcurrentHashMap<>();
            Map<String, String> inFlight = new ConcurrentHashMap<>();
            List<String> violations = Collections.synchronizedList(new ArrayList<>());
            AtomicInteger deleted = new AtomicInteger();
            List<Future<?>> consumers = new ArrayList<>();
            for (int c = 0; c < 8; c++) {
                String consumer = "c" + c;
                consumers.add(threads.submit(() -> {
                    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                    while (deleted.get() < groups * perGroup && System.nanoTime() < deadline) {
                        List<ReceivedMessage> batch = messages().receive("busy.fifo",
                                ReceiveRequest.of(3).withWaitTime(Duration.ofSeconds(1)));
                        for (ReceivedMessage message : batch) {
                            String previous = inFlight.putIfAbsent(message.groupId(), consumer);
                            if (previous != null && !previous.equals(consumer)) {
                                violations.add(message.groupId() + " in flight at " + previous + " and " + consumer);
                            }
                            delivered.computeIfAbsent(message.groupId(), k -> Collections.synchronizedList(new ArrayList<>()))
                                .add(Integer.parseInt(message.body().substring(message.body().indexOf(':') + 1)));
                        }
                        for (ReceivedMessage message : batch) {
                            if (message == batch.get(batch.size() - 1)
                                    || !batch.get(batch.indexOf(message) + 1).groupId().equals(message.groupId())) {
                                inFlight.remove(message.groupId());
                            }
                            messages().delete("busy.fifo", message.receiptHandle());
                            deleted.incrementAndGet();
                        }
                    }
                }));
            }
            for (Future<?> producer : producers) {
                producer.get();
            }
            for (Future<?> consumer : consumers) {
                consumer.get();
            }
            assertThat(violations).isEmpty();
            assertThat(deleted).hasValue(groups * perGroup);
            assertThat(delivered).hasSize(groups);
            List<Integer> expected = java.util.stream.IntStream.range(0, perGroup).boxed().toList();
            delivered.forEach((group, order) -> assertThat(order).as(group).containsExactlyElementsOf(expected));
            assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.message_group", Long.class)).isZero();
        }
        finally {
            threads.shutdownNow();
        }
    }

    @Test
    void manyConsumersOfAStandardQueueReceiveEachMessageOnce() throws Exception {
        messages().createQueue("standard", MessageQueueAttributes.defaults().withVisibilityTimeout(Duration.ofMinutes(5)),
                Map.of());
        int total = 3_000;
        ExecutorService threads = Executors.newFixedThreadPool(16);
        try {
            List<Future<?>> producers = new ArrayList<>();
            for (int p = 0; p < 6; p++) {
                int first = p * (total / 6);
                producers.add(threads.submit(() -> {
                    for (int i = first; i < first + total / 6; i++) {
                        messages().send("standard", OutgoingMessage.of(Integer.toString(i)));
                    }
                }));
            }
            Map<String, Integer> received = new ConcurrentHashMap<>();
            AtomicInteger deleted = new AtomicInteger();
            List<Future<?>> consumers = new ArrayList<>();
            for (int c = 0; c < 8; c++) {
                consumers.add(threads.submit(() -> {
                    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                    while (deleted.get() < total && System.nanoTime() < deadline) {
                        List<ReceivedMessage> batch = messages().receive("standard",
                                ReceiveRequest.of(10).withWaitTime(Duration.ofSeconds(1)));
                        List<BatchEntry<String>> handles = new ArrayList<>();
                        for (ReceivedMessage message : batch) {
                            received.merge(message.body(), 1, Integer::sum);
                            handles.add(new BatchEntry<>("e" + handles.size(), message.receiptHandle()));
                        }
                        if (!handles.isEmpty()) {
                            assertThat(messages().deleteBatch("standard", handles).failed()).isEmpty();
                            deleted.addAndGet(handles.size());
                        }
                    }
                }));
            }
            for (Future<?> producer : producers) {
                producer.get();
            }
            for (Future<?> consumer : consumers) {
                consumer.get();
            }
            assertThat(received).hasSize(total);
            assertThat(received.values()).allMatch(count -> count == 1);
            assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.message", Long.class)).isZero();
        }
        finally {
            threads.shutdownNow();
        }
    }
}
