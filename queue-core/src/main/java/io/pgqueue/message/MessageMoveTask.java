package io.pgqueue.message;

import java.time.Instant;

/**
 * A message move task (Amazon SQS's {@code StartMessageMoveTask}): the messages of a dead-letter
 * queue moved, at a rate, to a destination queue or each back to the queue it was dead-lettered from.
 *
 * @param handle the task's handle, which cancels it
 * @param status where it stands
 * @param source the dead-letter queue it moves messages from
 * @param destination the queue it moves them to, or {@code null} for each message's source queue
 * @param maxPerSecond the most messages it moves a second, or {@code null} for the most a task moves (500)
 * @param moved the messages moved so far
 * @param toMove the messages the source held when the task started
 * @param failureReason why it failed, or {@code null}
 * @param startedAt when it started
 */
public record MessageMoveTask(String handle, Status status, String source, String destination, Integer maxPerSecond,
        long moved, long toMove, String failureReason, Instant startedAt) {

    /** The most messages a task moves a second. */
    public static final int MAX_PER_SECOND = 500;

    /** Where a task stands. */
    public enum Status {

        /** Moving messages, one batch a second. */
        RUNNING,

        /** The source held no visible message any more (messages in flight there stay). */
        COMPLETED,

        /** Cancelled; the messages moved so far stay moved. */
        CANCELLED,

        /** Stopped: the messages left have no queue to go to (see the failure reason). */
        FAILED
    }
}
