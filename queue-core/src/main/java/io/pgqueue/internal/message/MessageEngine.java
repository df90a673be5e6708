package io.pgqueue.internal.message;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import javax.sql.DataSource;

import io.pgqueue.internal.enqueue.GroupCommitter;
import io.pgqueue.internal.store.MessageStore.NewMessage;
import io.pgqueue.internal.store.MessageStore.Receipt;
import io.pgqueue.internal.store.MessageStore.ReceiptOutcome;
import io.pgqueue.internal.store.MessageStore.Sent;
import io.pgqueue.internal.store.MessageStore.StoredMessage;
import io.pgqueue.internal.store.MessageMoveStore;
import io.pgqueue.internal.store.MessageStore;
import io.pgqueue.internal.worker.NotificationListener;
import io.pgqueue.message.BatchEntry;
import io.pgqueue.message.BatchEntryFailure;
import io.pgqueue.message.BatchResult;
import io.pgqueue.message.CountedQueues;
import io.pgqueue.message.MessageAttributeValue;
import io.pgqueue.message.MessageDigests;
import io.pgqueue.message.MessageMoveTask;
import io.pgqueue.message.MessageQueueAttributes;
import io.pgqueue.message.MessageQueueCounts;
import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueEvents;
import io.pgqueue.message.MessageQueueException;
import io.pgqueue.message.MessageQueueInfo;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.message.OutgoingMessage;
import io.pgqueue.message.PeekedMessage;
import io.pgqueue.message.ReceiveRequest;
import io.pgqueue.message.ReceivedMessage;
import io.pgqueue.message.RedrivePolicy;
import io.pgqueue.message.SentMessage;
import io.pgqueue.message.VisibilityChange;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The message engine behind {@link MessageQueues}: the message store, the group commits of sends
 * and deletes, long polls woken by the NOTIFY of a send on any node, and the housekeeping (counts,
 * retention sweep, vacuum). {@link #start()} starts listening for sends and the housekeeping;
 * {@link #stop()} stops them.
 * <p>
 * Its length is the {@link MessageQueues} surface it implements, thirty calls of a few lines each
 * that hand over to the {@link MessageQueueCatalog}, the {@link ReceiptActions}, the
 * {@link LongPolls} or the store; what is not a hand-over is the send batch and the receive.
 */
public final class MessageEngine implements MessageQueues, AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(MessageEngine.class);

    /** Threads that run woken long-poll receives. */
    private static final int RECEIVER_THREADS = 4;

    /** Sends and deletes in one grouped transaction at most. */
    private static final int GROUP_MAX = 500;

    private final MessageStore store;

    private final DataSource dataSource;

    private final MessageQueueCatalog catalog;

    private final ReceiptActions receipts;

    private final GroupCommitter<NewMessage, Sent> sends;

    private final GroupCommitter<Receipt, ReceiptOutcome> deletes;

    private final MessageQueueEvents events;

    private final MessageHousekeeping housekeeping;

    private final MessageMoveTasks moves;

    private LongPolls longPolls;

    private NotificationListener listener;


    private volatile boolean started;

    /** Set by {@link #stop()}: a call after it does not start listening again. */
    private boolean stopped;

    /**
     * Creates the message queues of a queue database; call {@link #start()} before receiving with a wait.
     * @param dataSource the queue's database (the main shard)
     * @param store the message store of that database
     * @param events where sends, receives and deletes are counted
     * @param countInterval how often every queue's messages are counted (for metrics, health, the endpoint)
     * @param vacuumInterval how often the message table is VACUUMed while in use; zero leaves it to autovacuum
     */
    public MessageEngine(DataSource dataSource, MessageStore store, MessageQueueEvents events, Duration countInterval,
            Duration vacuumInterval) {
        this.dataSource = dataSource;
        this.store = store;
        this.catalog = new MessageQueueCatalog(store);
        this.moves = new MessageMoveTasks(new MessageMoveStore(store), store, this.catalog);
        this.housekeeping = new MessageHousekeeping(this.store, this::counts, events, countInterval, vacuumInterval,
                this.moves::step);
        this.events = events;
        this.sends = new GroupCommitter<>("message-send", this.store::send, 1, GROUP_MAX);
        this.deletes = new GroupCommitter<>("message-delete", this.store::delete, 1, GROUP_MAX);
        this.receipts = new ReceiptActions(store, events, this.deletes, this::queue);
    }

    /**
     * Starts listening for sends (long polling) and the retention sweep; idempotent. The first
     * call on a queue starts them too.
     */
    public synchronized void start() {
        this.stopped = false;
        listen();
    }

    private synchronized void listen() {
        if (this.listener != null || this.stopped) {
            return;
        }
        this.started = true;
        this.longPolls = new LongPolls(RECEIVER_THREADS, this.store::nextVisible);
        LongPolls polls = this.longPolls;
        this.listener = new NotificationListener(this.dataSource, List.of(this.store.channel()),
                (channel, payload) -> polls.announce(Long.parseLong(payload)), polls::announceAll, "-messages");
        this.listener.start();
        this.housekeeping.start();
    }

    /**
     * Starts listening and counting if any message queue exists: a node of an installation that
     * uses message queues reports them from its start, before its first call.
     */
    public void startIfUsed() {
        boolean used;
        try {
            used = !this.store.listQueues("", "", 1).isEmpty();
        }
        catch (RuntimeException ex) {
            // E.g. a schema not migrated yet: the first call starts them, or reports the problem.
            log.debug("Could not tell whether message queues exist: {}", ex.toString());
            return;
        }
        if (used) {
            start();
        }
    }

    @Override
    public java.util.Optional<CountedQueues> latestCounts() {
        return this.housekeeping.latestCounts();
    }

    /**
     * Ends waiting receives with no messages, stops listening, the sweep and the group commits;
     * idempotent. Calls after it (a request the web server finishes while the application shuts
     * down) work without long polling and do not start listening again; {@link #start()} does.
     */
    public synchronized void stop() {
        this.started = false;
        this.stopped = true;
        if (this.listener != null) {
            this.listener.stop();
            this.longPolls.close();
            this.housekeeping.stop();
            this.listener = null;
            this.longPolls = null;
        }
        this.sends.close();
        this.deletes.close();
    }

    /** Same as {@link #stop()}. */
    @Override
    public void close() {
        stop();
    }

    private void ensureStarted() {
        if (!this.started) {
            listen();
        }
    }

    /** @return whether it listens for sends */
    public synchronized boolean isRunning() {
        return this.listener != null;
    }

    // Queues: see MessageQueueCatalog

    @Override
    public void check(String name, Map<String, String> tags) {
        MessageValidation.queueName(name);
        MessageValidation.tags(tags);
    }

    @Override
    public MessageQueueInfo createQueue(String name, MessageQueueAttributes attributes, Map<String, String> tags) {
        return this.catalog.createQueue(name, attributes, tags);
    }

    @Override
    public MessageQueueInfo getQueue(String name) {
        return this.catalog.getQueue(name);
    }

    @Override
    public List<MessageQueueInfo> listQueues(String prefix, String after, int limit) {
        return this.catalog.listQueues(prefix, after, limit);
    }

    @Override
    public List<MessageQueueInfo> deadLetterSourceQueues(String name) {
        return this.catalog.deadLetterSourceQueues(name);
    }

    @Override
    public MessageQueueInfo setAttributes(String name, MessageQueueAttributes attributes) {
        return this.catalog.setAttributes(name, attributes);
    }

    @Override
    public void tagQueue(String name, Map<String, String> tags) {
        this.catalog.tagQueue(name, tags);
    }

    @Override
    public void untagQueue(String name, Set<String> keys) {
        this.catalog.untagQueue(name, keys);
    }

    @Override
    public void deleteQueue(String name) {
        this.catalog.deleteQueue(name);
    }

    @Override
    public int purge(String name) {
        return this.catalog.purge(name);
    }

    @Override
    public Map<String, MessageQueueCounts> counts() {
        return this.catalog.counts();
    }

    @Override
    public MessageQueueCounts counts(String name) {
        return this.catalog.counts(name);
    }

    @Override
    public List<PeekedMessage> peek(String name, int limit) {
        if (limit < 1 || limit > 100) {
            throw new IllegalArgumentException("A peek reads 1 to 100 messages, not " + limit);
        }
        return this.store.peek(this.catalog.queue(name).id(), limit);
    }

    @Override
    public int redrive(String deadLetterQueue, String target, int max) {
        MessageQueueInfo from = this.catalog.queue(deadLetterQueue);
        MessageQueueInfo to = this.catalog.queue(target);
        if (from.fifo() != to.fifo()) {
            throw new MessageQueueException(MessageQueueError.INVALID_PARAMETER_VALUE, "Redrive moves messages between "
                    + "two standard queues or two FIFO queues; " + (from.fifo() ? deadLetterQueue : target)
                    + " is a FIFO queue and " + (from.fifo() ? target : deadLetterQueue) + " is not");
        }
        if (from.id() == to.id()) {
            throw new MessageQueueException(MessageQueueError.INVALID_PARAMETER_VALUE, "Redrive needs two queues, not "
                    + deadLetterQueue + " twice");
        }
        if (max < 1) {
            throw new MessageQueueException(MessageQueueError.INVALID_PARAMETER_VALUE, "Redrive moves at least 1 "
                    + "message, not " + max);
        }
        int moved = 0;
        while (moved < max) {
            int limit = Math.min(REDRIVE_BATCH, max - moved);
            int batch = from.fifo() ? this.store.redriveFifo(from.id(), to.id(), limit)
                    : this.store.redrive(from.id(), to.id(), limit);
            moved += batch;
            if (batch == 0) {
                break;
            }
        }
        return moved;
    }

    @Override
    public MessageMoveTask startMoveTask(String source, String destination, Integer maxPerSecond) {
        ensureStarted();
        return this.moves.start(source, destination, maxPerSecond);
    }

    @Override
    public List<MessageMoveTask> moveTasks(String source, int limit) {
        return this.moves.list(source, limit);
    }

    @Override
    public MessageMoveTask cancelMoveTask(String handle) {
        return this.moves.cancel(handle);
    }

    /** The messages one statement of a redrive moves at most. */
    private static final int REDRIVE_BATCH = 500;

    @Override
    public MessageQueueInfo queue(String name) {
        ensureStarted();
        return this.catalog.queue(name);
    }

    private MessageQueueException forget(String name) {
        return this.catalog.forget(name);
    }

    // Sending

    @Override
    public SentMessage send(String queueName, OutgoingMessage message) {
        MessageQueueInfo queue = queue(queueName);
        NewMessage row = row(queue, message);
        Sent sent;
        try {
            sent = TransactionSynchronizationManager.isActualTransactionActive() ? this.store.send(List.of(row)).get(0)
                    : this.sends.write(row);
        }
        catch (MessageQueueException ex) {
            throw ex.error() == MessageQueueError.QUEUE_DOES_NOT_EXIST ? forget(queue.name()) : ex;
        }
        this.events.sent(queue.name(), 1);
        return sentMessage(queue, message, sent);
    }

    @Override
    public BatchResult<SentMessage> sendBatch(String queueName, List<BatchEntry<OutgoingMessage>> entries) {
        MessageQueueInfo queue = queue(queueName);
        BatchEntry.checkIds(entries.stream().map(BatchEntry::id).toList());
        List<BatchEntryFailure> failed = new ArrayList<>();
        List<BatchEntry<OutgoingMessage>> valid = new ArrayList<>();
        List<NewMessage> rows = new ArrayList<>();
        long size = 0;
        for (BatchEntry<OutgoingMessage> entry : entries) {
            try {
                size += MessageValidation.message(entry.value(), queue);
                rows.add(row(queue, entry.value()));
                valid.add(entry);
            }
            catch (MessageQueueException ex) {
                failed.add(new BatchEntryFailure(entry.id(), ex.error(), ex.getMessage()));
            }
        }
        if (size > queue.attributes().maxMessageSize()) {
            throw new MessageQueueException(MessageQueueError.BATCH_REQUEST_TOO_LONG, "Batch requests cannot be longer "
                    + "than " + queue.attributes().maxMessageSize() + " bytes. You have sent " + size + " bytes.");
        }
        Map<String, SentMessage> successful = new LinkedHashMap<>();
        if (!rows.isEmpty()) {
            List<Sent> sent;
            try {
                sent = this.store.send(rows);
            }
            catch (MessageQueueException ex) {
                throw ex.error() == MessageQueueError.QUEUE_DOES_NOT_EXIST ? forget(queue.name()) : ex;
            }
            for (int i = 0; i < valid.size(); i++) {
                successful.put(valid.get(i).id(), sentMessage(queue, valid.get(i).value(), sent.get(i)));
            }
            this.events.sent(queue.name(), rows.size());
        }
        return new BatchResult<>(successful, failed);
    }

    private NewMessage row(MessageQueueInfo queue, OutgoingMessage message) {
        MessageValidation.message(message, queue);
        Duration delay = message.delay() != null ? message.delay() : queue.attributes().delay();
        String dedup = null;
        String group = queue.fifo() ? message.groupId() : null;
        if (queue.fifo()) {
            dedup = message.deduplicationId() != null ? message.deduplicationId()
                    : MessageDigests.sha256OfBody(message.body());
        }
        return new NewMessage(queue.id(), UUID.randomUUID().toString(), message.body(),
                MessageAttributesJson.write(message.attributes()), (int) delay.toSeconds(), group, dedup,
                queue.fifo() ? null : message.groupId());
    }

    private static SentMessage sentMessage(MessageQueueInfo queue, OutgoingMessage message, Sent sent) {
        return new SentMessage(sent.messageId(), MessageDigests.md5OfBody(message.body()),
                MessageDigests.md5OfAttributes(message.attributes()),
                !queue.fifo() || sent.sequence() == null ? null : sequenceNumber(sent.sequence()));
    }

    private static String sequenceNumber(long id) {
        return String.format("%020d", id);
    }

    // Receiving

    @Override
    public List<ReceivedMessage> receive(String queueName, ReceiveRequest request) {
        try {
            return receiveAsync(queueName, request).join();
        }
        catch (CompletionException ex) {
            if (ex.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw ex;
        }
    }

    @Override
    public CompletableFuture<List<ReceivedMessage>> receiveAsync(String queueName, ReceiveRequest request) {
        MessageQueueInfo queue = queue(queueName);
        MessageValidation.maxMessages(request.maxMessages());
        int visibility = MessageValidation.seconds(request.visibilityTimeout() != null ? request.visibilityTimeout()
                : queue.attributes().visibilityTimeout(), "VisibilityTimeout", MessageQueueAttributes.MAX_VISIBILITY_TIMEOUT);
        Duration wait = request.waitTime() != null ? request.waitTime() : queue.attributes().receiveWaitTime();
        MessageValidation.seconds(wait, "WaitTimeSeconds", MessageQueueAttributes.MAX_RECEIVE_WAIT);
        LongPolls polls;
        synchronized (this) {
            polls = this.longPolls;
        }
        long seen = polls == null ? 0 : polls.announcements(queue.id());
        List<ReceivedMessage> now = receiveNow(queue.name(), request.maxMessages(), visibility);
        if (!now.isEmpty() || wait.isZero() || polls == null) {
            return CompletableFuture.completedFuture(now);
        }
        return polls.await(queue.id(), () -> receiveNow(queue.name(), request.maxMessages(), visibility), wait, seen);
    }

    private List<ReceivedMessage> receiveNow(String queueName, int max, int visibility) {
        MessageQueueInfo queue = queue(queueName);
        Long deadLetter = null;
        int maxReceives = 0;
        RedrivePolicy redrive = queue.attributes().redrivePolicy();
        if (redrive != null) {
            MessageQueueInfo target = this.store.findQueue(redrive.deadLetterQueue()).orElse(null);
            if (target == null) {
                log.warn("Queue {} redrives to {}, which does not exist: its messages stay where they are",
                        queue.name(), redrive.deadLetterQueue());
            }
            else {
                deadLetter = target.id();
                maxReceives = redrive.maxReceiveCount();
            }
        }
        List<StoredMessage> rows = queue.fifo()
                ? this.store.receiveFifo(queue.id(), max, visibility, deadLetter, maxReceives)
                : this.store.receive(queue.id(), max, visibility, deadLetter, maxReceives);
        List<ReceivedMessage> received = new ArrayList<>(rows.size());
        Instant now = Instant.now();
        for (StoredMessage row : rows) {
            Map<String, MessageAttributeValue> attributes = MessageAttributesJson.read(row.attributes());
            received.add(new ReceivedMessage(row.messageId(),
                    ReceiptHandles.encode(new Receipt(queue.id(), row.id(), row.receipt(), row.groupId())), row.body(),
                    MessageDigests.md5OfBody(row.body()), attributes, MessageDigests.md5OfAttributes(attributes),
                    row.sentAt(), row.receiveCount(), row.firstReceivedAt(),
                    row.groupId() != null ? row.groupId() : row.fairGroup(), row.dedupId(),
                    queue.fifo() ? sequenceNumber(row.id()) : null));
            if (row.receiveCount() == 1) {
                this.events.firstReceived(queue.name(), Duration.between(row.sentAt(), now));
            }
        }
        this.events.received(queue.name(), received.size());
        return received;
    }

    // Deleting and changing visibility: see ReceiptActions

    @Override
    public void delete(String queueName, String receiptHandle) {
        this.receipts.delete(queueName, receiptHandle);
    }

    @Override
    public BatchResult<Boolean> deleteBatch(String queueName, List<BatchEntry<String>> entries) {
        return this.receipts.deleteBatch(queueName, entries);
    }

    @Override
    public void changeVisibility(String queueName, String receiptHandle, Duration timeout) {
        this.receipts.changeVisibility(queueName, receiptHandle, timeout);
    }

    @Override
    public BatchResult<Boolean> changeVisibilityBatch(String queueName, List<BatchEntry<VisibilityChange>> entries) {
        return this.receipts.changeVisibilityBatch(queueName, entries);
    }

    /** Runs the retention sweep now (it also runs every minute once started). */
    public void deleteExpired() {
        this.housekeeping.sweep();
    }
}
