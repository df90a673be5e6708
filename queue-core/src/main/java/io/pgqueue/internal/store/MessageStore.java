package io.pgqueue.internal.store;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import io.pgqueue.message.MessageQueueAttributes;
import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;
import io.pgqueue.message.MessageQueueInfo;
import io.pgqueue.message.PeekedMessage;
import io.pgqueue.message.RedrivePolicy;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * Every statement of message queues (see {@code V14__message_queues.sql}): queues, sends,
 * receives, deletes and visibility changes by receipt, purges, retention and counts.
 * <p>
 * One store for the four message tables because a receive, a delete and a visibility change each
 * touch several of them in one statement or transaction (a FIFO group's lock, the dedup window, the
 * dead-letter move); its SQL is in {@link MessageStatements}.
 */
public final class MessageStore {

    private static final ObjectMapper JSON = JsonMapper.builder().build();

    private static final TypeReference<Map<String, String>> TAGS = new TypeReference<>() {
    };

    private final NamedParameterJdbcTemplate jdbc;

    private final TransactionTemplate transactions;

    private final String schema;

    /** Whether the database is one shard of several, which writes a message only while it holds its partition. */
    private final boolean shard;

    private final RowMapper<MessageQueueInfo> queueMapper = (rs, row) -> queue(rs);

    private final RowMapper<StoredMessage> messageMapper = (rs, row) -> message(rs);

    private final RowMapper<QueueCounts> countsMapper = (rs, row) -> new QueueCounts(rs.getLong("queue_id"),
            rs.getLong("visible"), rs.getLong("in_flight"), rs.getLong("delayed"), StoreSupport.instant(rs, "oldest"));

    /**
     * A message to write.
     *
     * @param queueId the queue's id
     * @param messageId the message id
     * @param body the body
     * @param attributes the message attributes as JSON, or {@code null}
     * @param delaySeconds how long it stays invisible
     * @param groupId its FIFO group, or {@code null}
     * @param dedupId its FIFO deduplication id, or {@code null}
     * @param fairGroup on a standard queue, the group it was sent with (it orders nothing), or {@code null}
     * @param partition its partition on a sharded installation, or {@code null}: it stays where it is written
     * @param dedupKey the key its deduplication id is kept under ({@code dedupId}, or on a sharded
     * installation the group and the id), or {@code null}
     */
    public record NewMessage(long queueId, String messageId, String body, String attributes, int delaySeconds,
            String groupId, String dedupId, String fairGroup, Integer partition, String dedupKey) {
    }

    /**
     * A message written.
     *
     * @param messageId its id, or the id of the message a FIFO deduplication id sent before
     * @param sequence its position (of a deduplicated message, the one sent before)
     */
    public record Sent(String messageId, Long sequence) {
    }

    /**
     * A message received.
     *
     * @param id its row id
     * @param messageId its message id
     * @param body the body
     * @param attributes the message attributes as JSON, or {@code null}
     * @param sentAt when it was sent
     * @param receiveCount how often it was received
     * @param firstReceivedAt when it was received first
     * @param receipt the receipt of this receive
     * @param groupId its FIFO group, or {@code null}
     * @param dedupId its FIFO deduplication id, or {@code null}
     * @param fairGroup on a standard queue, the group it was sent with, or {@code null}
     * @param partition its partition, or {@code null}
     */
    public record StoredMessage(long id, String messageId, String body, String attributes, Instant sentAt,
            int receiveCount, Instant firstReceivedAt, long receipt, String groupId, String dedupId, String fairGroup,
            Integer partition) {
    }

    /**
     * What a receipt handle names: one receive of one message.
     *
     * @param queueId the queue's id
     * @param partition the message's partition, or {@code null} for one that stays on the main shard
     * @param id the message's row id
     * @param receipt the receipt of that receive
     * @param groupId the message's FIFO group, or {@code null}
     */
    public record Receipt(long queueId, Integer partition, long id, long receipt, String groupId) {
    }

    /** What became of a call by receipt. */
    public enum ReceiptOutcome {
        /** Done. */
        DONE,
        /** The message was received again since: the receipt is not the latest one. */
        STALE,
        /** The message is not in flight (a visibility change only). */
        NOT_IN_FLIGHT,
        /** The message is gone (deleted, moved or expired). */
        GONE
    }

    /**
     * A queue's messages, counted.
     *
     * @param queueId the queue's id
     * @param visible messages that can be received now
     * @param inFlight messages received and not yet visible again
     * @param delayed messages sent with a delay that has not passed
     * @param oldest when the oldest message was sent, or {@code null} when there is none
     */
    public record QueueCounts(long queueId, long visible, long inFlight, long delayed, Instant oldest) {
    }

    /**
     * A partition's messages staged for a move, as JSON arrays of rows.
     *
     * @param messages the messages
     * @param dedups the FIFO deduplication ids
     */
    public record StagedMessages(String messages, String dedups) {
    }

    /**
     * Creates the store of an unsharded queue's database.
     * @param dataSource the queue's database
     * @param config the queue's settings
     */
    public MessageStore(DataSource dataSource, QueueConfig config) {
        this(dataSource, config, false);
    }

