package io.pgqueue.message;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import io.pgqueue.internal.message.MessageEngine;
import io.pgqueue.internal.store.MessageStore;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two nodes (each its own {@link MessageQueues} and connection pool on one database): a receive
 * waiting on one node is woken by a send on the other, and consumers on both nodes share a queue
 * without receiving a message twice.
 */
class MessageQueueNodesTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass();

    static HikariDataSource poolA;

    static HikariDataSource poolB;

    static MessageEngine nodeA;

    static MessageEngine nodeB;

    @BeforeAll
    static void startNodes() {
        poolA = queue.database().newDataSource(8);
        poolB = queue.database().newDataSource(8);
        nodeA = new MessageEngine(poolA, new MessageStore(poolA, queue.config()), MessageQueueEvents.NONE, Duration.ofSeconds(10),
                Duration.ofSeconds(10));
        nodeB = new MessageEngine(poolB, new MessageStore(poolB, queue.config()), MessageQueueEvents.NONE, Duration.ofSeconds(10),
                Duration.ofSeconds(10));
        nodeA.start();
        nodeB.start();
    }

    @AfterAll
    static void stopNodes() {
        nodeA.stop();
        nodeB.stop();
        poolA.close();
        poolB.close();
    }

    @Test
    void aSendOnOneNodeWakesAReceiveWaitingOnTheOther() throws Exception {
        nodeA.createQueue("across", MessageQueueAttributes.defaults(), Map.of());
        CompletableFuture<List<ReceivedMessage>> waiting = nodeA.receiveAsync("across",
                ReceiveRequest.of(1).withWaitTime(Duration.ofSeconds(20)));
        long started = System.nanoTime();
        nodeB.send("across", OutgoingMessage.of("from b"));
        assertThat(waiting.get(5, TimeUnit.SECONDS)).extracting(ReceivedMessage::body).containsExactly("from b");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void consumersOnTwoNodesShareAQueueWithoutDuplicates() throws Exception {
        nodeA.createQueue("shared", MessageQueueAttributes.defaults().withVisibilityTimeout(Duration.ofMinutes(5)),
                Map.of());
        int total = 2_000;
        Map<String, Integer> received = new ConcurrentHashMap<>();
        AtomicInteger deleted = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(10);
        try {
            List<Future<?>> work = new ArrayList<>();
            for (int p = 0; p < 2; p++) {
                MessageQueues node = p == 0 ? nodeA : nodeB;
                int first = p * total / 2;
                work.add(threads.submit(() -> {
                    for (int i = first; i < first + total / 2; i += 10) {
                        List<BatchEntry<OutgoingMessage>> batch = new ArrayList<>();
                        for (int j = i; j < i + 10; j++) {
                            batch.add(new BatchEntry<>("m" + j, OutgoingMessage.of(Integer.toString(j))));
                        }
                        node.sendBatch("shared", batch);
                    }
                }));
            }
            for (int c = 0; c < 8; c++) {
                MessageQueues node = c % 2 == 0 ? nodeA : nodeB;
                work.add(threads.submit(() -> {
                    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                    while (deleted.get() < total && System.nanoTime() < deadline) {
                        for (ReceivedMessage message : node.receive("shared",
                                ReceiveRequest.of(10).withWaitTime(Duration.ofSeconds(1)))) {
                            received.merge(message.body(), 1, Integer::sum);
                            node.delete("shared", message.receiptHandle());
                            deleted.incrementAndGet();
                        }
                    }
                }));
            }
            for (Future<?> future : work) {
                future.get();
            }
        }
        finally {
            threads.shutdownNow();
        }
        assertThat(received).hasSize(total);
        assertThat(received.values()).allMatch(count -> count == 1);
    }
}
