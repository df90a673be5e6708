package io.pgqueue.shard;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import io.pgqueue.Engines;
import io.pgqueue.PgQueue;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.internal.shard.PartitionHash;
import io.pgqueue.internal.shard.Shards;
import io.pgqueue.message.BatchEntry;
import io.pgqueue.message.MessageQueueAttributes;
import io.pgqueue.message.MessageQueueCounts;
import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.message.OutgoingMessage;
import io.pgqueue.message.ReceiveRequest;
import io.pgqueue.message.ReceivedMessage;
import io.pgqueue.message.SentMessage;
import io.pgqueue.message.VisibilityChange;
import io.pgqueue.testing.TestDatabase;
import io.pgqueue.testing.TestShards;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Message queues on three shards (three databases on the test server): where messages land, that
 * every call finds them wherever they are, that FIFO groups keep their order and duplicates on one
 * shard, and that a partition move carries messages with their receipts.
 */
class ShardedMessageQueueTests {

    private static final TaskRegistry TASKS = TaskRegistry.of(List.of(TaskDefinition.builder("mail").build()));

    private static final int PARTITIONS = 1024;

    @RegisterExtension
    final TestShards shards = TestShards.perTest("msgshard", 3);

    private final List<PgQueue> queues = new ArrayList<>();

    @AfterEach
    void close() {
        this.queues.forEach(PgQueue::stop);
    }

    private PgQueue node() {
        PgQueue queue = PgQueue.builder(this.shards.get(0).dataSource())
            .tasks(TASKS)
            .shard("b", this.shards.get(1).dataSource())
            .shard("c", this.shards.get(2).dataSource())
            .migrateSchema(true)
            .build();
        this.queues.add(queue);
        return queue;
    }

    @Test
    void messagesSpreadOverTheShardsAndEveryCallFindsThem() {
        PgQueue node = node();
        MessageQueues messages = node.messages();
        messages.createQueue("orders", MessageQueueAttributes.defaults(), Map.of());
        Set<String> sent = new HashSet<>();
        for (int i = 0; i < 150; i++) {
            sent.add(messages.send("orders", OutgoingMessage.of("single " + i)).messageId());
        }
        for (int b = 0; b < 15; b++) {
            int batch = b;
            messages.sendBatch("orders", IntStream.range(0, 10)
                .mapToObj(i -> new BatchEntry<>("e" + i, OutgoingMessage.of("batch " + batch + "/" + i))).toList())
                .successful().values().forEach(message -> sent.add(message.messageId()));
        }
        assertThat(sent).hasSize(300);

        Shards topology = Engines.of(node).shards();
        for (int s = 0; s < 3; s++) {
            TestDatabase shard = this.shards.get(s);
            JdbcTemplate jdbc = new JdbcTemplate(shard.dataSource());
            assertThat(jdbc.queryForObject("SELECT count(*) FROM pgqueue.message", Long.class))
                .as("messages on %s", shard.name()).isGreaterThan(20);
            assertThat(jdbc.queryForList("SELECT DISTINCT id >> 48 FROM pgqueue.message", Long.class))
                .as("ids from the range of %s", shard.name()).containsExactly((long) s);
            String name = s == 0 ? "main" : s == 1 ? "b" : "c";
            assertThat(jdbc.queryForList("SELECT partition FROM pgqueue.message", Integer.class))
                .allMatch(partition -> topology.map().shardOf(partition).equals(name));
        }
        // A batch's messages share a partition, so a batch is one transaction on one shard.
        assertThat(countAll("SELECT count(DISTINCT partition) FROM pgqueue.message WHERE body LIKE 'batch 3/%'")).isOne();
        // Messages weigh their partitions for the balancer, as jobs do.
        assertThat(Engines.of(node).enqueuer().partitionLoad().orElseThrow().take().values().stream()
            .mapToLong(Long::longValue).sum()).isEqualTo(300);
        assertThat(messages.counts("orders").visible()).isEqualTo(300);
        assertThat(messages.counts()).extractingByKey("orders").extracting(MessageQueueCounts::visible).isEqualTo(300L);
        assertThat(messages.peek("orders", 5)).hasSize(5);

        // Receives take from every shard; deletes and visibility changes find each message's shard by its handle.
        List<ReceivedMessage> received = new ArrayList<>();
        while (received.size() < 300) {
            List<ReceivedMessage> batch = messages.receive("orders", ReceiveRequest.of(10));
            assertThat(batch).as("a receive with messages left on some shard").isNotEmpty();
            received.addAll(batch);
        }
        assertThat(received).extracting(ReceivedMessage::messageId).doesNotHaveDuplicates()
            .containsExactlyInAnyOrderElementsOf(sent);
        assertThat(messages.counts("orders").inFlight()).isEqualTo(300);

        ReceivedMessage again = received.get(0);
        messages.changeVisibility("orders", again.receiptHandle(), Duration.ZERO);
        for (ReceivedMessage message : received.subList(1, 150)) {
            messages.delete("orders", message.receiptHandle());
        }
        for (int i = 150; i < 300; i += 10) {
            List<ReceivedMessage> slice = received.subList(i, i + 10);
            assertThat(messages.deleteBatch("orders", IntStream.range(0, 10)
                .mapToObj(k -> new BatchEntry<>("d" + k, slice.get(k).receiptHandle())).toList()).failed()).isEmpty();
        }
        List<ReceivedMessage> last = messages.receive("orders", ReceiveRequest.of(10));
        assertThat(last).extracting(ReceivedMessage::messageId).containsExactly(again.messageId());
        assertThatThrownBy(() -> messages.changeVisibility("orders", again.receiptHandle(), Duration.ofSeconds(5)))
            .isInstanceOf(MessageQueueException.class).extracting(ex -> ((MessageQueueException) ex).error())
            .isEqualTo(MessageQueueError.RECEIPT_HANDLE_INVALID);
        messages.delete("orders", last.get(0).receiptHandle());
        assertThat(messages.counts("orders").visible() + messages.counts("orders").inFlight()).isZero();
        for (int s = 0; s < 3; s++) {
            assertThat(new JdbcTemplate(this.shards.get(s).dataSource())
                .queryForObject("SELECT count(*) FROM pgqueue.message", Long.class)).isZero();
        }
    }

