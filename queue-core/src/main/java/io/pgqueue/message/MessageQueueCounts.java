package io.pgqueue.message;

import java.time.Duration;

/**
 * A queue's messages, counted.
 *
 * @param queue the queue's name
 * @param visible messages that can be received now
 * @param inFlight messages received and not yet deleted or visible again
 * @param delayed messages whose delay has not passed
 * @param oldestAge the age of the oldest message, zero when there is none
 */
public record MessageQueueCounts(String queue, long visible, long inFlight, long delayed, Duration oldestAge) {
}
