package io.pgqueue.internal.message;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import javax.sql.DataSource;

import io.pgqueue.internal.balance.PartitionLoad;
import io.pgqueue.internal.shard.Shards;
import io.pgqueue.internal.store.MessageStore.NewMessage;
import io.pgqueue.internal.store.MessageStore.Receipt;
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

    private final MessageShards shards;

    /** The main shard's store: the catalog. */
    private final MessageStore store;

    private final MessageQueueCatalog catalog;

    private final ReceiptActions receipts;

    private final MessageQueueEvents events;

    private final MessageHousekeeping housekeeping;

    private final MessageMoveTasks moves;

    /** The partitions' weights for the balancer (sharded only), which count messages sent as jobs. */
    private final PartitionLoad load;

    private LongPolls longPolls;

    /** One per shard: a send on any shard wakes the receives waiting here. */
    private List<NotificationListener> listeners;


    private volatile boolean started;

    /** Set by {@link #stop()}: a call after it does not start listening again. */
    private boolean stopped;

    /**
     * Creates the message queues of an unsharded queue database; call {@link #start()} before
     * receiving with a wait.
     * @param dataSource the queue's database
     * @param store the message store of that database
     * @param events where sends, receives and deletes are counted
     * @param countInterval how often every queue's messages are counted (for metrics, health, the endpoint)
     * @param vacuumInterval how often the message table is VACUUMed while in use; zero leaves it to autovacuum
     */
    public MessageEngine(DataSource dataSource, MessageStore store, MessageQueueEvents events, Duration countInterval,
            Duration vacuumInterval) {
        this(MessageShards.single(dataSource, store), null, events, countInterval, vacuumInterval);
    }

    /**
     * Creates the message queues of an installation: sharded, the catalog on the main shard and the
     * messages on the shards of their partitions; call {@link #start()} before receiving with a wait.
     * @param shards the installation's shards
     * @param load the partitions' weights for the balancer, which messages sent add to; {@code null} unsharded
     * @param events where sends, receives and deletes are counted
     * @param countInterval how often every queue's messages are counted (for metrics, health, the endpoint)
     * @param vacuumInterval how often the message tables are VACUUMed while in use; zero leaves it to autovacuum
     */
    public MessageEngine(Shards shards, PartitionLoad load, MessageQueueEvents events, Duration countInterval,
            Duration vacuumInterval) {
        this(MessageShards.of(shards), load, events, countInterval, vacuumInterval);
    }

    private MessageEngine(MessageShards shards, PartitionLoad load, MessageQueueEvents events, Duration countInterval,
            Duration vacuumInterval) {
        this.shards = shards;
        this.load = load;
        this.store = shards.main().store();
        this.catalog = new MessageQueueCatalog(shards);
        this.moves = new MessageMoveTasks(new MessageMoveStore(this.store), shards, this.catalog);
        this.housekeeping = new MessageHousekeeping(shards, this::counts, events, countInterval, vacuumInterval,
                this.moves::step);
        this.events = events;
        this.receipts = new ReceiptActions(shards, events, this::queue);
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
        if (this.listeners != null || this.stopped) {
            return;
        }
        this.started = true;
        this.longPolls = new LongPolls(RECEIVER_THREADS, this::nextVisible);
        LongPolls polls = this.longPolls;
        this.listeners = new ArrayList<>();
        for (MessageShards.Shard shard : this.shards.all()) {
            NotificationListener listener = new NotificationListener(shard.dataSource(), List.of(shard.store().channel()),
                    (channel, payload) -> polls.announce(Long.parseLong(payload)), polls::announceAll,
                    "-messages" + (shard == this.shards.main() ? "" : "-" + shard.name()));
            listener.start();
            this.listeners.add(listener);
        }
        this.housekeeping.start();
    }

    /** @return when the queue's next message becomes visible on any shard, empty when none holds one */
    private Optional<Instant> nextVisible(long queueId) {
        Optional<Instant> next = Optional.empty();
        for (MessageShards.Shard shard : this.shards.all()) {
            Optional<Instant> here = shard.store().nextVisible(queueId);
            if (here.isPresent() && (next.isEmpty() || here.get().isBefore(next.get()))) {
                next = here;
            }
        }
        return next;
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
    public Optional<CountedQueues> latestCounts() {
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
        if (this.listeners != null) {
            this.listeners.forEach(NotificationListener::stop);
            this.longPolls.close();
            this.housekeeping.stop();
            this.listeners = null;
            this.longPolls = null;
        }
        this.shards.close();
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
        return this.listeners != null;
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
        long queue = this.catalog.queue(name).id();
        List<PeekedMessage> peeked = new ArrayList<>();
        this.shards.all().forEach(shard -> peeked.addAll(shard.store().peek(queue, limit)));
        peeked.sort(Comparator.comparing(PeekedMessage::sentAt));
        return peeked.size() <= limit ? peeked : List.copyOf(peeked.subList(0, limit));
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
        List<Long> existing = List.of(to.id());
        int moved = 0;
        for (MessageShards.Shard shard : this.shards.all()) {
            while (moved < max) {
                int limit = Math.min(REDRIVE_BATCH, max - moved);
                int batch = from.fifo() ? shard.store().redriveFifo(from.id(), to.id(), limit)
                        : shard.store().redrive(from.id(), to.id(), existing, limit);
                moved += batch;
                if (batch == 0) {
                    break;
                }
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
        boolean transaction = TransactionSynchronizationManager.isActualTransactionActive();
        NewMessage row = row(queue, message, transaction, this.shards.partitionOf(null));
        Sent sent;
        try {
            sent = this.shards.route(List.of(row), NewMessage::partition, (shard, rows) -> transaction
                    ? shard.store().send(rows) : List.of(this.shards.sends(shard).write(rows.get(0)))).get(0);
        }
        catch (MessageQueueException ex) {
            throw ex.error() == MessageQueueError.QUEUE_DOES_NOT_EXIST ? forget(queue.name()) : ex;
        }
        this.events.sent(queue.name(), 1);
        weigh(List.of(row));
        return sentMessage(queue, message, sent);
    }

    @Override
    public BatchResult<SentMessage> sendBatch(String queueName, List<BatchEntry<OutgoingMessage>> entries) {
        MessageQueueInfo queue = queue(queueName);
        BatchEntry.checkIds(entries.stream().map(BatchEntry::id).toList());
        boolean transaction = TransactionSynchronizationManager.isActualTransactionActive();
        // A batch's messages without a group share a partition: one transaction on one shard, as unsharded.
        Integer partition = this.shards.partitionOf(null);
        List<BatchEntryFailure> failed = new ArrayList<>();
        List<BatchEntry<OutgoingMessage>> valid = new ArrayList<>();
        List<NewMessage> rows = new ArrayList<>();
        long size = 0;
        for (BatchEntry<OutgoingMessage> entry : entries) {
            try {
                size += MessageValidation.message(entry.value(), queue);
                rows.add(row(queue, entry.value(), transaction, partition));
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
                sent = this.shards.route(rows, NewMessage::partition, (shard, part) -> shard.store().send(part));
            }
            catch (MessageQueueException ex) {
                throw ex.error() == MessageQueueError.QUEUE_DOES_NOT_EXIST ? forget(queue.name()) : ex;
            }
            for (int i = 0; i < valid.size(); i++) {
                successful.put(valid.get(i).id(), sentMessage(queue, valid.get(i).value(), sent.get(i)));
            }
            this.events.sent(queue.name(), rows.size());
            weigh(rows);
        }
        return new BatchResult<>(successful, failed);
    }

    /**
     * The row of a message to send. Sharded, its partition is its group's (without one, the given
     * partition, picked at random for each send call), and a FIFO queue's deduplication id is kept per group, as on SQS's high-throughput FIFO
     * queues: a group's messages are on one shard, its duplicates meet there. In the caller's
     * transaction, a sharded installation writes a standard message to the main shard, with no
     * partition (it stays there), and refuses a FIFO one, whose group is on its partition's shard.
     */
    private NewMessage row(MessageQueueInfo queue, OutgoingMessage message, boolean transaction, Integer ungrouped) {
        MessageValidation.message(message, queue);
        Duration delay = message.delay() != null ? message.delay() : queue.attributes().delay();
        String dedup = null;
        String group = queue.fifo() ? message.groupId() : null;
        if (queue.fifo()) {
            dedup = message.deduplicationId() != null ? message.deduplicationId()
                    : MessageDigests.sha256OfBody(message.body());
        }
        boolean sharded = this.shards.sharded();
        if (sharded && transaction && queue.fifo()) {
            throw MessageQueueException.invalidParameter("A message of the FIFO queue " + queue.name() + " cannot join "
                    + "the application's transaction on a sharded installation: its group lives on the shard of its "
                    + "partition; send it after the commit");
        }
        Integer partition = transaction ? null : message.groupId() == null ? ungrouped
                : this.shards.partitionOf(message.groupId());
        String dedupKey = dedup == null || !sharded ? dedup : group.length() + ":" + group + ":" + dedup;
        return new NewMessage(queue.id(), UUID.randomUUID().toString(), message.body(),
                MessageAttributesJson.write(message.attributes()), (int) delay.toSeconds(), group, dedup,
                queue.fifo() ? null : message.groupId(), partition, dedupKey);
    }

    @Override
    public boolean deduplicatesPerGroup() {
        return this.shards.sharded();
    }

    /** Adds messages sent to their partitions' weights, as the jobs enqueued there count. */
    private void weigh(List<NewMessage> rows) {
        if (this.load != null) {
            rows.stream().map(NewMessage::partition).filter(Objects::nonNull).forEach(this.load::add);
        }
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
        List<StoredMessage> rows = new ArrayList<>();
        for (MessageShards.Shard shard : this.shards.rotation()) {
            int left = max - rows.size();
            rows.addAll(queue.fifo() ? shard.store().receiveFifo(queue.id(), left, visibility, deadLetter, maxReceives)
                    : shard.store().receive(queue.id(), left, visibility, deadLetter, maxReceives));
            if (rows.size() >= max) {
                break;
            }
        }
        List<ReceivedMessage> received = new ArrayList<>(rows.size());
        Instant now = Instant.now();
        for (StoredMessage row : rows) {
            Map<String, MessageAttributeValue> attributes = MessageAttributesJson.read(row.attributes());
            received.add(new ReceivedMessage(row.messageId(),
                    ReceiptHandles.encode(new Receipt(queue.id(), row.partition(), row.id(), row.receipt(), row.groupId())),
                    row.body(),
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
