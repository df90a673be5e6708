package io.pgqueue.message;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.pgqueue.internal.message.MessageEngine;
import io.pgqueue.internal.store.MessageStore;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The message-queue API on real PostgreSQL: queues, send, receive, visibility, receipt handles,
 * batches, delays, long polling, dead letters and retention.
 */
class MessageQueuesTests {

    @RegisterExtension
    static final TestMessageEngines engine = new TestMessageEngines(TestQueue.perClass());

    static final TestQueue queue = engine.queue();

    static MessageEngine messages() {
        return engine.messages();
    }

    static MessageQueueInfo create(String name) {
        return messages().createQueue(name, MessageQueueAttributes.defaults(), Map.of());
    }

    /** Makes the queue's hidden messages visible, as if their visibility timeouts had run out. */
    static void expireVisibility(String name) {
        queue.jdbc().update("UPDATE pgqueue.message SET visible_at = now() - interval '1 millisecond' "
                + "WHERE queue_id = (SELECT id FROM pgqueue.message_queue WHERE name = ?)", name);
        queue.jdbc().update("UPDATE pgqueue.message_group SET available_at = now() - interval '1 millisecond' "
                + "WHERE queue_id = (SELECT id FROM pgqueue.message_queue WHERE name = ?)", name);
    }

    static List<ReceivedMessage> receive(String name, int max) {
        return messages().receive(name, ReceiveRequest.of(max).withWaitTime(Duration.ZERO));
    }

    @Test
    void aPeekShowsMessagesInEveryStateAndChangesNothing() {
        create("peeked");
        messages().send("peeked", OutgoingMessage.of("first"));
        messages().send("peeked", OutgoingMessage.of("second").withAttributes(Map.of("kind",
                MessageAttributeValue.string("x"))));
        messages().send("peeked", OutgoingMessage.of("later").withDelay(Duration.ofMinutes(5)));
        assertThat(receive("peeked", 1)).singleElement().extracting(ReceivedMessage::body).isEqualTo("first");

        List<PeekedMessage> seen = messages().peek("peeked", 10);

        java.time.Instant now = java.time.Instant.now();
        assertThat(seen).extracting(PeekedMessage::body).containsExactly("first", "second", "later");
        assertThat(seen).extracting(message -> message.state(now)).containsExactly("in flight", "visible", "delayed");
        assertThat(seen.get(0).receiveCount()).isOne();
        assertThat(seen.get(1).attributes()).contains("\"kind\"");
        assertThat(messages().peek("peeked", 10)).as("peeking twice changes nothing").isEqualTo(seen);
        assertThat(receive("peeked", 10)).extracting(ReceivedMessage::body).as("nothing received by the peeks")
            .containsExactly("second");
        assertThat(messages().peek("peeked", 1)).hasSize(1);
        assertThatThrownBy(() -> messages().peek("peeked", 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> messages().peek("nowhere", 5)).isInstanceOf(MessageQueueException.class);
    }

    @Test
    void aRedriveMovesTheVisibleDeadLettersBackAsNewArrivalsAndLeavesThoseInFlight() {
        create("work");
        create("work-dead");
        for (int i = 1; i <= 3; i++) {
            messages().send("work-dead", OutgoingMessage.of("dead " + i));
        }
        assertThat(receive("work-dead", 1)).singleElement().extracting(ReceivedMessage::body).isEqualTo("dead 1");

        assertThat(messages().redrive("work-dead", "work", 10)).isEqualTo(2);

        assertThat(messages().peek("work", 10)).extracting(PeekedMessage::body, PeekedMessage::receiveCount)
            .containsExactly(org.assertj.core.groups.Tuple.tuple("dead 2", 0), org.assertj.core.groups.Tuple.tuple("dead 3", 0));
        assertThat(messages().peek("work-dead", 10)).extracting(PeekedMessage::body).as("in flight, it stays")
            .containsExactly("dead 1");
        assertThat(receive("work", 10)).extracting(ReceivedMessage::body).containsExactly("dead 2", "dead 3");
        assertThat(messages().redrive("work-dead", "work", 10)).as("nothing visible left").isZero();

        messages().createQueue("ordered.fifo", MessageQueueAttributes.defaults(), Map.of());
        assertThatThrownBy(() -> messages().redrive("work-dead", "ordered.fifo", 10))
            .isInstanceOfSatisfying(MessageQueueException.class, ex -> assertThat(ex.error())
                .isEqualTo(MessageQueueError.INVALID_PARAMETER_VALUE))
            .hasMessageContaining("ordered.fifo is a FIFO queue");
        assertThatThrownBy(() -> messages().redrive("work", "work", 10)).isInstanceOf(MessageQueueException.class);
        assertThatThrownBy(() -> messages().redrive("nowhere", "work", 10)).isInstanceOfSatisfying(
                MessageQueueException.class, ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.QUEUE_DOES_NOT_EXIST));
    }