    @Test
    void aFifoGroupKeepsItsOrderAndItsDuplicatesOnTheShardOfItsPartition() {
        PgQueue node = node();
        MessageQueues messages = node.messages();
        messages.createQueue("ledger.fifo", MessageQueueAttributes.defaults(), Map.of());
        assertThat(messages.deduplicatesPerGroup()).isTrue();
        List<String> groups = List.of("acct-1", "acct-2", "acct-3", "acct-4", "acct-5", "acct-6");
        for (int i = 0; i < 20; i++) {
            for (String group : groups) {
                messages.send("ledger.fifo", OutgoingMessage.fifo(group + ":" + i, group, group + "-" + i));
            }
        }
        Shards topology = Engines.of(node).shards();
        for (String group : groups) {
            String shard = topology.map().shardOf(PartitionHash.partitionOf(group, PARTITIONS));
            assertThat(countOn(shard, "SELECT count(*) FROM pgqueue.message WHERE group_id = ?", group))
                .as("group %s on shard %s", group, shard).isEqualTo(20);
        }
        // A duplicate within its group returns the first message; the same id in another group is a message of its own.
        SentMessage first = messages.send("ledger.fifo", OutgoingMessage.fifo("again", "acct-1", "acct-1-3"));
        SentMessage other = messages.send("ledger.fifo", OutgoingMessage.fifo("other", "acct-2", "acct-1-3"));
        assertThat(countAll("SELECT count(*) FROM pgqueue.message WHERE body = 'again'")).isZero();
        assertThat(countAll("SELECT count(*) FROM pgqueue.message WHERE body = 'other'")).isOne();
        assertThat(first.sequenceNumber()).isNotEqualTo(other.sequenceNumber());

        Map<String, List<String>> bodies = new LinkedHashMap<>();
        int received = 0;
        while (received < 121) {
            List<ReceivedMessage> batch = messages.receive("ledger.fifo", ReceiveRequest.of(10));
            assertThat(batch).isNotEmpty();
            for (ReceivedMessage message : batch) {
                bodies.computeIfAbsent(message.groupId(), g -> new ArrayList<>()).add(message.body());
                messages.delete("ledger.fifo", message.receiptHandle());
            }
            received += batch.size();
        }
        for (String group : groups) {
            List<String> expected = new ArrayList<>(IntStream.range(0, 20).mapToObj(i -> group + ":" + i).toList());
            if (group.equals("acct-2")) {
                expected.add("other");
            }
            assertThat(bodies.get(group)).as("group %s in order", group).containsExactlyElementsOf(expected);
        }
    }

