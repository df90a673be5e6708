package io.pgqueue.message;

import java.time.Duration;

/**
 * How to receive messages.
 *
 * @param maxMessages the most messages to receive, 1 to 10
 * @param visibilityTimeout how long they stay hidden, or {@code null} for the queue's timeout
 * @param waitTime how long to wait for a message when none is visible, at most 20 s, or {@code null}
 * for the queue's receive wait time
 */
public record ReceiveRequest(int maxMessages, Duration visibilityTimeout, Duration waitTime) {

    /**
     * @param maxMessages the most messages to receive
     * @return a request with the queue's visibility timeout and wait time
     */
    public static ReceiveRequest of(int maxMessages) {
        return new ReceiveRequest(maxMessages, null, null);
    }

    /**
     * @param value how long received messages stay hidden
     * @return a copy with it
     */
    public ReceiveRequest withVisibilityTimeout(Duration value) {
        return new ReceiveRequest(this.maxMessages, value, this.waitTime);
    }

    /**
     * @param value how long to wait for a message
     * @return a copy with it
     */
    public ReceiveRequest withWaitTime(Duration value) {
        return new ReceiveRequest(this.maxMessages, this.visibilityTimeout, value);
    }
}
