package io.pgqueue.faults;

import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import io.pgqueue.PgQueue;
import io.pgqueue.message.MessageQueueAttributes;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.message.OutgoingMessage;
import io.pgqueue.message.SentMessage;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.stereotype.Component;

/**
 * With {@code faults.role=message-sender}, sends messages to two message queues for
 * {@code faults.messages.seconds} at {@code faults.messages.per-second}, then idles: to
 * {@value #STANDARD}, a third with a message group of {@value #FAIR_GROUPS} (a fair queue's) and
 * the others without, and to {@value #FIFO}, each in one of {@value #FIFO_GROUPS} groups with the
 * group's next sequence number in its body ({@code <group>:<n>}).
 * <p>
 * Each send is recorded in {@code <node>-<pid>.sends} in {@code faults.record-dir} once it returned
 * (the message is committed): {@code S <queue> <message id> <body> <epoch micros>}; a send that
 * failed: {@code F <queue> <body> <exception>}.
 */
@Component
@ConditionalOnProperty(name = "faults.role", havingValue = "message-sender")
class FaultMessageSender implements ApplicationRunner {

    /** The standard queue. */
    static final String STANDARD = "ledger";

    /** The FIFO queue. */
    static final String FIFO = "ledger.fifo";

    private static final int FAIR_GROUPS = 16;

    private static final int FIFO_GROUPS = 8;

    private final MessageQueues messages;

    private final RecordFile file;

    private final int[] sequences = new int[FIFO_GROUPS];

    @Value("${faults.messages.per-second:100}")
    private int perSecond;

    @Value("${faults.messages.seconds:20}")
    private int seconds;

    FaultMessageSender(PgQueue queue, @Value("${pgqueue.node-id}") String node,
            @Value("${faults.record-dir}") Path directory) {
        this.messages = queue.messages();
        this.file = new RecordFile(directory.resolve(node + "-" + ProcessHandle.current().pid() + ".sends"));
    }

    @Override
    public void run(ApplicationArguments args) throws InterruptedException {
        MessageQueueAttributes attributes = MessageQueueAttributes.defaults().withVisibilityTimeout(FaultMessageReceiver.VISIBILITY);
        this.messages.createQueue(STANDARD, attributes, Map.of());
        this.messages.createQueue(FIFO, attributes, Map.of());
        long period = TimeUnit.SECONDS.toNanos(1) / this.perSecond;
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(this.seconds);
        long next = System.nanoTime();
        int sent = 0;
        while (System.nanoTime() - end < 0 && !Thread.currentThread().isInterrupted()) {
            send(sent++);
            next += period;
            long wait = next - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
        }
        this.file.append("E " + sent);
    }

    private void send(int n) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        String queue;
        OutgoingMessage message;
        if (n % 2 == 0) {
            queue = STANDARD;
            message = OutgoingMessage.of("m" + n);
            if (random.nextInt(3) == 0) {
                message = message.withGroupId("tenant-" + random.nextInt(FAIR_GROUPS));
            }
        }
        else {
            queue = FIFO;
            int group = random.nextInt(FIFO_GROUPS);
            String body = "group-" + group + ":" + this.sequences[group];
            message = OutgoingMessage.fifo(body, "group-" + group, body);
        }
        try {
            SentMessage sent = this.messages.send(queue, message);
            if (queue.equals(FIFO)) {
                this.sequences[groupOf(message)]++;
            }
            this.file.append("S " + queue + " " + sent.messageId() + " " + message.body() + " " + micros());
        }
        catch (RuntimeException ex) {
            this.file.append("F " + queue + " " + message.body() + " " + ex.getClass().getSimpleName());
        }
    }

    private static int groupOf(OutgoingMessage message) {
        return Integer.parseInt(message.groupId().substring("group-".length()));
    }

    /** @return now, in microseconds since the epoch: orders events of several processes on this machine */
    static long micros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
    }
}