    @Test
    void aLongPollOnOneNodeIsWokenByASendOfAnotherToAnyShard() throws Exception {
        MessageQueues receiver = node().messages();
        PgQueue senderNode = node();
        MessageQueues sender = senderNode.messages();
        receiver.createQueue("alerts", MessageQueueAttributes.defaults(), Map.of());
        Shards topology = Engines.of(senderNode).shards();
        for (String shard : List.of("b", "c")) {
            String group = groupOn(topology, shard, "tenant-");
            CompletableFuture<List<ReceivedMessage>> waiting = receiver.receiveAsync("alerts",
                    ReceiveRequest.of(1).withWaitTime(Duration.ofSeconds(20)));
            Thread.sleep(200);
            long sentAt = System.nanoTime();
            sender.send("alerts", OutgoingMessage.of("to " + shard).withGroupId(group));
            List<ReceivedMessage> got = waiting.get(10, TimeUnit.SECONDS);
            assertThat(got).extracting(ReceivedMessage::body).containsExactly("to " + shard);
            assertThat(Duration.ofNanos(System.nanoTime() - sentAt)).isLessThan(Duration.ofSeconds(5));
            assertThat(countOn(shard, "SELECT count(*) FROM pgqueue.message WHERE body = ?", "to " + shard)).isOne();
        }
    }

    @Test
    void aPartitionMoveCarriesItsMessagesWithTheirReceiptsAndDuplicates() {
        PgQueue node = node();
        MessageQueues messages = node.messages();
        messages.createQueue("jobs", MessageQueueAttributes.defaults(), Map.of());
        messages.createQueue("steps.fifo", MessageQueueAttributes.defaults(), Map.of());
        Shards topology = Engines.of(node).shards();
        String group = groupOn(topology, "b", "customer-");
        int partition = PartitionHash.partitionOf(group, PARTITIONS);
        for (int i = 0; i < 30; i++) {
            messages.send("jobs", OutgoingMessage.of("job " + i).withGroupId(group));
            messages.send("steps.fifo", OutgoingMessage.fifo("step " + i, group, "s" + i));
        }
        // Ten in flight on the standard queue; the FIFO group untouched, so it moves at once.
        List<ReceivedMessage> inFlight = messages.receive("jobs", ReceiveRequest.of(10).withVisibilityTimeout(Duration.ofMinutes(5)));
        assertThat(inFlight).hasSize(10);

        PartitionMoveResult result = node.admin().movePartition(partition, "c");

        assertThat(result.messagesMoved()).isEqualTo(60);
        assertThat(countOn("b", "SELECT count(*) FROM pgqueue.message WHERE partition = ?", partition)).isZero();
        assertThat(countOn("b", "SELECT count(*) FROM pgqueue.message_moving")).isZero();
        assertThat(countOn("c", "SELECT count(*) FROM pgqueue.message WHERE partition = ?", partition)).isEqualTo(60);
        assertThat(messages.counts("jobs").inFlight()).as("in flight as before the move").isEqualTo(10);
        // The handles of the receive before the move delete the messages where they are now.
        assertThat(messages.deleteBatch("jobs", IntStream.range(0, 10)
            .mapToObj(k -> new BatchEntry<>("d" + k, inFlight.get(k).receiptHandle())).toList()).failed()).isEmpty();
        assertThat(messages.counts("jobs").inFlight()).isZero();
        assertThat(messages.counts("jobs").visible()).isEqualTo(20);

        // The FIFO group: its deduplication ids came along, later sends follow the moved messages.
        messages.send("steps.fifo", OutgoingMessage.fifo("step 3 again", group, "s3"));
        messages.send("steps.fifo", OutgoingMessage.fifo("step 30", group, "s30"));
        assertThat(countAll("SELECT count(*) FROM pgqueue.message WHERE body = 'step 3 again'")).isZero();
        List<String> steps = new ArrayList<>();
        while (steps.size() < 31) {
            List<ReceivedMessage> batch = messages.receive("steps.fifo", ReceiveRequest.of(10));
            assertThat(batch).isNotEmpty();
            batch.forEach(message -> {
                steps.add(message.body());
                messages.delete("steps.fifo", message.receiptHandle());
            });
        }
        assertThat(steps).containsExactlyElementsOf(IntStream.rangeClosed(0, 30).mapToObj(i -> "step " + i).toList());
    }

