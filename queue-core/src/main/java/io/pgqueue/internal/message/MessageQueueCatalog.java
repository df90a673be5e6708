package io.pgqueue.internal.message;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

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

    private final MessageStore store;

    private final Map<String, Cached> queues = new ConcurrentHashMap<>();

    private record Cached(MessageQueueInfo queue, long readAt) {
    }

    MessageQueueCatalog(MessageStore store) {
        this.store = store;
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
    }

    int purge(String name) {
        return this.store.purge(queue(name).id());
    }

    Map<String, MessageQueueCounts> counts() {
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

    MessageQueueCounts counts(String name) {
        return counts(name, this.store.counts(queue(name).id()));
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