    /**
     * Creates the store.
     * @param dataSource the queue's database
     * @param config the queue's settings
     * @param shard whether the database is one shard of several, which writes a message only while
     * it holds the message's partition
     */
    public MessageStore(DataSource dataSource, QueueConfig config, boolean shard) {
        this.jdbc = StoreSupport.jdbc(dataSource, config);
        this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        this.schema = config.schema();
        this.shard = shard;
    }

    private String sql(String statement) {
        return StoreSupport.sql(statement, this.schema);
    }

    NamedParameterJdbcTemplate jdbc() {
        return this.jdbc;
    }

    TransactionTemplate transactions() {
        return this.transactions;
    }

    String schema() {
        return this.schema;
    }

    /** @return the NOTIFY channel that wakes receivers, its payload the queue's id */
    public String channel() {
        return this.schema + ".messages";
    }

    /**
     * Runs work in one transaction: the caller's Spring transaction if one is active, a new one otherwise.
     * @param <T> the result type
     * @param work the work
     * @return its result
     */
    public <T> T inTransaction(Supplier<T> work) {
        return this.transactions.execute(status -> work.get());
    }

    /** @return whether the statement about to run opens its own transaction, which may commit asynchronously */
    private static boolean relaxed() {
        return !TransactionSynchronizationManager.isActualTransactionActive();
    }

    /**
     * Creates a queue unless one of the name exists.
     * @param name the name
     * @param fifo whether it is a FIFO queue
     * @param attributes its settings
     * @param tags its tags
     * @return the queue created, or empty when one of the name exists
     */
    public Optional<MessageQueueInfo> createQueue(String name, boolean fifo, MessageQueueAttributes attributes,
            Map<String, String> tags) {
        MapSqlParameterSource params = attributes(attributes).addValue("name", name).addValue("fifo", fifo)
            .addValue("tags", JSON.writeValueAsString(tags));
        return this.jdbc.query(sql(MessageStatements.CREATE_QUEUE), params, this.queueMapper).stream().findFirst();
    }

    /**
     * @param name a queue's name
     * @return the queue, or empty
     */
    public Optional<MessageQueueInfo> findQueue(String name) {
        return this.jdbc.query(sql(MessageStatements.FIND_QUEUE), new MapSqlParameterSource("name", name),
                this.queueMapper).stream().findFirst();
    }

    /**
     * @param id a queue's id
     * @return the queue, or empty
     */
    public Optional<MessageQueueInfo> findQueue(long id) {
        return this.jdbc.query(sql(MessageStatements.FIND_QUEUE_BY_ID), new MapSqlParameterSource("id", id),
                this.queueMapper).stream().findFirst();
    }

    /**
     * Lists queues by name.
     * @param prefix what their names start with (taken literally)
     * @param after list the names after this one ({@code ""} from the start)
     * @param limit the most to list
     * @return the queues
     */
    public List<MessageQueueInfo> listQueues(String prefix, String after, int limit) {
        String like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%";
        return this.jdbc.query(sql(MessageStatements.LIST_QUEUES),
                new MapSqlParameterSource("prefix", like).addValue("after", after).addValue("limit", limit),
                this.queueMapper);
    }

    /**
     * @param name a dead-letter queue's name
     * @return the queues whose redrive policy names it
     */
    public List<MessageQueueInfo> deadLetterSources(String name) {
        return this.jdbc.query(sql(MessageStatements.DEAD_LETTER_SOURCES), new MapSqlParameterSource("name", name),
                this.queueMapper);
    }

    /**
     * Changes a queue's settings.
     * @param id the queue's id
     * @param attributes its new settings
     * @return whether the queue exists
     */
    public boolean updateQueue(long id, MessageQueueAttributes attributes) {
        return this.jdbc.update(sql(MessageStatements.UPDATE_QUEUE), attributes(attributes).addValue("id", id)) == 1;
    }

    /**
     * Replaces a queue's tags.
     * @param id the queue's id
     * @param tags its tags
     * @return whether the queue exists
     */
    public boolean updateTags(long id, Map<String, String> tags) {
        return this.jdbc.update(sql(MessageStatements.UPDATE_TAGS),
                new MapSqlParameterSource("id", id).addValue("tags", JSON.writeValueAsString(tags))) == 1;
    }

    /**
     * Deletes a queue with its messages.
     * @param id the queue's id
     * @return whether it existed
     */
    public boolean deleteQueue(long id) {
        return inTransaction(() -> {
            MapSqlParameterSource params = new MapSqlParameterSource("id", id);
            boolean deleted = this.jdbc.update(sql(MessageStatements.DELETE_QUEUE), params) > 0;
            this.jdbc.update(sql(MessageStatements.DELETE_QUEUE_CONTENTS), params);
            return deleted;
        });
    }

    /**
     * Deletes the messages, groups and deduplication ids of queues (on a shard, of queues the main
     * shard deleted; on the main shard, of deleted queues a send raced).
     * @param queueIds ids of queues that are gone
     */
    public void deleteContents(Collection<Long> queueIds) {
        for (Long id : queueIds) {
            this.jdbc.update(sql(MessageStatements.DELETE_QUEUE_CONTENTS), new MapSqlParameterSource("id", id));
        }
    }