    @Test
    void aMoveWaitsForAFifoGroupInFlightWhoseDeleteGoesToTheShardTheMoveLeaves() throws Exception {
        PgQueue node = node();
        MessageQueues messages = node.messages();
        messages.createQueue("orders.fifo", MessageQueueAttributes.defaults(), Map.of());
        Shards topology = Engines.of(node).shards();
        String group = groupOn(topology, "b", "order-");
        int partition = PartitionHash.partitionOf(group, PARTITIONS);
        for (int i = 0; i < 3; i++) {
            messages.send("orders.fifo", OutgoingMessage.fifo("line " + i, group, "d" + i));
        }
        List<ReceivedMessage> inFlight = messages.receive("orders.fifo", ReceiveRequest.of(10));
        assertThat(inFlight).hasSize(3);

        CompletableFuture<PartitionMoveResult> move = CompletableFuture.supplyAsync(
                () -> node.admin().movePartition(partition, "c"));
        await().atMost(Duration.ofSeconds(10)).until(() -> topology.refresh().isMoving(partition));
        Thread.sleep(300);
        assertThat(move).as("the move waits while the group is in flight").isNotDone();
        long deleting = System.nanoTime();
        assertThat(messages.deleteBatch("orders.fifo", IntStream.range(0, 3)
            .mapToObj(k -> new BatchEntry<>("d" + k, inFlight.get(k).receiptHandle())).toList()).failed()).isEmpty();

        assertThat(move.get(10, TimeUnit.SECONDS).messagesMoved()).as("nothing left to move").isZero();
        assertThat(Duration.ofNanos(System.nanoTime() - deleting)).as("the delete and the end of the move")
            .isLessThan(Duration.ofSeconds(5));
        assertThat(countAll("SELECT count(*) FROM pgqueue.message")).isZero();
        // The group goes on where its partition is now.
        messages.send("orders.fifo", OutgoingMessage.fifo("line 3", group, "d3"));
        assertThat(countOn("c", "SELECT count(*) FROM pgqueue.message WHERE group_id = ?", group)).isOne();
    }

    @Test
    void deletingOrPurgingAQueueClearsEveryShardAndAFifoMessageCannotJoinATransaction() {
        PgQueue node = node();
        MessageQueues messages = node.messages();
        messages.createQueue("scratch", MessageQueueAttributes.defaults(), Map.of());
        messages.createQueue("gone", MessageQueueAttributes.defaults(), Map.of());
        messages.createQueue("steps.fifo", MessageQueueAttributes.defaults(), Map.of());
        for (int i = 0; i < 60; i++) {
            messages.send("scratch", OutgoingMessage.of("s" + i));
            messages.send("gone", OutgoingMessage.of("g" + i));
        }
        assertThat(messages.purge("scratch")).isEqualTo(60);
        messages.deleteQueue("gone");
        assertThat(countAll("SELECT count(*) FROM pgqueue.message")).isZero();

        // In the application's transaction a standard message is written on the main shard, to stay there.
        TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(this.shards.get(0)
            .dataSource()));
        transaction.executeWithoutResult(status -> messages.send("scratch", OutgoingMessage.of("in a transaction")));
        assertThat(countOn("main", "SELECT count(*) FROM pgqueue.message WHERE body = ? AND partition IS NULL",
                "in a transaction")).isOne();
        ReceivedMessage message = messages.receive("scratch", ReceiveRequest.of(1)).get(0);
        messages.delete("scratch", message.receiptHandle());
        assertThat(countAll("SELECT count(*) FROM pgqueue.message")).isZero();
        assertThatThrownBy(() -> transaction.executeWithoutResult(status -> messages.send("steps.fifo",
                OutgoingMessage.fifo("x", "g", "d")))).isInstanceOf(MessageQueueException.class)
            .hasMessageContaining("cannot join the application's transaction on a sharded installation");
        assertThat(countAll("SELECT count(*) FROM pgqueue.message")).isZero();
    }

    private long countAll(String sql) {
        long total = 0;
        for (int s = 0; s < 3; s++) {
            total += new JdbcTemplate(this.shards.get(s).dataSource()).queryForObject(sql, Long.class);
        }
        return total;
    }

    private long countOn(String shard, String sql, Object... args) {
        int index = shard.equals("main") ? 0 : shard.equals("b") ? 1 : 2;
        return new JdbcTemplate(this.shards.get(index).dataSource()).queryForObject(sql, Long.class, args);
    }

    private static String groupOn(Shards topology, String shard, String prefix) {
        for (int i = 0;; i++) {
            if (topology.map().shardOf(PartitionHash.partitionOf(prefix + i, PARTITIONS)).equals(shard)) {
                return prefix + i;
            }
        }
    }
}
