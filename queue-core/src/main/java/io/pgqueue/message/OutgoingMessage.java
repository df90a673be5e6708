package io.pgqueue.message;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * A message to send.
 *
 * @param body the body, any text (1 byte or more; with the attributes at most the queue's maximum
 * message size)
 * @param attributes the message attributes, at most ten
 * @param delay how long it stays invisible after it is sent, at most 15 minutes; {@code null} takes the
 * queue's delay (FIFO queues accept no per-message delay)
 * @param groupId the message group of a FIFO queue: messages of one group are delivered in order, one
 * receive at a time; on a standard queue it orders nothing, is kept and returned on receive (SQS fair
 * queues' tenant)
 * @param deduplicationId a FIFO queue sends a message with the same deduplication id within five
 * minutes only once; {@code null} uses the body's SHA-256 where the queue has content-based
 * deduplication
 */
public record OutgoingMessage(String body, Map<String, MessageAttributeValue> attributes, Duration delay,
        String groupId, String deduplicationId) {

    /**
     * Copies the attributes.
     */
    public OutgoingMessage {
        attributes = attributes == null ? Map.of() : Map.copyOf(attributes);
    }

    /**
     * A message with a body only.
     * @param body the body
     * @return the message
     */
    public static OutgoingMessage of(String body) {
        return new OutgoingMessage(Objects.requireNonNull(body, "body"), Map.of(), null, null, null);
    }

    /**
     * A message of a FIFO queue's group.
     * @param body the body
     * @param groupId the message group
     * @param deduplicationId the deduplication id, or {@code null} for content-based deduplication
     * @return the message
     */
    public static OutgoingMessage fifo(String body, String groupId, String deduplicationId) {
        return new OutgoingMessage(Objects.requireNonNull(body, "body"), Map.of(), null, groupId, deduplicationId);
    }

    /**
     * @param attributes the message attributes
     * @return a copy with them
     */
    public OutgoingMessage withAttributes(Map<String, MessageAttributeValue> attributes) {
        return new OutgoingMessage(this.body, attributes, this.delay, this.groupId, this.deduplicationId);
    }

    /**
     * @param delay how long it stays invisible after it is sent
     * @return a copy with it
     */
    public OutgoingMessage withDelay(Duration delay) {
        return new OutgoingMessage(this.body, this.attributes, delay, this.groupId, this.deduplicationId);
    }

    /**
     * @param groupId the message group: on a FIFO queue, the group whose order the message keeps; on a
     * standard queue, the group (tenant) a fair queue serves in turn with the others
     * @return a copy with it
     */
    public OutgoingMessage withGroupId(String groupId) {
        return new OutgoingMessage(this.body, this.attributes, this.delay, groupId, this.deduplicationId);
    }
}
