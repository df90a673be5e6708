package io.pgqueue.message;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * What was done with one message queue over a time window, step by step, on every node
 * ({@code QueueAdmin.messageHistory}): kept by the queue in its database, per minute for a day and
 * per hour for a week. Every node that uses message queues adds its counts every few seconds to
 * the step in which it adds them.
 *
 * @param queue the queue's name
 * @param step the length of each point: a minute, or an hour
 * @param points the steps of the window that have counts, oldest first (a step without any is left out)
 */
public record MessageQueueHistory(String queue, Duration step, List<Point> points) {

    /**
     * Copies the points.
     */
    public MessageQueueHistory {
        points = List.copyOf(points);
    }

    /**
     * One step's counts.
     *
     * @param at the start of the step
     * @param sent messages sent
     * @param received messages received (each delivery of a message counts)
     * @param deleted messages deleted
     */
    public record Point(Instant at, long sent, long received, long deleted) {
    }
}
