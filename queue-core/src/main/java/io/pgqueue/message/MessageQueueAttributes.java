package io.pgqueue.message;

import java.time.Duration;

/**
 * The settings of a message queue, each with Amazon SQS's range and default.
 *
 * @param visibilityTimeout how long a received message stays invisible, 0 to 12 hours (30 s)
 * @param retention how long a message is kept if nobody deletes it, 1 minute to 14 days (4 days)
 * @param delay how long a new message stays invisible, 0 to 15 minutes (0)
 * @param maxMessageSize the largest message in bytes, body and attributes, 1,024 to 1,048,576 (1,048,576)
 * @param receiveWaitTime how long a receive waits for a message when the call does not say, 0 to 20 s (0)
 * @param contentBasedDeduplication whether a FIFO queue deduplicates messages without a
 * deduplication id by the SHA-256 of their body (false)
 * @param redrivePolicy where messages received too often go, or {@code null}
 */
public record MessageQueueAttributes(Duration visibilityTimeout, Duration retention, Duration delay,
        int maxMessageSize, Duration receiveWaitTime, boolean contentBasedDeduplication, RedrivePolicy redrivePolicy) {

    /** The longest visibility timeout. */
    public static final Duration MAX_VISIBILITY_TIMEOUT = Duration.ofHours(12);

    /** The longest delay. */
    public static final Duration MAX_DELAY = Duration.ofMinutes(15);

    /** The longest a receive waits for messages. */
    public static final Duration MAX_RECEIVE_WAIT = Duration.ofSeconds(20);

    /** The largest message, in bytes. */
    public static final int MAX_MESSAGE_SIZE = 1_048_576;

    private static final MessageQueueAttributes DEFAULTS = new MessageQueueAttributes(Duration.ofSeconds(30),
            Duration.ofDays(4), Duration.ZERO, MAX_MESSAGE_SIZE, Duration.ZERO, false, null);

    /**
     * Checks every value against its range.
     */
    public MessageQueueAttributes {
        seconds(visibilityTimeout, "VisibilityTimeout", 0, MAX_VISIBILITY_TIMEOUT.toSeconds());
        seconds(retention, "MessageRetentionPeriod", 60, Duration.ofDays(14).toSeconds());
        seconds(delay, "DelaySeconds", 0, MAX_DELAY.toSeconds());
        seconds(receiveWaitTime, "ReceiveMessageWaitTimeSeconds", 0, MAX_RECEIVE_WAIT.toSeconds());
        if (maxMessageSize < 1024 || maxMessageSize > MAX_MESSAGE_SIZE) {
            throw MessageQueueException.invalidAttribute(
                    "MaximumMessageSize must be 1024 to " + MAX_MESSAGE_SIZE + " bytes, not " + maxMessageSize);
        }
    }

    /** @return the defaults of a new queue */
    public static MessageQueueAttributes defaults() {
        return DEFAULTS;
    }

    static int seconds(Duration value, String name, long min, long max) {
        if (value == null) {
            throw MessageQueueException.invalidAttribute(name + " is required");
        }
        if (value.isNegative() || value.toSeconds() < min || value.toSeconds() > max
                || value.toSeconds() * 1_000 != value.toMillis()) {
            throw MessageQueueException.invalidAttribute(
                    name + " must be whole seconds from " + min + " to " + max + ", not " + value.toMillis() / 1000.0);
        }
        return (int) value.toSeconds();
    }

    /**
     * @param value the visibility timeout
     * @return a copy with it
     */
    public MessageQueueAttributes withVisibilityTimeout(Duration value) {
        return new MessageQueueAttributes(value, this.retention, this.delay, this.maxMessageSize, this.receiveWaitTime,
                this.contentBasedDeduplication, this.redrivePolicy);
    }

    /**
     * @param value the retention
     * @return a copy with it
     */
    public MessageQueueAttributes withRetention(Duration value) {
        return new MessageQueueAttributes(this.visibilityTimeout, value, this.delay, this.maxMessageSize,
                this.receiveWaitTime, this.contentBasedDeduplication, this.redrivePolicy);
    }

    /**
     * @param value the delay of new messages
     * @return a copy with it
     */
    public MessageQueueAttributes withDelay(Duration value) {
        return new MessageQueueAttributes(this.visibilityTimeout, this.retention, value, this.maxMessageSize,
                this.receiveWaitTime, this.contentBasedDeduplication, this.redrivePolicy);
    }

    /**
     * @param value the largest message in bytes
     * @return a copy with it
     */
    public MessageQueueAttributes withMaxMessageSize(int value) {
        return new MessageQueueAttributes(this.visibilityTimeout, this.retention, this.delay, value,
                this.receiveWaitTime, this.contentBasedDeduplication, this.redrivePolicy);
    }

    /**
     * @param value how long receives wait by default
     * @return a copy with it
     */
    public MessageQueueAttributes withReceiveWaitTime(Duration value) {
        return new MessageQueueAttributes(this.visibilityTimeout, this.retention, this.delay, this.maxMessageSize,
                value, this.contentBasedDeduplication, this.redrivePolicy);
    }

    /**
     * @param value whether a FIFO queue deduplicates by content
     * @return a copy with it
     */
    public MessageQueueAttributes withContentBasedDeduplication(boolean value) {
        return new MessageQueueAttributes(this.visibilityTimeout, this.retention, this.delay, this.maxMessageSize,
                this.receiveWaitTime, value, this.redrivePolicy);
    }

    /**
     * @param value the redrive policy, or {@code null} for none
     * @return a copy with it
     */
    public MessageQueueAttributes withRedrivePolicy(RedrivePolicy value) {
        return new MessageQueueAttributes(this.visibilityTimeout, this.retention, this.delay, this.maxMessageSize,
                this.receiveWaitTime, this.contentBasedDeduplication, value);
    }
}