    @Test
    void aFifoRedriveMovesWholeGroupsInOrderToTheEndOfTheSameGroupsAndLeavesGroupsInFlight() {
        messages().createQueue("ord.fifo", MessageQueueAttributes.defaults(), Map.of());
        messages().createQueue("ord-dead.fifo", MessageQueueAttributes.defaults(), Map.of());
        messages().send("ord.fifo", OutgoingMessage.fifo("a0", "a", "a0"));
        for (int i = 1; i <= 3; i++) {
            messages().send("ord-dead.fifo", OutgoingMessage.fifo("a" + i, "a", "a" + i));
            messages().send("ord-dead.fifo", OutgoingMessage.fifo("b" + i, "b", "b" + i));
            messages().send("ord-dead.fifo", OutgoingMessage.fifo("c" + i, "c", "c" + i));
        }
        // Group c's first message is in flight on the dead-letter queue: the group stays.
        List<ReceivedMessage> inFlight = messages().receive("ord-dead.fifo", ReceiveRequest.of(1).withWaitTime(Duration.ZERO));
        assertThat(inFlight).singleElement().extracting(ReceivedMessage::body).isEqualTo("a1");
        messages().delete("ord-dead.fifo", inFlight.get(0).receiptHandle());
        queue.jdbc().update("UPDATE pgqueue.message SET visible_at = now() + interval '1 hour', receive_count = 1, "
                + "receipt = 1 WHERE body = 'c1'");
        queue.jdbc().update("UPDATE pgqueue.message_group SET available_at = now() + interval '1 hour' WHERE group_id = 'c' "
                + "AND queue_id = (SELECT id FROM pgqueue.message_queue WHERE name = 'ord-dead.fifo')");

        assertThat(messages().redrive("ord-dead.fifo", "ord.fifo", 100)).isEqualTo(5);

        assertThat(messages().peek("ord.fifo", 10)).extracting(PeekedMessage::body).as("oldest sent first")
            .containsExactly("a0", "b1", "a2", "b2", "a3", "b3");
        assertThat(messages().peek("ord-dead.fifo", 10)).extracting(PeekedMessage::body).containsExactly("c1", "c2", "c3");
        // Each group delivers in order, one group's messages at a time.
        List<String> delivered = new ArrayList<>();
        for (int round = 0; round < 6 && delivered.size() < 6; round++) {
            for (ReceivedMessage message : messages().receive("ord.fifo", ReceiveRequest.of(10).withWaitTime(Duration.ZERO))) {
                delivered.add(message.body());
                messages().delete("ord.fifo", message.receiptHandle());
            }
        }
        assertThat(delivered.stream().filter(body -> body.startsWith("a")).toList()).containsExactly("a0", "a2", "a3");
        assertThat(delivered.stream().filter(body -> body.startsWith("b")).toList()).containsExactly("b1", "b2", "b3");
        assertThat(queue.jdbc().queryForList("SELECT g.group_id FROM pgqueue.message_group g JOIN pgqueue.message_queue q "
                + "ON q.id = g.queue_id WHERE q.name = 'ord-dead.fifo'", String.class)).as("emptied groups are gone")
            .containsExactly("c");
        assertThat(messages().redrive("ord-dead.fifo", "ord.fifo", 100)).as("group c is in flight").isZero();
    }

