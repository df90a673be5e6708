package io.pgqueue.message;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import io.pgqueue.internal.enqueue.GroupCommitter;
import io.pgqueue.internal.message.LongPolls;
import io.pgqueue.internal.message.MessageAttributesJson;
import io.pgqueue.internal.message.MessageHousekeeping;
import io.pgqueue.internal.message.MessageValidation;
import io.pgqueue.internal.message.ReceiptHandles;
import io.pgqueue.internal.store.MessageStore.NewMessage;
import io.pgqueue.internal.store.MessageStore.QueueCounts;
import io.pgqueue.internal.store.MessageStore.Receipt;
import io.pgqueue.internal.store.MessageStore.ReceiptOutcome;
import io.pgqueue.internal.store.MessageStore.Sent;
import io.pgqueue.internal.store.MessageStore.StoredMessage;
import io.pgqueue.internal.store.MessageStore;
import io.pgqueue.internal.worker.NotificationListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Message queues with the model of Amazon SQS, on the queue's database: consumers pull messages,
 * a received message stays invisible for a visibility timeout and is deleted with the receipt
 * handle of that receive, or becomes visible again. Standard queues deliver in roughly the order
 * sent to competing consumers; FIFO queues (names ending in {@code .fifo}) deliver each message
 * group in order, one receive of a group at a time, and send a deduplication id only once in five
 * minutes. A redrive policy moves messages received too often to a dead-letter queue.
 * <p>
 * Every send is committed before the call returns. Outside a transaction, concurrent sends (and
 * deletes) are written together in one transaction (group commit); inside a Spring transaction on
 * the queue's DataSource they join it, and receivers are woken when it commits. A receive that
 * finds no message waits up to its wait time without holding a thread ({@link #receiveAsync}),
 * woken by the NOTIFY of a send on any node.
 * <p>
 * {@link #start()} starts listening for sends and the retention sweep; {@link #stop()} stops them.
 */
public final class MessageQueues implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(MessageQueues.class);

    /** How long a node trusts the settings of a queue it read, for changes made on other nodes. */
    static final Duration QUEUE_CACHE_TIME = Duration.ofSeconds(1);

    /** Threads that run woken long-poll receives. */
    private static final int RECEIVER_THREADS = 4;

    /** Sends and deletes in one grouped transaction at most. */
    private static final int GROUP_MAX = 500;

    private final MessageStore store;

    private final DataSource dataSource;

    private final Map<String, Cached> queues = new ConcurrentHashMap<>();

    private final GroupCommitter<NewMessage, Sent> sends;

    private final GroupCommitter<Receipt, ReceiptOutcome> deletes;

    private final MessageQueueEvents events;

    private final MessageHousekeeping housekeeping;

    private LongPolls longPolls;

    private NotificationListener listener;


    private volatile boolean started;

    private record Cached(MessageQueueInfo queue, long readAt) {
    }

    /**
     * Creates the message queues of a queue database; call {@link #start()} before receiving with a wait.
     * @param dataSource the queue's database (the main shard)
     * @param config the queue's settings (schema, statement timeout)
     * @param events where sends, receives and deletes are counted
     * @param countInterval how often every queue's messages are counted (for metrics, health, the endpoint)
     * @param vacuumInterval how often the message table is VACUUMed while in use; zero leaves it to autovacuum
     */
    public MessageQueues(DataSource dataSource, QueueConfig config, MessageQueueEvents events, Duration countInterval,
            Duration vacuumInterval) {
        this.dataSource = dataSource;
        this.store = new MessageStore(dataSource, config);
        this.housekeeping = new MessageHousekeeping(this.store, this::counts, events, countInterval, vacuumInterval);
        this.events = events;
        this.sends = new GroupCommitter<>("message-send", this.store::send, 1, GROUP_MAX);
        this.deletes = new GroupCommitter<>("message-delete", this.store::delete, 1, GROUP_MAX);
    }

    /**
     * Starts listening for sends (long polling) and the retention sweep; idempotent. The first
     * call on a queue starts them too.
     */
    public synchronized void start() {
        if (this.listener != null) {
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

    /** @return the latest periodic count of every queue's messages, empty before the first */
    public java.util.Optional<CountedQueues> latestCounts() {
        return this.housekeeping.latestCounts();
    }

    /** Ends waiting receives with no messages, stops listening, the sweep and the group commits; idempotent. */
    public synchronized void stop() {
        this.started = false;
        if (this.listener != null) {
            this.listener.stop();
            this.longPolls.close();
            this.housekeeping.stop();
            this.listener = null;
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
            start();
        }
    }

    /** @return whether it listens for sends */
    public synchronized boolean isRunning() {
        return this.listener != null;
    }

    // Queues

    /**
     * Creates a queue, or returns the one of that name if its settings are the same.
     * @param name the name: 1 to 80 letters, digits, '-' and '_'; a FIFO queue's ends in {@code .fifo}
     * @param attributes its settings
     * @param tags its tags
     * @return the queue
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_NAME_EXISTS} when a queue of that name
     * has other settings, or when a setting is not valid
     */
    public MessageQueueInfo createQueue(String name, MessageQueueAttributes attributes, Map<String, String> tags) {
        MessageValidation.queueName(name);
        boolean fifo = name.endsWith(".fifo");
        checkAttributes(name, fifo, attributes);
        MessageQueueInfo queue = this.store.createQueue(name, fifo, attributes, tags == null ? Map.of() : tags)
            .orElseGet(() -> {
                MessageQueueInfo existing = this.store.findQueue(name).orElseThrow(() -> new MessageQueueException(
                        MessageQueueError.INTERNAL_ERROR, "Queue " + name + " was deleted while it was created; retry"));
                if (!existing.attributes().equals(attributes)) {
                    throw new MessageQueueException(MessageQueueError.QUEUE_NAME_EXISTS, "A queue already exists with "
                            + "the same name and a different value for attribute(s): " + differences(existing.attributes(),
                                    attributes));
                }
                return existing;
            });
        remember(queue);
        return queue;
    }

    private void checkAttributes(String name, boolean fifo, MessageQueueAttributes attributes) {
        if (!fifo && attributes.contentBasedDeduplication()) {
            throw new MessageQueueException(MessageQueueError.INVALID_ATTRIBUTE_NAME,
                    "Unknown Attribute ContentBasedDeduplication: only FIFO queues deduplicate.");
        }
        RedrivePolicy redrive = attributes.redrivePolicy();
        if (redrive != null) {
            MessageQueueInfo target = this.store.findQueue(redrive.deadLetterQueue())
                .orElseThrow(() -> MessageQueueException.invalidParameter("Value for parameter RedrivePolicy is invalid. "
                        + "Reason: Dead letter target does not exist: " + redrive.deadLetterQueue()));
            if (target.fifo() != fifo) {
                throw MessageQueueException.invalidParameter("Value for parameter RedrivePolicy is invalid. Reason: "
                        + "Dead-letter queue " + target.name() + " must be of the same type (standard or FIFO) as the "
                        + "queue.");
            }
            if (target.name().equals(name)) {
                throw MessageQueueException.invalidParameter("Value for parameter RedrivePolicy is invalid. Reason: "
                        + "a queue cannot be its own dead-letter queue.");
            }
        }
    }

    private static String differences(MessageQueueAttributes existing, MessageQueueAttributes asked) {
        List<String> names = new ArrayList<>();
        if (!existing.visibilityTimeout().equals(asked.visibilityTimeout())) {
            names.add("VisibilityTimeout");
        }
        if (!existing.retention().equals(asked.retention())) {
            names.add("MessageRetentionPeriod");
        }
        if (!existing.delay().equals(asked.delay())) {
            names.add("DelaySeconds");
        }
        if (existing.maxMessageSize() != asked.maxMessageSize()) {
            names.add("MaximumMessageSize");
        }
        if (!existing.receiveWaitTime().equals(asked.receiveWaitTime())) {
            names.add("ReceiveMessageWaitTimeSeconds");
        }
        if (existing.contentBasedDeduplication() != asked.contentBasedDeduplication()) {
            names.add("ContentBasedDeduplication");
        }
        if (!java.util.Objects.equals(existing.redrivePolicy(), asked.redrivePolicy())) {
            names.add("RedrivePolicy");
        }
        return String.join(", ", names);
    }

    /**
     * @param name a queue's name
     * @return the queue, as stored now
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST}
     */
    public MessageQueueInfo getQueue(String name) {
        MessageQueueInfo queue = this.store.findQueue(name).orElseThrow(() -> MessageQueueException.noSuchQueue(name));
        remember(queue);
        return queue;
    }

    /**
     * Lists queues by name.
     * @param prefix what their names start with ({@code ""} for all)
     * @param after only names after this one ({@code ""} from the start), for paging
     * @param limit the most to list, 1 to 1,000
     * @return the queues
     * @throws MessageQueueException {@link MessageQueueError#INVALID_PARAMETER_VALUE} for a limit outside 1 to 1,000
     */
    public List<MessageQueueInfo> listQueues(String prefix, String after, int limit) {
        if (limit < 1 || limit > 1000) {
            throw MessageQueueException.invalidParameter("Value " + limit + " for parameter MaxResults is invalid. "
                    + "Reason: MaxResults must be between 1 and 1000.");
        }
        return this.store.listQueues(prefix == null ? "" : prefix, after == null ? "" : after, limit);
    }

    /**
     * @param name a dead-letter queue's name
     * @return the queues whose redrive policy names it
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     */
    public List<MessageQueueInfo> deadLetterSourceQueues(String name) {
        return this.store.deadLetterSources(queue(name).name());
    }

    /**
     * Changes a queue's settings; receives and sends on every node follow within a second.
     * @param name the queue's name
     * @param attributes its new settings
     * @return the queue
     * @throws MessageQueueException when the attributes are not valid; nothing is written
     */
    public MessageQueueInfo setAttributes(String name, MessageQueueAttributes attributes) {
        MessageQueueInfo queue = queue(name);
        checkAttributes(name, queue.fifo(), attributes);
        if (!this.store.updateQueue(queue.id(), attributes)) {
            throw forget(name);
        }
        this.queues.remove(name);
        return getQueue(name);
    }

    /**
     * Adds or replaces tags of a queue.
     * @param name the queue's name
     * @param tags the tags to set
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     * @throws MessageQueueException {@link MessageQueueError#INVALID_PARAMETER_VALUE} past 50 tags
     */
    public void tagQueue(String name, Map<String, String> tags) {
        MessageQueueInfo queue = getQueue(name);
        Map<String, String> merged = new TreeMap<>(queue.tags());
        merged.putAll(tags);
        if (merged.size() > 50) {
            throw MessageQueueException.invalidParameter("Too many tags: a queue has at most 50.");
        }
        this.store.updateTags(queue.id(), merged);
        this.queues.remove(name);
    }

    /**
     * Removes tags of a queue.
     * @param name the queue's name
     * @param keys the tags to remove
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     */
    public void untagQueue(String name, Set<String> keys) {
        MessageQueueInfo queue = getQueue(name);
        Map<String, String> left = new TreeMap<>(queue.tags());
        keys.forEach(left::remove);
        this.store.updateTags(queue.id(), left);
        this.queues.remove(name);
    }

    /**
     * Deletes a queue and its messages; receives waiting on it end with none.
     * @param name the queue's name
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     */
    public void deleteQueue(String name) {
        MessageQueueInfo queue = queue(name);
        this.queues.remove(name);
        if (!this.store.deleteQueue(queue.id())) {
            throw MessageQueueException.noSuchQueue(name);
        }
    }

    /**
     * Deletes every message of a queue.
     * @param name the queue's name
     * @return the messages deleted
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     */
    public int purge(String name) {
        return this.store.purge(queue(name).id());
    }

    /** @return the messages of every queue, counted by the database now, by queue name */
    public Map<String, MessageQueueCounts> counts() {
        Map<Long, QueueCounts> byId = new java.util.HashMap<>();
        this.store.counts().forEach(count -> byId.put(count.queueId(), count));
        Map<String, MessageQueueCounts> counts = new LinkedHashMap<>();
        for (MessageQueueInfo queue : this.store.listQueues("", "", Integer.MAX_VALUE)) {
            counts.put(queue.name(), counts(queue.name(), byId.remove(queue.id())));
        }
        if (!byId.isEmpty()) {
            // Messages of queues deleted while a send to them was in flight.
            this.store.deleteContentsOfGoneQueues(byId.keySet());
        }
        return counts;
    }

    /**
     * @param name a queue's name
     * @return its messages, counted by the database now
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     */
    public MessageQueueCounts counts(String name) {
        return counts(name, this.store.counts(queue(name).id()));
    }

    private static MessageQueueCounts counts(String name, QueueCounts count) {
        if (count == null) {
            return new MessageQueueCounts(name, 0, 0, 0, Duration.ZERO);
        }
        return new MessageQueueCounts(name, count.visible(), count.inFlight(), count.delayed(),
                count.oldest() == null ? Duration.ZERO : Duration.between(count.oldest(), Instant.now()).abs());
    }

    /**
     * Returns a queue as this node last read it, at most a second ago (settings changed on another
     * node are followed within that second); {@link #getQueue} reads it now.
     * @param name the queue's name
     * @return the queue
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST}
     */
    public MessageQueueInfo queue(String name) {
        ensureStarted();
        Cached cached = this.queues.get(name);
        if (cached != null && System.nanoTime() - cached.readAt() < QUEUE_CACHE_TIME.toNanos()) {
            return cached.queue();
        }
        return getQueue(name);
    }

    private void remember(MessageQueueInfo queue) {
        this.queues.put(queue.name(), new Cached(queue, System.nanoTime()));
    }

    private MessageQueueException forget(String name) {
        this.queues.remove(name);
        return MessageQueueException.noSuchQueue(name);
    }

    // Sending

    /**
     * Sends a message; it is committed when the call returns (or, inside a transaction, with it).
     * @param queueName the queue's name
     * @param message the message
     * @return the message id and digests
     * @throws MessageQueueException when the message is not valid for the queue; nothing is written
     */
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

    /**
     * Sends up to ten messages in one transaction. An entry that is not valid fails alone; the
     * others are sent.
     * @param queueName the queue's name
     * @param entries the messages, each with an id unique in the batch
     * @return per entry, the message sent or why not
     * @throws MessageQueueException when the batch itself is not valid (empty, too many entries,
     * ids repeated or malformed, too large together); nothing is written
     */
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
                MessageAttributesJson.write(message.attributes()), (int) delay.toSeconds(), group, dedup);
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

    /**
     * Receives messages, waiting up to the wait time when none is visible; blocks the calling thread.
     * @param queueName the queue's name
     * @param request how many, how long they stay hidden, how long to wait
     * @return the messages, possibly none
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     * @throws MessageQueueException when the request is not valid
     */
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

    /**
     * Receives messages. When none is visible and the wait time is above zero, the future completes
     * when messages come (a send on any node wakes it, as does the end of a visibility timeout or
     * delay) or with none at the end of the wait, without holding a thread meanwhile.
     * @param queueName the queue's name
     * @param request how many, how long they stay hidden, how long to wait
     * @return the messages, possibly none
     * @throws MessageQueueException when the request is not valid
     */
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
                    row.sentAt(), row.receiveCount(), row.firstReceivedAt(), row.groupId(), row.dedupId(),
                    queue.fifo() ? sequenceNumber(row.id()) : null));
            if (row.receiveCount() == 1) {
                this.events.firstReceived(queue.name(), Duration.between(row.sentAt(), now));
            }
        }
        this.events.received(queue.name(), received.size());
        return received;
    }

    // Deleting and changing visibility

    /**
     * Deletes a received message. A message already deleted is no error; a handle of a receive that
     * was followed by another (the visibility timeout ran out and another consumer received the
     * message) is refused.
     * @param queueName the queue's name
     * @param receiptHandle the handle of the latest receive
     * @throws MessageQueueException {@link MessageQueueError#RECEIPT_HANDLE_INVALID} for a malformed or stale handle
     */
    public void delete(String queueName, String receiptHandle) {
        MessageQueueInfo queue = queue(queueName);
        Receipt receipt = ReceiptHandles.decode(receiptHandle, queue);
        ReceiptOutcome outcome = TransactionSynchronizationManager.isActualTransactionActive()
                ? this.store.delete(List.of(receipt)).get(0) : this.deletes.write(receipt);
        check(outcome, receiptHandle, false);
        if (outcome == ReceiptOutcome.DONE) {
            this.events.deleted(queue.name(), 1);
        }
    }

    /**
     * Deletes up to ten received messages in one transaction.
     * @param queueName the queue's name
     * @param entries the receipt handles, each with an id unique in the batch
     * @return per entry, done or why not
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     * @throws MessageQueueException when the batch itself is not valid (empty, too many entries, repeated ids)
     */
    public BatchResult<Boolean> deleteBatch(String queueName, List<BatchEntry<String>> entries) {
        MessageQueueInfo queue = queue(queueName);
        BatchEntry.checkIds(entries.stream().map(BatchEntry::id).toList());
        return byReceipt(queue, entries, (receipts, indexes) -> this.store.delete(receipts), false);
    }

    /**
     * Changes how long a received message stays hidden, counted from now; zero makes it visible at once.
     * @param queueName the queue's name
     * @param receiptHandle the handle of the latest receive
     * @param timeout the new visibility timeout, 0 to 12 hours
     * @throws MessageQueueException {@link MessageQueueError#RECEIPT_HANDLE_INVALID} for a malformed or stale
     * handle, {@link MessageQueueError#MESSAGE_NOT_IN_FLIGHT} when the message is visible
     */
    public void changeVisibility(String queueName, String receiptHandle, Duration timeout) {
        BatchResult<Boolean> result = changeVisibilityBatch(queueName,
                List.of(new BatchEntry<>("entry", new VisibilityChange(receiptHandle, timeout))));
        if (!result.failed().isEmpty()) {
            BatchEntryFailure failure = result.failed().get(0);
            throw new MessageQueueException(failure.error(), failure.message());
        }
    }

    /**
     * Changes the visibility timeout of up to ten received messages in one transaction.
     * @param queueName the queue's name
     * @param entries the changes, each with an id unique in the batch
     * @return per entry, done or why not
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     * @throws MessageQueueException when the batch itself is not valid (empty, too many entries, repeated ids)
     */
    public BatchResult<Boolean> changeVisibilityBatch(String queueName, List<BatchEntry<VisibilityChange>> entries) {
        MessageQueueInfo queue = queue(queueName);
        BatchEntry.checkIds(entries.stream().map(BatchEntry::id).toList());
        List<BatchEntry<String>> handles = new ArrayList<>();
        List<Integer> seconds = new ArrayList<>();
        List<BatchEntryFailure> failed = new ArrayList<>();
        for (BatchEntry<VisibilityChange> entry : entries) {
            try {
                if (entry.value().timeout() == null) {
                    throw new MessageQueueException(MessageQueueError.MISSING_PARAMETER,
                            "The request must contain the parameter VisibilityTimeout.");
                }
                seconds.add(MessageValidation.seconds(entry.value().timeout(), "VisibilityTimeout",
                        MessageQueueAttributes.MAX_VISIBILITY_TIMEOUT));
                handles.add(new BatchEntry<>(entry.id(), entry.value().receiptHandle()));
            }
            catch (MessageQueueException ex) {
                failed.add(new BatchEntryFailure(entry.id(), ex.error(), ex.getMessage()));
            }
        }
        BatchResult<Boolean> result = byReceipt(queue, handles,
                (receipts, indexes) -> this.store.changeVisibility(receipts, indexes.stream().map(seconds::get).toList()),
                true);
        failed.addAll(result.failed());
        if (seconds.contains(0)) {
            this.store.announce(queue.id());
        }
        return new BatchResult<>(result.successful(), failed);
    }

    private BatchResult<Boolean> byReceipt(MessageQueueInfo queue, List<BatchEntry<String>> entries,
            BiFunction<List<Receipt>, List<Integer>, List<ReceiptOutcome>> apply, boolean visibility) {
        List<BatchEntryFailure> failed = new ArrayList<>();
        List<Integer> indexes = new ArrayList<>();
        List<Receipt> receipts = new ArrayList<>();
        for (int i = 0; i < entries.size(); i++) {
            BatchEntry<String> entry = entries.get(i);
            try {
                receipts.add(ReceiptHandles.decode(entry.value(), queue));
                indexes.add(i);
            }
            catch (MessageQueueException ex) {
                failed.add(new BatchEntryFailure(entry.id(), ex.error(), ex.getMessage()));
            }
        }
        Map<String, Boolean> successful = new LinkedHashMap<>();
        if (!receipts.isEmpty()) {
            List<ReceiptOutcome> outcomes = apply.apply(receipts, indexes);
            int deleted = 0;
            for (int i = 0; i < receipts.size(); i++) {
                BatchEntry<String> entry = entries.get(indexes.get(i));
                try {
                    check(outcomes.get(i), entry.value(), visibility);
                    successful.put(entry.id(), true);
                    deleted += outcomes.get(i) == ReceiptOutcome.DONE ? 1 : 0;
                }
                catch (MessageQueueException ex) {
                    failed.add(new BatchEntryFailure(entry.id(), ex.error(), ex.getMessage()));
                }
            }
            if (!visibility) {
                this.events.deleted(queue.name(), deleted);
            }
        }
        return new BatchResult<>(successful, failed);
    }

    private static void check(ReceiptOutcome outcome, String handle, boolean visibility) {
        switch (outcome) {
            case DONE -> {
            }
            case GONE -> {
                if (visibility) {
                    throw new MessageQueueException(MessageQueueError.RECEIPT_HANDLE_INVALID, "Value " + handle
                            + " for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not "
                            + "available for visibility timeout change.");
                }
            }
            case STALE -> throw new MessageQueueException(MessageQueueError.RECEIPT_HANDLE_INVALID, "The receipt "
                    + "handle has expired: the message was received again after its visibility timeout ran out.");
            case NOT_IN_FLIGHT -> throw new MessageQueueException(MessageQueueError.MESSAGE_NOT_IN_FLIGHT,
                    "Message is not in flight: its visibility timeout ran out.");
        }
    }

    /** Runs the retention sweep now (it also runs every minute once started). */
    public void deleteExpired() {
        this.housekeeping.sweep();
    }
}
