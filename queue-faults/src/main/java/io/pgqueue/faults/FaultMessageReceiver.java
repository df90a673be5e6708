package io.pgqueue.faults;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;

import io.pgqueue.PgQueue;
import io.pgqueue.message.BatchEntry;
import io.pgqueue.message.BatchEntryFailure;
import io.pgqueue.message.MessageQueueException;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.message.ReceiveRequest;
import io.pgqueue.message.ReceivedMessage;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.stereotype.Component;

/**
 * With {@code faults.role=message-receiver}, receives the messages {@link FaultMessageSender} sends,
 * from both its queues in turn, up to ten at a time with a visibility timeout of
 * {@link #VISIBILITY}, holds each batch {@code faults.messages.hold} (up to twice that: work, during
 * which a partition move may take the messages along), and deletes it with one batch call.
 * <p>
 * Recorded in {@code <node>-<pid>.receives} in {@code faults.record-dir}: {@code R <queue> <message
 * id> <receive count> <body> <epoch micros>} for each message received, before its delete;
 * {@code D <message id>} once its delete returned successfully; {@code X <message id> <code>} for
 * an entry the delete refused, and {@code E <exception>} for a call that failed.
 */
@Component
@ConditionalOnProperty(name = "faults.role", havingValue = "message-receiver")
class FaultMessageReceiver implements ApplicationRunner {

    /** The queues' visibility timeout: a message received twice within it was delivered twice. */
    static final Duration VISIBILITY = Duration.ofSeconds(30);

    private final MessageQueues messages;

    private final RecordFile file;

    @Value("${faults.messages.hold:100ms}")
    private Duration hold;

    FaultMessageReceiver(PgQueue queue, @Value("${pgqueue.node-id}") String node,
            @Value("${faults.record-dir}") Path directory) {
        this.messages = queue.messages();
        this.file = new RecordFile(directory.resolve(node + "-" + ProcessHandle.current().pid() + ".receives"));
    }

    @Override
    public void run(ApplicationArguments args) throws InterruptedException {
        int turn = 0;
        while (!Thread.currentThread().isInterrupted()) {
            String queue = turn++ % 2 == 0 ? FaultMessageSender.STANDARD : FaultMessageSender.FIFO;
            try {
                receiveOnce(queue);
            }
            catch (MessageQueueException ex) {
                // The sender creates the queues: until it has, there is nothing to receive.
                this.file.append("E " + ex.error());
                Thread.sleep(200);
            }
            catch (RuntimeException ex) {
                this.file.append("E " + ex.getClass().getSimpleName());
                Thread.sleep(200);
            }
        }
    }

    private void receiveOnce(String queue) throws InterruptedException {
        List<ReceivedMessage> received = this.messages.receive(queue, ReceiveRequest.of(10)
            .withVisibilityTimeout(VISIBILITY).withWaitTime(Duration.ofSeconds(1)));
        if (received.isEmpty()) {
            return;
        }
        for (ReceivedMessage message : received) {
            this.file.append("R " + queue + " " + message.messageId() + " " + message.receiveCount() + " "
                    + message.body() + " " + FaultMessageSender.micros());
        }
        Thread.sleep(ThreadLocalRandom.current().nextLong(this.hold.toMillis(), 2 * this.hold.toMillis() + 1));
        List<BatchEntry<String>> entries = IntStream.range(0, received.size())
            .mapToObj(i -> new BatchEntry<>(Integer.toString(i), received.get(i).receiptHandle())).toList();
        List<BatchEntryFailure> failed = this.messages.deleteBatch(queue, entries).failed();
        for (int i = 0; i < received.size(); i++) {
            String id = Integer.toString(i);
            BatchEntryFailure failure = failed.stream().filter(f -> f.id().equals(id)).findFirst().orElse(null);
            this.file.append(failure == null ? "D " + received.get(i).messageId()
                    : "X " + received.get(i).messageId() + " " + failure.error());
        }
    }
}