    @Test
    void aFifoRedriveRacingReceivesThatMoveMessagesToTheDeadLetterQueueLosesAndDuplicatesNothing() throws Exception {
        messages().createQueue("race-dead.fifo", MessageQueueAttributes.defaults(), Map.of());
        messages().createQueue("race.fifo", MessageQueueAttributes.defaults()
            .withRedrivePolicy(new RedrivePolicy("race-dead.fifo", 1)), Map.of());
        int groups = 20;
        int perGroup = 10;
        for (int i = 0; i < groups * perGroup; i++) {
            messages().send("race.fifo", OutgoingMessage.fifo("m" + i, "g" + (i % groups), "m" + i));
        }
        // Receivers hide messages for no time and never delete them: each second receive moves a
        // message to the dead-letter queue, while redrives move them back.
        java.util.concurrent.atomic.AtomicBoolean running = new java.util.concurrent.atomic.AtomicBoolean(true);
        List<CompletableFuture<Integer>> workers = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            workers.add(CompletableFuture.supplyAsync(() -> {
                int received = 0;
                while (running.get()) {
                    received += messages().receive("race.fifo", ReceiveRequest.of(10).withWaitTime(Duration.ZERO)
                        .withVisibilityTimeout(Duration.ZERO)).size();
                }
                return received;
            }));
        }
        int redriven = 0;
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        while (System.nanoTime() < until) {
            redriven += messages().redrive("race-dead.fifo", "race.fifo", 1000);
        }
        running.set(false);
        for (CompletableFuture<Integer> worker : workers) {
            assertThat(worker.get(30, TimeUnit.SECONDS)).as("no receive failed").isPositive();
        }