    /**
     * Sends messages in one transaction (the caller's if one is active) and wakes the receivers of
     * their queues on commit. FIFO messages (those with a group) take their groups first, and a
     * deduplication id sent within five minutes returns the earlier message instead of writing it.
     * @param messages the messages
     * @return per message, in order, what was written
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when a message's
     * queue is gone; nothing is written
     * @throws PartitionNotHeldException on a shard that does not hold one of the messages' partitions
     * ACTIVE; nothing is written
     */
    public List<Sent> send(List<NewMessage> messages) {
        boolean fifoAny = messages.stream().anyMatch(m -> m.groupId() != null);
        // One statement without FIFO messages: it is its own transaction (no COMMIT round trip) unless the caller has one.
        return fifoAny ? inTransaction(() -> sendNow(messages)) : sendNow(messages);
    }

    private List<Sent> sendNow(List<NewMessage> messages) {
        List<NewMessage> fifo = messages.stream().filter(m -> m.groupId() != null).toList();
        Map<List<Object>, Sent> earlier = new HashMap<>();
        if (!fifo.isEmpty()) {
            this.jdbc.update(sql(MessageStatements.TAKE_GROUPS), new MapSqlParameterSource()
                .addValue("queues", SqlArrays.bigints(fifo.stream().map(NewMessage::queueId).toList()))
                .addValue("groups", SqlArrays.texts(fifo.stream().map(NewMessage::groupId).toList()))
                .addValue("delays", SqlArrays.ints(fifo.stream().map(NewMessage::delaySeconds).toList())));
            earlier = claimDedupIds(fifo);
        }
        List<NewMessage> fresh = new ArrayList<>(messages.size());
        List<String> holders = new ArrayList<>(messages.size());
        for (NewMessage message : messages) {
            Sent first = message.dedupKey() == null ? null : earlier.get(List.of(message.queueId(), message.dedupKey()));
            boolean duplicate = first != null && !first.messageId().equals(message.messageId());
            holders.add(duplicate ? first.messageId() : message.messageId());
            if (!duplicate) {
                fresh.add(message);
            }
        }
        Map<String, Long> sequences = new HashMap<>();
        if (!fresh.isEmpty()) {
            boolean ranked = fresh.stream().anyMatch(message -> message.fairGroup() != null);
            String statement = this.shard ? (ranked ? MessageStatements.SEND_RANKED_FENCED : MessageStatements.SEND_FENCED)
                    : ranked ? MessageStatements.SEND_RANKED : MessageStatements.SEND;
            this.jdbc.query(sql(statement), new MapSqlParameterSource()
                .addValue("queues", SqlArrays.bigints(fresh.stream().map(NewMessage::queueId).toList()))
                .addValue("messageIds", SqlArrays.of("uuid", fresh.stream().map(NewMessage::messageId).toArray()))
                .addValue("bodies", SqlArrays.texts(fresh.stream().map(NewMessage::body).toList()))
                .addValue("attributes", SqlArrays.texts(fresh.stream().map(NewMessage::attributes).toList()))
                .addValue("delays", SqlArrays.ints(fresh.stream().map(NewMessage::delaySeconds).toList()))
                .addValue("groups", SqlArrays.texts(fresh.stream().map(NewMessage::groupId).toList()))
                .addValue("dedups", SqlArrays.texts(fresh.stream().map(NewMessage::dedupId).toList()))
                .addValue("fairGroups", SqlArrays.texts(fresh.stream().map(NewMessage::fairGroup).toList()))
                .addValue("partitions", SqlArrays.ints(fresh.stream().map(NewMessage::partition).toList()))
                .addValue("channel", channel()),
                    rs -> {
                        sequences.put(rs.getString("message_id"), rs.getLong("id"));
                    });
            if (this.shard && sequences.isEmpty()) {
                // The shard no longer holds a partition of the batch: nothing of this transaction stays.
                throw new PartitionNotHeldException(fresh.stream().map(NewMessage::partition)
                    .filter(java.util.Objects::nonNull).collect(java.util.stream.Collectors.toSet()));
            }
            for (NewMessage message : fresh) {
                if (!sequences.containsKey(message.messageId())) {
                    // Its queue was deleted: nothing of this transaction stays.
                    throw new MessageQueueException(MessageQueueError.QUEUE_DOES_NOT_EXIST,
                            "The specified queue does not exist (it was deleted).");
                }
            }
            List<NewMessage> deduplicated = fresh.stream().filter(m -> m.dedupKey() != null).toList();
            if (!deduplicated.isEmpty()) {
                this.jdbc.update(sql(MessageStatements.SET_DEDUP_SEQUENCES), new MapSqlParameterSource()
                    .addValue("queues", SqlArrays.bigints(deduplicated.stream().map(NewMessage::queueId).toList()))
                    .addValue("dedups", SqlArrays.texts(deduplicated.stream().map(NewMessage::dedupKey).toList()))
                    .addValue("sequences", SqlArrays.bigints(deduplicated.stream()
                        .map(m -> sequences.get(m.messageId())).toList())));
            }
        }
        List<Sent> result = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
            NewMessage message = messages.get(i);
            String holder = holders.get(i);
            Long sequence = sequences.get(holder);
            if (sequence == null && message.dedupKey() != null) {
                sequence = earlier.get(List.of(message.queueId(), message.dedupKey())).sequence();
            }
            result.add(new Sent(holder, sequence));
        }
        return result;
    }

    /** @return per (queue id, deduplication id), the message that holds it now (its sequence, if known) */
    private Map<List<Object>, Sent> claimDedupIds(List<NewMessage> fifo) {
        // One row per id: the second message of a batch with an id is a duplicate of the first.
        Map<List<Object>, NewMessage> firsts = new LinkedHashMap<>();
        fifo.stream().filter(m -> m.dedupKey() != null)
            .forEach(m -> firsts.putIfAbsent(List.of(m.queueId(), m.dedupKey()), m));
        Map<List<Object>, Sent> holders = new HashMap<>();
        if (firsts.isEmpty()) {
            return holders;
        }
        Collection<NewMessage> claims = firsts.values();
        this.jdbc.query(sql(MessageStatements.CLAIM_DEDUP_IDS), new MapSqlParameterSource()
            .addValue("queues", SqlArrays.bigints(claims.stream().map(NewMessage::queueId).toList()))
            .addValue("dedups", SqlArrays.texts(claims.stream().map(NewMessage::dedupKey).toList()))
            .addValue("messageIds", SqlArrays.of("uuid", claims.stream().map(NewMessage::messageId).toArray()))
            .addValue("partitions", SqlArrays.ints(claims.stream().map(NewMessage::partition).toList())),
                rs -> {
                    holders.put(List.of(rs.getLong("queue_id"), rs.getString("dedup_id")),
                            new Sent(rs.getString("message_id"), rs.getObject("sequence", Long.class)));
                });
        return holders;
    }

    /**
     * Receives messages of a standard queue: up to {@code max} visible ones, hidden for the
     * visibility timeout under a new receipt. Messages received {@code maxReceives} times already
     * move to the dead-letter queue instead.
     * @param queueId the queue's id
     * @param max the most messages
     * @param visibilitySeconds how long they stay hidden
     * @param deadLetterQueueId the dead-letter queue's id, or {@code null} without redrive
     * @param maxReceives the receives a message gets before it moves (ignored without redrive)
     * @return the messages received
     */
    public List<StoredMessage> receive(long queueId, int max, int visibilitySeconds, Long deadLetterQueueId,
            int maxReceives) {
        MapSqlParameterSource params = new MapSqlParameterSource("queue", queueId).addValue("max", max)
            .addValue("visibility", visibilitySeconds)
            .addValue("deadLetter", deadLetterQueueId, Types.BIGINT)
            .addValue("maxReceives", deadLetterQueueId == null ? Integer.MAX_VALUE : maxReceives)
            .addValue("relaxed", relaxed());
        // One statement: its own transaction unless the caller has one.
        return this.jdbc.query(sql(MessageStatements.RECEIVE), params, this.messageMapper);
    }

    /**
     * Receives messages of a FIFO queue: from the groups available now, oldest first, each group's
     * messages in order up to its first invisible one, at most {@code max}; their groups stay
     * unavailable until they are deleted or visible again. Messages received {@code maxReceives}
     * times already move to the dead-letter queue instead.
     * @param queueId the queue's id
     * @param max the most messages
     * @param visibilitySeconds how long they stay hidden
     * @param deadLetterQueueId the dead-letter queue's id, or {@code null} without redrive
     * @param maxReceives the receives a message gets before it moves (ignored without redrive)
     * @return the messages received
     */
    public List<StoredMessage> receiveFifo(long queueId, int max, int visibilitySeconds, Long deadLetterQueueId,
            int maxReceives) {
        boolean relaxed = relaxed();
        return inTransaction(() -> {
            List<StoredMessage> received = new ArrayList<>();
            // A group whose first message moved to the dead-letter queue may deliver its next: pick again.
            while (received.size() < max) {
                List<Long> deliver = new ArrayList<>();
                List<Long> dead = new ArrayList<>();
                List<String> groups = new ArrayList<>();
                this.jdbc.query(sql(MessageStatements.PICK_FIFO), new MapSqlParameterSource("queue", queueId)
                    .addValue("max", max - received.size()).addValue("relaxed", relaxed), rs -> {
                        boolean exhausted = deadLetterQueueId != null && rs.getInt("receive_count") >= maxReceives;
                        (exhausted ? dead : deliver).add(rs.getLong("id"));
                        String group = rs.getString("group_id");
                        if (groups.isEmpty() || !groups.get(groups.size() - 1).equals(group)) {
                            groups.add(group);
                        }
                    });
                if (groups.isEmpty()) {
                    break;
                }
                if (!dead.isEmpty()) {
                    moveToDeadLetter(dead, deadLetterQueueId);
                }
                if (!deliver.isEmpty()) {
                    received.addAll(this.jdbc.query(sql(MessageStatements.MARK_RECEIVED), new MapSqlParameterSource()
                        .addValue("ids", SqlArrays.bigints(deliver)).addValue("visibility", visibilitySeconds),
                            this.messageMapper));
                }
                settleGroups(queueId, groups);
                if (dead.isEmpty()) {
                    break;
                }
            }
            received.sort(java.util.Comparator.comparingLong(StoredMessage::id));
            return received;
        });
    }

    private void moveToDeadLetter(List<Long> ids, long deadLetterQueueId) {
        List<String> joined = this.jdbc.queryForList(sql(MessageStatements.MOVE_TO_DEAD_LETTER),
                new MapSqlParameterSource("ids", SqlArrays.bigints(ids)).addValue("deadLetter", deadLetterQueueId),
                String.class);
        List<String> groups = joined.stream().filter(java.util.Objects::nonNull).distinct().toList();
        if (!groups.isEmpty()) {
            this.jdbc.update(sql(MessageStatements.TAKE_GROUPS), new MapSqlParameterSource()
                .addValue("queues", SqlArrays.bigints(groups.stream().map(g -> deadLetterQueueId).toList()))
                .addValue("groups", SqlArrays.texts(groups))
                .addValue("delays", SqlArrays.ints(groups.stream().map(g -> 0).toList())));
        }
    }

    private void lockGroups(List<Long> queues, List<String> groups) {
        this.jdbc.query(sql(MessageStatements.LOCK_GROUPS), new MapSqlParameterSource()
            .addValue("queues", SqlArrays.bigints(queues)).addValue("groups", SqlArrays.texts(groups)), rs -> {
            });
    }

    private void settleGroups(long queueId, List<String> groups) {
        settleGroups(groups.stream().map(g -> queueId).toList(), groups);
    }

    private void settleGroups(List<Long> queues, List<String> groups) {
        this.jdbc.update(sql(MessageStatements.SETTLE_GROUPS), new MapSqlParameterSource()
            .addValue("queues", SqlArrays.bigints(queues)).addValue("groups", SqlArrays.texts(groups)));
    }

    /**
     * Deletes messages by receipt in one transaction; a receipt deletes only while it is the
     * message's latest.
     * @param receipts the receipts
     * @return per receipt, in order, what became of it
     */
    public List<ReceiptOutcome> delete(List<Receipt> receipts) {
        return byReceipt(receipts, MessageStatements.DELETE, null);
    }

    /**
     * Changes the visibility timeout of messages in flight, by receipt, in one transaction.
     * @param receipts the receipts
     * @param seconds per receipt, the new timeout counted from now
     * @return per receipt, in order, what became of it
     */
    public List<ReceiptOutcome> changeVisibility(List<Receipt> receipts, List<Integer> seconds) {
        return byReceipt(receipts, MessageStatements.CHANGE_VISIBILITY, seconds);
    }

    private List<ReceiptOutcome> byReceipt(List<Receipt> receipts, String statement, List<Integer> seconds) {
        boolean relaxed = relaxed();
        boolean grouped = receipts.stream().anyMatch(r -> r.groupId() != null);
        // Without FIFO groups to lock, the change is one statement and its own transaction; the
        // outcomes of receipts that missed are read after it.
        return grouped ? inTransaction(() -> byReceiptNow(receipts, statement, seconds, relaxed))
                : byReceiptNow(receipts, statement, seconds, relaxed);
    }

    private List<ReceiptOutcome> byReceiptNow(List<Receipt> receipts, String statement, List<Integer> seconds,
            boolean relaxed) {
        List<Receipt> grouped = receipts.stream().filter(r -> r.groupId() != null).toList();
        List<Long> groupQueues = grouped.stream().map(Receipt::queueId).toList();
        List<String> groups = grouped.stream().map(Receipt::groupId).toList();
        if (!grouped.isEmpty()) {
            // Before the change, in its own statement: the change and the settling read what the lock holder committed.
            lockGroups(groupQueues, groups);
        }
        MapSqlParameterSource params = new MapSqlParameterSource()
            .addValue("queues", SqlArrays.bigints(receipts.stream().map(Receipt::queueId).toList()))
            .addValue("ids", SqlArrays.bigints(receipts.stream().map(Receipt::id).toList()))
            .addValue("receipts", SqlArrays.bigints(receipts.stream().map(Receipt::receipt).toList()))
            .addValue("relaxed", relaxed);
        if (seconds != null) {
            params.addValue("seconds", SqlArrays.ints(seconds));
        }
        List<Long> done = this.jdbc.queryForList(sql(statement), params, Long.class);
        if (!grouped.isEmpty()) {
            settleGroups(groupQueues, groups);
        }
        List<Long> missed = receipts.stream().map(Receipt::id).filter(id -> !done.contains(id)).toList();
        Map<Long, ReceiptOutcome> misses = new HashMap<>();
        if (!missed.isEmpty()) {
            Map<Long, Long> latest = new HashMap<>();
            Map<Long, Boolean> inFlight = new HashMap<>();
            this.jdbc.query(sql(MessageStatements.RECEIPT_STATES),
                    new MapSqlParameterSource("ids", SqlArrays.bigints(missed)), rs -> {
                        latest.put(rs.getLong("id"), rs.getObject("receipt", Long.class));
                        inFlight.put(rs.getLong("id"), rs.getBoolean("in_flight"));
                    });
            for (Receipt receipt : receipts) {
                if (!done.contains(receipt.id())) {
                    Long current = latest.get(receipt.id());
                    misses.put(receipt.id(), !latest.containsKey(receipt.id()) ? ReceiptOutcome.GONE
                            : current == null || current != receipt.receipt() ? ReceiptOutcome.STALE
                                    : Boolean.TRUE.equals(inFlight.get(receipt.id())) ? ReceiptOutcome.STALE
                                            : ReceiptOutcome.NOT_IN_FLIGHT);
                }
            }
        }
        return receipts.stream().map(r -> misses.getOrDefault(r.id(), ReceiptOutcome.DONE)).toList();
    }

    /**
     * Deletes every message of a queue.
     * @param queueId the queue's id
     * @return the messages deleted
     */
    public int purge(long queueId) {
        return inTransaction(() -> this.jdbc.update(sql(MessageStatements.PURGE), new MapSqlParameterSource("queue", queueId)));
    }

    /**
     * Moves a batch of visible messages from one standard queue to another, or each back to the
     * queue it was dead-lettered from, and wakes the targets' receivers, in one transaction.
     * @param fromQueueId the queue the messages leave (a dead-letter queue)
     * @param toQueueId the queue they join, or {@code null} for each its source queue
     * @param existing the ids of the queues that exist (the catalog is on the main shard)
     * @param limit the most messages
     * @return how many moved
     */
    public int redrive(long fromQueueId, Long toQueueId, Collection<Long> existing, int limit) {
        return inTransaction(() -> {
            int moved = 0;
            for (Map<String, Object> target : this.jdbc.queryForList(sql(MessageStatements.REDRIVE),
                    new MapSqlParameterSource("from", fromQueueId).addValue("to", toQueueId, Types.BIGINT)
                        .addValue("existing", SqlArrays.bigints(existing)).addValue("limit", limit))) {
                moved += ((Number) target.get("moved")).intValue();
                announce(((Number) target.get("queue_id")).longValue());
            }
            return moved;
        });
    }

    /**
     * @param fromQueueId a queue being redriven
     * @param toQueueId the queue it is redriven to, or {@code null} for each message's source queue
     * @param existing the ids of the queues that exist
     * @return its visible messages that cannot move: the queue each would go to does not exist
     */
    public long unmovable(long fromQueueId, Long toQueueId, Collection<Long> existing) {
        return this.jdbc.queryForObject(sql(MessageStatements.UNMOVABLE), new MapSqlParameterSource("from", fromQueueId)
            .addValue("to", toQueueId, Types.BIGINT).addValue("existing", SqlArrays.bigints(existing)), Long.class);
    }

    /**
     * Moves a batch of visible messages from one FIFO queue to another in one transaction, group by
     * group: each group's oldest messages join the end of the same group there, in order; groups
     * with a message in flight stay. The target's groups are locked first, as a receive that moves
     * messages to a dead-letter queue locks them, so the two never wait on each other in turn.
     * @param fromQueueId the queue the messages leave (a dead-letter queue)
     * @param toQueueId the queue they join
     * @param limit the most messages
     * @return how many moved
     */
    public int redriveFifo(long fromQueueId, long toQueueId, int limit) {
        return inTransaction(() -> {
            List<String> candidates = this.jdbc.queryForList(sql(MessageStatements.AVAILABLE_GROUPS),
                    new MapSqlParameterSource("queue", fromQueueId).addValue("limit", limit), String.class);
            if (candidates.isEmpty()) {
                return 0;
            }
            this.jdbc.update(sql(MessageStatements.TAKE_GROUPS), new MapSqlParameterSource()
                .addValue("queues", SqlArrays.bigints(candidates.stream().map(g -> toQueueId).toList()))
                .addValue("groups", SqlArrays.texts(candidates))
                .addValue("delays", SqlArrays.ints(candidates.stream().map(g -> 0).toList())));
            List<String> groups = this.jdbc.queryForList(sql(MessageStatements.LOCK_AVAILABLE_GROUPS),
                    new MapSqlParameterSource("queue", fromQueueId).addValue("groups", SqlArrays.texts(candidates)),
                    String.class);
            Long moved = groups.isEmpty() ? Long.valueOf(0) : this.jdbc.queryForObject(sql(MessageStatements.REDRIVE_GROUPS),
                    new MapSqlParameterSource("from", fromQueueId).addValue("to", toQueueId)
                        .addValue("groups", SqlArrays.texts(groups)).addValue("limit", limit), Long.class);
            if (!groups.isEmpty()) {
                settleGroups(fromQueueId, groups);
            }
            settleGroups(toQueueId, candidates);
            if (moved != null && moved > 0) {
                announce(toQueueId);
            }
            return moved == null ? 0 : moved.intValue();
        });
    }

    /**
     * Wakes the receivers waiting on a queue (when the current transaction commits).
     * @param queueId the queue's id
     */
    public void announce(long queueId) {
        this.jdbc.query(sql(MessageStatements.ANNOUNCE),
                new MapSqlParameterSource("channel", channel()).addValue("queue", queueId), rs -> {
                });
    }

    /**
     * @param queueId a queue's id
     * @return when its next message becomes visible (in the past if one is visible now), or empty when it holds none
     */
    public Optional<Instant> nextVisible(long queueId) {
        return this.jdbc.query(sql(MessageStatements.NEXT_VISIBLE), new MapSqlParameterSource("queue", queueId),
                (rs, row) -> Optional.ofNullable(rs.getTimestamp(1)).map(Timestamp::toInstant)).get(0);
    }

    /**
     * Deletes messages older than their queue's retention, at most {@code limit}.
     * @param queue the queue
     * @param limit the most to delete
     * @return the messages deleted
     */
    public int deleteExpired(MessageQueueInfo queue, int limit) {
        MapSqlParameterSource params = new MapSqlParameterSource("queue", queue.id())
            .addValue("retention", queue.attributes().retention().toSeconds()).addValue("limit", limit);
        if (!queue.fifo()) {
            return this.jdbc.update(sql(MessageStatements.DELETE_EXPIRED), params);
        }
        return inTransaction(() -> {
            List<String> groups = this.jdbc.queryForList(sql(MessageStatements.EXPIRED_GROUPS), params, String.class);
            if (groups.isEmpty()) {
                return 0;
            }
            List<Long> queues = groups.stream().map(g -> queue.id()).toList();
            lockGroups(queues, groups);
            int deleted = this.jdbc.update(sql(MessageStatements.DELETE_EXPIRED_IN_GROUPS),
                    params.addValue("groups", SqlArrays.texts(groups)));
            settleGroups(queues, groups);
            return deleted;
        });
    }

    /** VACUUMs the message table (skipped while another VACUUM holds it). */
    public void vacuum() {
        StoreSupport.outsideTransaction(this.jdbc, sql(MessageStatements.VACUUM));
    }

    /** @return the FIFO deduplication ids forgotten because their five minutes passed */
    public int deleteExpiredDeduplicationIds() {
        return this.jdbc.update(sql(MessageStatements.DELETE_EXPIRED_DEDUP), new MapSqlParameterSource());
    }

    /**
     * Reads a queue's oldest messages as they are, without receiving them.
     * @param queueId the queue's id
     * @param limit the most messages
     * @return the messages, oldest sent first
     */
    public List<PeekedMessage> peek(long queueId, int limit) {
        return this.jdbc.query(sql(MessageStatements.PEEK), new MapSqlParameterSource("queue", queueId)
            .addValue("limit", limit), (rs, row) -> new PeekedMessage(rs.getString("message_id"), rs.getString("body"),
                    rs.getString("attributes"), StoreSupport.instant(rs, "sent_at"), StoreSupport.instant(rs, "visible_at"),
                    rs.getInt("receive_count"), rs.getString("group_id"), rs.getString("dedup_id")));
    }

    /** @return the messages of every queue that holds some, counted */
    public List<QueueCounts> counts() {
        return this.jdbc.query(sql(MessageStatements.COUNTS), this.countsMapper);
    }

    /**
     * @param queueId a queue's id
     * @return its messages, counted
     */
    public QueueCounts counts(long queueId) {
        return this.jdbc.queryForObject(sql(MessageStatements.COUNTS_OF_QUEUE), new MapSqlParameterSource("queue", queueId),
                this.countsMapper);
    }

    /**
     * Stages a batch of a partition's messages for a move: those without a FIFO group first, then
     * FIFO groups whole (with no message in flight unless {@code force}).
     * @param partition the partition
     * @param limit the most messages without a group, or the most FIFO groups
     * @param force whether FIFO groups with messages in flight move too
     * @return how many messages it took
     */
    public int stageBatch(int partition, int limit, boolean force) {
        MapSqlParameterSource params = new MapSqlParameterSource("partition", partition).addValue("limit", limit)
            .addValue("force", force);
        int staged = this.jdbc.update(sql(MessageStatements.STAGE_MESSAGES), params);
        if (staged > 0) {
            return staged;
        }
        return inTransaction(() -> {
            List<Long> queues = new ArrayList<>();
            List<String> groups = new ArrayList<>();
            this.jdbc.query(sql(MessageStatements.LOCK_MOVABLE_GROUPS), params, rs -> {
                queues.add(rs.getLong("queue_id"));
                groups.add(rs.getString("group_id"));
            });
            if (groups.isEmpty()) {
                return 0;
            }
            int taken = this.jdbc.update(sql(MessageStatements.STAGE_GROUPS), new MapSqlParameterSource("partition", partition)
                .addValue("queues", SqlArrays.bigints(queues)).addValue("groups", SqlArrays.texts(groups)));
            // A group keeps its row while it holds messages of no partition (written before the installation was sharded).
            settleGroups(queues, groups);
            return taken;
        });
    }

    /**
     * Stages a partition's FIFO deduplication ids for a move, once its messages are staged.
     * @param partition the partition
     * @return how many it took
     */
    public int stageDeduplicationIds(int partition) {
        return this.jdbc.update(sql(MessageStatements.STAGE_DEDUPS), new MapSqlParameterSource("partition", partition));
    }

    /**
     * @param partition a partition
     * @return the batches of its messages staged on this shard, oldest first
     */
    public List<Long> stagedBatches(int partition) {
        return this.jdbc.queryForList(sql(MessageStatements.STAGED_BATCHES), new MapSqlParameterSource("partition",
                partition), Long.class);
    }

    /**
     * @param partition a partition
     * @param batch one of its staged batches
     * @return the batch's rows
     */
    public StagedMessages stagedBatch(int partition, long batch) {
        return this.jdbc.queryForObject(sql(MessageStatements.STAGED_BATCH), new MapSqlParameterSource("partition", partition)
            .addValue("batch", batch), (rs, row) -> new StagedMessages(rs.getString("messages"), rs.getString("dedups")));
    }

    /**
     * Drops a staged batch its target has written.
     * @param partition the partition
     * @param batch the batch
     */
    public void dropBatch(int partition, long batch) {
        this.jdbc.update(sql(MessageStatements.DROP_BATCH), new MapSqlParameterSource("partition", partition)
            .addValue("batch", batch));
    }

    /**
     * Writes a staged batch on this shard (the target), once, in one transaction: its messages, the
     * FIFO groups they join, its deduplication ids; their queues' receivers are woken.
     * @param source the source shard's number
     * @param batch the batch
     * @param partition the partition
     * @param staged the batch's rows
     * @return the messages written, or -1 if the batch was written before
     */
    public long applyBatch(int source, long batch, int partition, StagedMessages staged) {
        return inTransaction(() -> {
            long inserted = this.jdbc.queryForObject(sql(MessageStatements.APPLY_BATCH), new MapSqlParameterSource()
                .addValue("source", source).addValue("batch", batch).addValue("partition", partition)
                .addValue("messages", staged.messages()).addValue("dedups", staged.dedups()).addValue("channel", channel()),
                    (rs, row) -> rs.getBoolean("applied") ? rs.getLong("inserted") : -1L);
            if (inserted > 0) {
                List<Long> queues = new ArrayList<>();
                List<String> groups = new ArrayList<>();
                this.jdbc.query(sql(MessageStatements.BATCH_GROUPS), new MapSqlParameterSource("messages", staged.messages()),
                        rs -> {
                            queues.add(rs.getLong("queue_id"));
                            groups.add(rs.getString("group_id"));
                        });
                if (!groups.isEmpty()) {
                    this.jdbc.update(sql(MessageStatements.TAKE_GROUPS), new MapSqlParameterSource()
                        .addValue("queues", SqlArrays.bigints(queues)).addValue("groups", SqlArrays.texts(groups))
                        .addValue("delays", SqlArrays.ints(groups.stream().map(g -> 0).toList())));
                    settleGroups(queues, groups);
                }
            }
            return inserted;
        });
    }

    /**
     * @param partition a partition
     * @return its messages still on this shard
     */
    public long partitionMessages(int partition) {
        return this.jdbc.queryForObject(sql(MessageStatements.PARTITION_MESSAGES),
                new MapSqlParameterSource("partition", partition), Long.class);
    }

    private static MapSqlParameterSource attributes(MessageQueueAttributes attributes) {
        RedrivePolicy redrive = attributes.redrivePolicy();
        return new MapSqlParameterSource()
            .addValue("visibilityTimeout", (int) attributes.visibilityTimeout().toSeconds())
            .addValue("retention", (int) attributes.retention().toSeconds())
            .addValue("delay", (int) attributes.delay().toSeconds())
            .addValue("maxMessageSize", attributes.maxMessageSize())
            .addValue("receiveWait", (int) attributes.receiveWaitTime().toSeconds())
            .addValue("contentDedup", attributes.contentBasedDeduplication())
            .addValue("deadLetterQueue", redrive == null ? null : redrive.deadLetterQueue(), Types.VARCHAR)
            .addValue("maxReceiveCount", redrive == null ? null : redrive.maxReceiveCount(), Types.INTEGER);
    }

    private static MessageQueueInfo queue(ResultSet rs) throws SQLException {
        String deadLetter = rs.getString("dead_letter_queue");
        MessageQueueAttributes attributes = new MessageQueueAttributes(
                Duration.ofSeconds(rs.getInt("visibility_timeout_s")), Duration.ofSeconds(rs.getInt("retention_s")),
                Duration.ofSeconds(rs.getInt("delay_s")), rs.getInt("max_message_size"),
                Duration.ofSeconds(rs.getInt("receive_wait_s")), rs.getBoolean("content_dedup"),
                deadLetter == null ? null : new RedrivePolicy(deadLetter, rs.getInt("max_receive_count")));
        return new MessageQueueInfo(rs.getLong("id"), rs.getString("name"), rs.getBoolean("fifo"), attributes,
                Map.copyOf(JSON.readValue(rs.getString("tags"), TAGS)), StoreSupport.instant(rs, "created_at"),
                StoreSupport.instant(rs, "updated_at"));
    }

    private static StoredMessage message(ResultSet rs) throws SQLException {
        return new StoredMessage(rs.getLong("id"), rs.getString("message_id"), rs.getString("body"),
                rs.getString("attributes"), StoreSupport.instant(rs, "sent_at"), rs.getInt("receive_count"),
                StoreSupport.instant(rs, "first_received_at"), rs.getLong("receipt"), rs.getString("group_id"),
                rs.getString("dedup_id"), rs.getString("fair_group"), rs.getObject("partition", Integer.class));
    }

}
