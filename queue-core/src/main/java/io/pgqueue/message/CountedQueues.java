package io.pgqueue.message;

import java.time.Instant;
import java.util.Map;

/**
 * The latest periodic count of every queue's messages.
 *
 * @param counts by queue name
 * @param takenAt when it was taken
 */
public record CountedQueues(Map<String, MessageQueueCounts> counts, Instant takenAt) {
}