        assertThat(redriven).as("messages went back and forth").isPositive();
        List<String> bodies = queue.jdbc().queryForList("SELECT body FROM pgqueue.message", String.class);
        assertThat(bodies).hasSize(groups * perGroup).doesNotHaveDuplicates();
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.message_group g WHERE NOT EXISTS "
                + "(SELECT 1 FROM pgqueue.message m WHERE m.queue_id = g.queue_id AND m.group_id = g.group_id)",
                Long.class)).as("no group left without messages").isZero();
    }

    @Test
    void aMessageIsSentReceivedAndDeleted() {
        create("orders");
        SentMessage sent = messages().send("orders", OutgoingMessage.of("hello")
            .withAttributes(Map.of("attribName1", MessageAttributeValue.string("attribValue 1"))));
        assertThat(sent.md5OfBody()).isEqualTo("5d41402abc4b2a76b9719d911017c592");
        assertThat(sent.md5OfAttributes()).isEqualTo("19e27d4e946b072f3f58da80d94fd778");
        assertThat(sent.sequenceNumber()).isNull();

        List<ReceivedMessage> received = receive("orders", 10);
        assertThat(received).singleElement().satisfies(message -> {
            assertThat(message.messageId()).isEqualTo(sent.messageId());
            assertThat(message.body()).isEqualTo("hello");
            assertThat(message.md5OfBody()).isEqualTo(sent.md5OfBody());
            assertThat(message.attributes()).containsEntry("attribName1", MessageAttributeValue.string("attribValue 1"));
            assertThat(message.md5OfAttributes()).isEqualTo(sent.md5OfAttributes());
            assertThat(message.receiveCount()).isEqualTo(1);
        });
        assertThat(receive("orders", 10)).as("invisible while in flight").isEmpty();

        messages().delete("orders", received.get(0).receiptHandle());
        expireVisibility("orders");
        assertThat(receive("orders", 10)).isEmpty();
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.message", Long.class)).isZero();
        // Deleting again is no error.
        messages().delete("orders", received.get(0).receiptHandle());
    }

    @Test
    void bodiesAreKeptVerbatim() {
        create("raw");
        String body = "{ \"not\": \"normalised\" }\n\t<xml/> ünïcödé 😀";
        messages().send("raw", OutgoingMessage.of(body));
        assertThat(receive("raw", 1).get(0).body()).isEqualTo(body);
    }

    @Test
    void anExpiredVisibilityTimeoutRedeliversAndFencesTheOldHandle() {
        create("fenced");
        messages().send("fenced", OutgoingMessage.of("once"));
        ReceivedMessage first = receive("fenced", 1).get(0);
        expireVisibility("fenced");
        ReceivedMessage second = receive("fenced", 1).get(0);
        assertThat(second.messageId()).isEqualTo(first.messageId());
        assertThat(second.receiveCount()).isEqualTo(2);
        assertThat(second.receiptHandle()).isNotEqualTo(first.receiptHandle());

        assertThatThrownBy(() -> messages().delete("fenced", first.receiptHandle()))
            .isInstanceOfSatisfying(MessageQueueException.class,
                    ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.RECEIPT_HANDLE_INVALID));
        assertThatThrownBy(() -> messages().changeVisibility("fenced", first.receiptHandle(), Duration.ZERO))
            .isInstanceOfSatisfying(MessageQueueException.class,
                    ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.RECEIPT_HANDLE_INVALID));
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.message", Long.class)).isOne();

        messages().delete("fenced", second.receiptHandle());
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.message", Long.class)).isZero();
    }

    @Test
    void aHandleWhoseTimeoutRanOutStillDeletesUntilTheMessageIsReceivedAgain() {
        create("late");
        messages().send("late", OutgoingMessage.of("slow consumer"));
        ReceivedMessage received = receive("late", 1).get(0);
        expireVisibility("late");
        messages().delete("late", received.receiptHandle());
        assertThat(receive("late", 1)).isEmpty();
    }

    @Test
    void malformedAndForeignHandlesAreRefused() {
        create("a");
        create("b");
        messages().send("a", OutgoingMessage.of("x"));
        ReceivedMessage received = receive("a", 1).get(0);
        assertThatThrownBy(() -> messages().delete("b", received.receiptHandle()))
            .isInstanceOfSatisfying(MessageQueueException.class,
                    ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.RECEIPT_HANDLE_INVALID));
        assertThatThrownBy(() -> messages().delete("a", "not-a-handle"))
            .isInstanceOfSatisfying(MessageQueueException.class,
                    ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.RECEIPT_HANDLE_INVALID));
    }

    @Test
    void visibilityChangesExtendHideAndRelease() {
        create("visibility");
        messages().send("visibility", OutgoingMessage.of("x"));
        ReceivedMessage received = messages().receive("visibility",
                ReceiveRequest.of(1).withVisibilityTimeout(Duration.ofSeconds(5)).withWaitTime(Duration.ZERO)).get(0);
        messages().changeVisibility("visibility", received.receiptHandle(), Duration.ofHours(1));
        assertThat(queue.jdbc().queryForObject("SELECT visible_at > now() + interval '59 minutes' FROM pgqueue.message",
                Boolean.class)).isTrue();
        messages().changeVisibility("visibility", received.receiptHandle(), Duration.ZERO);
        assertThatThrownBy(() -> messages().changeVisibility("visibility", received.receiptHandle(), Duration.ofSeconds(9)))
            .isInstanceOfSatisfying(MessageQueueException.class,
                    ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.MESSAGE_NOT_IN_FLIGHT));
        assertThat(receive("visibility", 1)).singleElement()
            .satisfies(message -> assertThat(message.receiveCount()).isEqualTo(2));
        assertThatThrownBy(() -> messages().changeVisibility("visibility", received.receiptHandle(), Duration.ofHours(13)))
            .isInstanceOfSatisfying(MessageQueueException.class,
                    ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.INVALID_PARAMETER_VALUE));
    }

    @Test
    void batchesSendReceiveDeleteAndReportEachEntry() {
        create("batch");
        List<BatchEntry<OutgoingMessage>> entries = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            entries.add(new BatchEntry<>("m" + i, OutgoingMessage.of("body " + i)));
        }
        entries.add(new BatchEntry<>("bad", OutgoingMessage.of("\u0001")));
        BatchResult<SentMessage> sent = messages().sendBatch("batch", entries);
        assertThat(sent.successful()).hasSize(9).containsKeys("m0", "m8");
        assertThat(sent.failed()).singleElement().satisfies(failure -> {
            assertThat(failure.id()).isEqualTo("bad");
            assertThat(failure.error()).isEqualTo(MessageQueueError.INVALID_MESSAGE_CONTENTS);
        });

        List<ReceivedMessage> received = receive("batch", 10);
        assertThat(received).extracting(ReceivedMessage::body).containsExactlyInAnyOrder("body 0", "body 1", "body 2",
                "body 3", "body 4", "body 5", "body 6", "body 7", "body 8");
        List<BatchEntry<String>> deletes = new ArrayList<>();
        for (int i = 0; i < received.size(); i++) {
            deletes.add(new BatchEntry<>("d" + i, received.get(i).receiptHandle()));
        }
        deletes.add(new BatchEntry<>("junk", "junk"));
        BatchResult<Boolean> deleted = messages().deleteBatch("batch", deletes);
        assertThat(deleted.successful()).hasSize(9);
        assertThat(deleted.failed()).singleElement()
            .satisfies(failure -> assertThat(failure.error()).isEqualTo(MessageQueueError.RECEIPT_HANDLE_INVALID));
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.message", Long.class)).isZero();
    }

    @Test
    void invalidBatchesWriteNothing() {
        create("strict");
        assertThatThrownBy(() -> messages().sendBatch("strict", List.of(new BatchEntry<>("a", OutgoingMessage.of("1")),
                new BatchEntry<>("a", OutgoingMessage.of("2")))))
            .isInstanceOfSatisfying(MessageQueueException.class,
                    ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.BATCH_ENTRY_IDS_NOT_DISTINCT));
        assertThatThrownBy(() -> messages().sendBatch("strict", List.of()))
            .isInstanceOfSatisfying(MessageQueueException.class,
                    ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.EMPTY_BATCH_REQUEST));
        List<BatchEntry<OutgoingMessage>> eleven = new ArrayList<>();
        for (int i = 0; i < 11; i++) {
            eleven.add(new BatchEntry<>("e" + i, OutgoingMessage.of("x")));
        }
        assertThatThrownBy(() -> messages().sendBatch("strict", eleven))
            .isInstanceOfSatisfying(MessageQueueException.class,
                    ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.TOO_MANY_ENTRIES_IN_BATCH_REQUEST));
        String big = "x".repeat(200_000);
        List<BatchEntry<OutgoingMessage>> tooLong = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            tooLong.add(new BatchEntry<>("e" + i, OutgoingMessage.of(big)));
        }
        assertThatThrownBy(() -> messages().sendBatch("strict", tooLong))
            .isInstanceOfSatisfying(MessageQueueException.class,
                    ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.BATCH_REQUEST_TOO_LONG));
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.message", Long.class)).isZero();
    }

    @Test
    void delayedMessagesStayHiddenUntilTheirDelayPasses() {
        create("delayed");
        messages().send("delayed", OutgoingMessage.of("later").withDelay(Duration.ofSeconds(900)));
        assertThat(receive("delayed", 1)).isEmpty();
        assertThat(messages().counts().get("delayed").delayed()).isOne();
        expireVisibility("delayed");
        assertThat(receive("delayed", 1)).singleElement().satisfies(m -> assertThat(m.body()).isEqualTo("later"));
        assertThatThrownBy(() -> messages().send("delayed", OutgoingMessage.of("x").withDelay(Duration.ofSeconds(901))))
            .isInstanceOf(MessageQueueException.class);
    }

    @Test
    void aWaitingReceiveIsWokenByASend() throws Exception {
        create("waiting");
        long started = System.nanoTime();
        CompletableFuture<List<ReceivedMessage>> waiting = messages().receiveAsync("waiting",
                ReceiveRequest.of(1).withWaitTime(Duration.ofSeconds(20)));
        assertThat(waiting).isNotDone();
        messages().send("waiting", OutgoingMessage.of("wake up"));
        List<ReceivedMessage> received = waiting.get(5, TimeUnit.SECONDS);
        assertThat(received).singleElement().satisfies(m -> assertThat(m.body()).isEqualTo("wake up"));
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void aWaitingReceiveEndsEmptyAtItsWaitTime() throws Exception {
        create("quiet");
        long started = System.nanoTime();
        List<ReceivedMessage> received = messages().receiveAsync("quiet",
                ReceiveRequest.of(1).withWaitTime(Duration.ofSeconds(1))).get(5, TimeUnit.SECONDS);
        assertThat(received).isEmpty();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(990));
    }

    @Test
    void aWaitingReceiveIsWokenWhenAVisibilityTimeoutRunsOut() throws Exception {
        create("timeout");
        messages().send("timeout", OutgoingMessage.of("again"));
        messages().receive("timeout", ReceiveRequest.of(1).withVisibilityTimeout(Duration.ofSeconds(1))
            .withWaitTime(Duration.ZERO));
        List<ReceivedMessage> received = messages().receiveAsync("timeout",
                ReceiveRequest.of(1).withWaitTime(Duration.ofSeconds(10))).get(5, TimeUnit.SECONDS);
        assertThat(received).singleElement().satisfies(m -> assertThat(m.receiveCount()).isEqualTo(2));
    }

    @Test
    void aSendInsideATransactionIsSeenOnlyAfterItsCommit() throws Exception {
        create("tx");
        TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(queue.dataSource()));
        CompletableFuture<List<ReceivedMessage>> waiting = messages().receiveAsync("tx",
                ReceiveRequest.of(1).withWaitTime(Duration.ofSeconds(20)));
        transactions.executeWithoutResult(status -> {
            messages().send("tx", OutgoingMessage.of("committed"));
            assertThat(CompletableFuture.supplyAsync(() -> receive("tx", 1)).join()).as("not committed yet").isEmpty();
        });
        assertThat(waiting.get(5, TimeUnit.SECONDS)).singleElement()
            .satisfies(m -> assertThat(m.body()).isEqualTo("committed"));
        transactions.executeWithoutResult(status -> {
            messages().send("tx", OutgoingMessage.of("rolled back"));
            status.setRollbackOnly();
        });
        assertThat(receive("tx", 10)).isEmpty();
    }

    @Test
    void messagesReceivedTooOftenMoveToTheDeadLetterQueue() {
        create("orders-dlq");
        messages().createQueue("orders", MessageQueueAttributes.defaults()
            .withRedrivePolicy(new RedrivePolicy("orders-dlq", 2)), Map.of());
        SentMessage sent = messages().send("orders", OutgoingMessage.of("poison")
            .withAttributes(Map.of("kind", MessageAttributeValue.string("bad"))));
        assertThat(receive("orders", 1)).hasSize(1);
        expireVisibility("orders");
        assertThat(receive("orders", 1)).hasSize(1);
        expireVisibility("orders");
        assertThat(receive("orders", 1)).as("moved on its third receive").isEmpty();
        ReceivedMessage dead = receive("orders-dlq", 1).get(0);
        assertThat(dead.messageId()).isEqualTo(sent.messageId());
        assertThat(dead.body()).isEqualTo("poison");
        assertThat(dead.attributes()).containsKey("kind");
        assertThat(dead.receiveCount()).isEqualTo(1);
        assertThat(messages().deadLetterSourceQueues("orders-dlq")).extracting(MessageQueueInfo::name)
            .containsExactly("orders");
    }

    @Test
    void aRedrivePolicyNeedsAnExistingQueueOfTheSameType() {
        create("standard-dlq");
        assertThatThrownBy(() -> messages().createQueue("x", MessageQueueAttributes.defaults()
            .withRedrivePolicy(new RedrivePolicy("missing", 3)), Map.of()))
            .isInstanceOf(MessageQueueException.class).hasMessageContaining("does not exist");
        assertThatThrownBy(() -> messages().createQueue("x.fifo", MessageQueueAttributes.defaults()
            .withRedrivePolicy(new RedrivePolicy("standard-dlq", 3)), Map.of()))
            .isInstanceOf(MessageQueueException.class).hasMessageContaining("same type");
    }

    @Test
    void creatingAQueueTwiceReturnsItUnlessItsAttributesDiffer() {
        MessageQueueInfo first = create("twice");
        assertThat(create("twice").id()).isEqualTo(first.id());
        assertThatThrownBy(() -> messages().createQueue("twice",
                MessageQueueAttributes.defaults().withVisibilityTimeout(Duration.ofSeconds(60)), Map.of()))
            .isInstanceOfSatisfying(MessageQueueException.class, ex -> {
                assertThat(ex.error()).isEqualTo(MessageQueueError.QUEUE_NAME_EXISTS);
                assertThat(ex.getMessage()).contains("VisibilityTimeout");
            });
    }

    @Test
    void queuesAreListedChangedTaggedPurgedAndDeleted() {
        create("app-a");
        create("app-b");
        create("other");
        assertThat(messages().listQueues("app-", "", 1000)).extracting(MessageQueueInfo::name)
            .containsExactly("app-a", "app-b");
        assertThat(messages().listQueues("", "app-a", 1)).extracting(MessageQueueInfo::name).containsExactly("app-b");
        assertThat(messages().listQueues("app_", "", 1000)).as("'_' is not a wildcard").isEmpty();

        messages().setAttributes("app-a", MessageQueueAttributes.defaults().withDelay(Duration.ofSeconds(5)));
        assertThat(messages().getQueue("app-a").attributes().delay()).isEqualTo(Duration.ofSeconds(5));
        messages().tagQueue("app-a", Map.of("team", "red", "env", "test"));
        messages().untagQueue("app-a", java.util.Set.of("env"));
        assertThat(messages().getQueue("app-a").tags()).containsExactly(Map.entry("team", "red"));

        messages().send("app-b", OutgoingMessage.of("1"));
        messages().send("app-b", OutgoingMessage.of("2"));
        assertThat(messages().purge("app-b")).isEqualTo(2);

        messages().send("other", OutgoingMessage.of("gone with the queue"));
        messages().deleteQueue("other");
        assertThatThrownBy(() -> messages().send("other", OutgoingMessage.of("x")))
            .isInstanceOfSatisfying(MessageQueueException.class,
                    ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.QUEUE_DOES_NOT_EXIST));
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.message", Long.class)).isZero();
    }

    @Test
    void aSendToAQueueDeletedMeanwhileWritesNothing() {
        create("short-lived");
        messages().queue("short-lived");
        queue.jdbc().update("DELETE FROM pgqueue.message_queue WHERE name = 'short-lived'");
        assertThatThrownBy(() -> messages().send("short-lived", OutgoingMessage.of("x")))
            .isInstanceOfSatisfying(MessageQueueException.class,
                    ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.QUEUE_DOES_NOT_EXIST));
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.message", Long.class)).isZero();
    }

    @Test
    void badNamesAndAttributesAreRefused() {
        assertThatThrownBy(() -> create("has space")).isInstanceOf(MessageQueueException.class);
        assertThatThrownBy(() -> create("x".repeat(81))).isInstanceOf(MessageQueueException.class);
        assertThatThrownBy(() -> messages().createQueue("standard",
                MessageQueueAttributes.defaults().withContentBasedDeduplication(true), Map.of()))
            .isInstanceOfSatisfying(MessageQueueException.class,
                    ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.INVALID_ATTRIBUTE_NAME));
        assertThatThrownBy(() -> MessageQueueAttributes.defaults().withVisibilityTimeout(Duration.ofHours(13)))
            .isInstanceOfSatisfying(MessageQueueException.class,
                    ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.INVALID_ATTRIBUTE_VALUE));
        create("limits");
        assertThatThrownBy(() -> messages().send("limits", OutgoingMessage.of("x".repeat(1_048_577))))
            .isInstanceOf(MessageQueueException.class).hasMessageContaining("shorter than");
        assertThatThrownBy(() -> messages().send("limits", OutgoingMessage.of("x")
            .withAttributes(Map.of("AWS.reserved", MessageAttributeValue.string("x")))))
            .isInstanceOf(MessageQueueException.class);
        assertThatThrownBy(() -> messages().receive("limits", ReceiveRequest.of(11)))
            .isInstanceOf(MessageQueueException.class).hasMessageContaining("MaxNumberOfMessages");
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.message", Long.class)).isZero();
    }

    @Test
    void messagesOlderThanTheirRetentionAreDeleted() {
        messages().createQueue("short", MessageQueueAttributes.defaults().withRetention(Duration.ofMinutes(1)), Map.of());
        messages().send("short", OutgoingMessage.of("old"));
        messages().send("short", OutgoingMessage.of("new"));
        queue.jdbc().update("UPDATE pgqueue.message SET sent_at = now() - interval '2 minutes' WHERE body = 'old'");
        messages().deleteExpired();
        assertThat(receive("short", 10)).extracting(ReceivedMessage::body).containsExactly("new");
    }

    @Test
    void callsAfterAStopWorkWithoutListeningAgainUntilTheNextStart() {
        MessageEngine node = new MessageEngine(queue.dataSource(), new MessageStore(queue.dataSource(), queue.config()),
                MessageQueueEvents.NONE, Duration.ofSeconds(1), Duration.ZERO);
        node.createQueue("after-stop", MessageQueueAttributes.defaults(), Map.of());
        node.send("after-stop", OutgoingMessage.of("early"));
        assertThat(node.isRunning()).as("listening from the first send").isTrue();
        assertThat(node.receive("after-stop", ReceiveRequest.of(1))).hasSize(1);
        node.stop();

        // A request the web server finishes while the application shuts down.
        node.send("after-stop", OutgoingMessage.of("late"));
        assertThat(node.receive("after-stop", ReceiveRequest.of(1).withWaitTime(Duration.ofSeconds(5))))
            .extracting(ReceivedMessage::body).containsExactly("late");
        long waitStart = System.nanoTime();
        assertThat(node.receive("after-stop", ReceiveRequest.of(1).withWaitTime(Duration.ofSeconds(5)))).isEmpty();
        assertThat(Duration.ofNanos(System.nanoTime() - waitStart)).as("a wait after the stop").isLessThan(Duration.ofSeconds(4));
        assertThat(node.isRunning()).as("listening after the stop").isFalse();

        node.start();
        assertThat(node.isRunning()).isTrue();
        node.stop();
    }

    @Test
    void metersCountSendsReceivesDeletesAndGaugeTheQueues() throws Exception {
        io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
        MessageEngine metered = new MessageEngine(queue.dataSource(), new MessageStore(queue.dataSource(), queue.config()),
                new io.pgqueue.observe.MessageQueueMeters(registry), Duration.ofMillis(200), Duration.ZERO);
        try {
            metered.createQueue("metered", MessageQueueAttributes.defaults(), Map.of());
            metered.sendBatch("metered", List.of(new BatchEntry<>("a", OutgoingMessage.of("1")),
                    new BatchEntry<>("b", OutgoingMessage.of("2"))));
            ReceivedMessage received = metered.receive("metered", ReceiveRequest.of(1).withWaitTime(Duration.ZERO)).get(0);
            metered.delete("metered", received.receiptHandle());
            metered.receive("metered", ReceiveRequest.of(10).withVisibilityTimeout(Duration.ofMinutes(1))
                .withWaitTime(Duration.ZERO));
            metered.receive("metered", ReceiveRequest.of(10).withWaitTime(Duration.ZERO));
            assertThat(registry.get("pgqueue.messages.sent").tag("queue", "metered").counter().count()).isEqualTo(2);
            assertThat(registry.get("pgqueue.messages.received").tag("queue", "metered").counter().count()).isEqualTo(2);
            assertThat(registry.get("pgqueue.messages.deleted").tag("queue", "metered").counter().count()).isEqualTo(1);
            assertThat(registry.get("pgqueue.messages.receives").tag("outcome", "empty").counter().count()).isEqualTo(1);
            assertThat(registry.get("pgqueue.messages.delivery.delay").timer().count()).isEqualTo(2);
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                assertThat(registry.get("pgqueue.messages.in.flight").tag("queue", "metered").gauge().value()).isEqualTo(1);
                assertThat(registry.get("pgqueue.messages.visible").tag("queue", "metered").gauge().value()).isZero();
            });
            metered.deleteQueue("metered");
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                .until(() -> registry.find("pgqueue.messages.visible").tag("queue", "metered").gauge() == null);
        }
        finally {
            metered.stop();
        }
    }

    @Test
    void countsShowVisibleInFlightDelayedAndTheOldestAge() {
        create("counted");
        messages().send("counted", OutgoingMessage.of("a"));
        messages().send("counted", OutgoingMessage.of("b"));
        messages().send("counted", OutgoingMessage.of("c").withDelay(Duration.ofMinutes(5)));
        receive("counted", 1);
        queue.jdbc().update("UPDATE pgqueue.message SET sent_at = now() - interval '1 minute'");
        MessageQueueCounts counts = messages().counts().get("counted");
        assertThat(counts.visible()).isOne();
        assertThat(counts.inFlight()).isOne();
        assertThat(counts.delayed()).isOne();
        assertThat(counts.oldestAge()).isGreaterThanOrEqualTo(Duration.ofSeconds(59));
    }
}
