package io.pgqueue.message;

import java.time.Duration;

/**
 * A visibility change of a received message.
 *
 * @param receiptHandle the handle of the latest receive
 * @param timeout the new visibility timeout, counted from now, 0 to 12 hours
 */
public record VisibilityChange(String receiptHandle, Duration timeout) {
}
