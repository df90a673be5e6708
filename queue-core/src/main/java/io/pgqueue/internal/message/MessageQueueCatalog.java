package io.pgqueue.internal.message;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import io.pgqueue.internal.store.MessageStore.QueueCounts;
import io.pgqueue.internal.store.MessageStore;
import io.pgqueue.message.MessageQueueAttributes;
import io.pgqueue.message.MessageQueueCounts;
import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;
import io.pgqueue.message.MessageQueueInfo;
import io.pgqueue.message.RedrivePolicy;

/**
 * The message queues themselves, for {@link MessageEngine}: creating, reading, changing, tagging,
 * deleting and counting them, with each node's short-lived cache of the settings it read.
 */
final class MessageQueueCatalog {

    /** How long a node trusts the settings of a queue it read, for changes made on other nodes. */
    static final Duration QUEUE_CACHE_TIME = Duration.ofSeconds(1);

    private final MessageShards shards;

    /** The main shard's store, which holds the queues. */
    private final MessageStore store;

    private final Map<String, Cached> queues = new ConcurrentHashMap<>();

    private record Cached(MessageQueueInfo queue, long readAt) {
    }

    MessageQueueCatalog(MessageShards shards) {
        this.shards = shards;
        this.store = shards.main().store();
    }

    MessageQueueInfo createQueue(String name, MessageQueueAttributes attributes, Map<String, String> tags) {
        MessageValidation.queueName(name);
        boolean fifo = name.endsWith(".fifo");
        checkAttributes(name, fifo, attributes);
        MessageValidation.tags(tags == null ? Map.of() : tags);
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
            MessageQueueInfo target = (MessageValidation.isQueueName(redrive.deadLetterQueue())
                    ? this.store.findQueue(redrive.deadLetterQueue()) : Optional.<MessageQueueInfo>empty())
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

    MessageQueueInfo getQueue(String name) {
        if (!MessageValidation.isQueueName(name)) {
            // No queue has such a name (and PostgreSQL's text cannot even hold a U+0000 in it).
            throw MessageQueueException.noSuchQueue(name);
        }
        MessageQueueInfo queue = this.store.findQueue(name).orElseThrow(() -> MessageQueueException.noSuchQueue(name));
        remember(queue);
        return queue;
    }

    List<MessageQueueInfo> listQueues(String prefix, String after, int limit) {
        if (limit < 1 || limit > 1000) {
            throw MessageQueueException.invalidParameter("Value " + limit + " for parameter MaxResults is invalid. "
                    + "Reason: MaxResults must be between 1 and 1000.");
        }
        if ((prefix != null && !MessageValidation.isQueueNamePart(prefix))
                || (after != null && !after.isEmpty() && !MessageValidation.isQueueName(after))) {
            return List.of();
        }
        return this.store.listQueues(prefix == null ? "" : prefix, after == null ? "" : after, limit);
    }

    List<MessageQueueInfo> deadLetterSourceQueues(String name) {
        return this.store.deadLetterSources(queue(name).name());
    }

    MessageQueueInfo setAttributes(String name, MessageQueueAttributes attributes) {
        MessageQueueInfo queue = queue(name);
        checkAttributes(name, queue.fifo(), attributes);
        if (!this.store.updateQueue(queue.id(), attributes)) {
            throw forget(name);
        }
        this.queues.remove(name);
        return getQueue(name);
    }

    void tagQueue(String name, Map<String, String> tags) {
        MessageQueueInfo queue = getQueue(name);
        Map<String, String> merged = new TreeMap<>(queue.tags());
        merged.putAll(tags);
        MessageValidation.tags(merged);
        this.store.updateTags(queue.id(), merged);
        this.queues.remove(name);
    }

    void untagQueue(String name, Set<String> keys) {
        MessageQueueInfo queue = getQueue(name);
        Map<String, String> left = new TreeMap<>(queue.tags());
        keys.forEach(left::remove);
        this.store.updateTags(queue.id(), left);
        this.queues.remove(name);
    }

    void deleteQueue(String name) {
        MessageQueueInfo queue = queue(name);
        this.queues.remove(name);
        if (!this.store.deleteQueue(queue.id())) {
            throw MessageQueueException.noSuchQueue(name);
        }
        // The other shards' messages of the queue; a shard missed here is cleared by the next count.
        this.shards.all().stream().filter(shard -> shard != this.shards.main())
            .forEach(shard -> shard.store().deleteContents(List.of(queue.id())));
    }

    int purge(String name) {
        long id = queue(name).id();
        return this.shards.all().stream().mapToInt(shard -> shard.store().purge(id)).sum();
    }

    /**
     * Counts every queue's messages over the shards, and removes those of queues that are gone (a
     * send that raced the queue's deletion, or a shard the deletion did not reach).
     */
    Map<String, MessageQueueCounts> counts() {
        Map<MessageShards.Shard, List<QueueCounts>> perShard = new LinkedHashMap<>();
        this.shards.all().forEach(shard -> perShard.put(shard, shard.store().counts()));
        // Listed after counting: a queue whose messages were counted existed before them.
        List<MessageQueueInfo> queues = this.store.listQueues("", "", Integer.MAX_VALUE);
        Set<Long> existing = queues.stream().map(MessageQueueInfo::id).collect(Collectors.toSet());
        Map<Long, QueueCounts> byId = new HashMap<>();
        perShard.forEach((shard, counts) -> {
            Set<Long> gone = new HashSet<>();
            for (QueueCounts count : counts) {
                if (existing.contains(count.queueId())) {
                    byId.merge(count.queueId(), count, MessageQueueCatalog::sum);
                }
                else {
                    gone.add(count.queueId());
                }
            }
            if (!gone.isEmpty()) {
                shard.store().deleteContents(gone);
            }
        });
        Map<String, MessageQueueCounts> counts = new LinkedHashMap<>();
        for (MessageQueueInfo queue : queues) {
            counts.put(queue.name(), counts(queue.name(), byId.get(queue.id())));
        }
        return counts;
    }

    MessageQueueCounts counts(String name) {
        long id = queue(name).id();
        return counts(name, this.shards.all().stream().map(shard -> shard.store().counts(id))
            .reduce(MessageQueueCatalog::sum).orElse(null));
    }

    private static QueueCounts sum(QueueCounts a, QueueCounts b) {
        Instant oldest = a.oldest() == null ? b.oldest() : b.oldest() == null || a.oldest().isBefore(b.oldest())
                ? a.oldest() : b.oldest();
        return new QueueCounts(a.queueId(), a.visible() + b.visible(), a.inFlight() + b.inFlight(),
                a.delayed() + b.delayed(), oldest);
    }

    private static MessageQueueCounts counts(String name, QueueCounts count) {
        if (count == null) {
            return new MessageQueueCounts(name, 0, 0, 0, Duration.ZERO);
        }
        return new MessageQueueCounts(name, count.visible(), count.inFlight(), count.delayed(),
                count.oldest() == null ? Duration.ZERO : Duration.between(count.oldest(), Instant.now()).abs());
    }

    MessageQueueInfo queue(String name) {
        Cached cached = this.queues.get(name);
        if (cached != null && System.nanoTime() - cached.readAt() < QUEUE_CACHE_TIME.toNanos()) {
            return cached.queue();
        }
        return getQueue(name);
    }

    private void remember(MessageQueueInfo queue) {
        this.queues.put(queue.name(), new Cached(queue, System.nanoTime()));
    }

    MessageQueueException forget(String name) {
        this.queues.remove(name);
        return MessageQueueException.noSuchQueue(name);
    }
}
