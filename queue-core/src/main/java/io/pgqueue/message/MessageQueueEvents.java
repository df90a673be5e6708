package io.pgqueue.message;

import java.time.Duration;

/**
 * Receives what message queues do, for metrics; called on the calling thread, so it must be quick.
 */
public interface MessageQueueEvents {

    /** Counts nothing. */
    MessageQueueEvents NONE = new MessageQueueEvents() {
    };

    /**
     * Messages were sent (committed).
     * @param queue the queue's name
     * @param count how many
     */
    default void sent(String queue, int count) {
    }

    /**
     * A receive returned (possibly no message).
     * @param queue the queue's name
     * @param count how many messages it returned
     */
    default void received(String queue, int count) {
    }

    /**
     * A message was received for the first time.
     * @param queue the queue's name
     * @param delay from its send to this receive
     */
    default void firstReceived(String queue, Duration delay) {
    }

    /**
     * Messages were deleted.
     * @param queue the queue's name
     * @param count how many
     */
    default void deleted(String queue, int count) {
    }

    /**
     * The periodic count of every queue's messages was taken.
     * @param counts by queue name, every queue that exists
     */
    default void counted(java.util.Map<String, MessageQueueCounts> counts) {
    }
}
