package io.pgqueue;

/**
 * What one attempt of a job amounts to, as {@link io.pgqueue.observe.QueueEvents#executed} reports
 * it and the {@code pgqueue.execution} timer tags it ({@code outcome}, in lower case).
 */
public enum AttemptResult {
    /** Success. */
    COMPLETED,
    /** Failure with another attempt after a delay. */
    RETRY,
    /** Failure without another attempt. */
    FAILED,
    /** Stopped on a cancellation request. */
    CANCELLED,
    /** Cut short by a shutdown; does not count as an attempt. */
    RELEASED,
    /**
     * The handler asked to run later ({@link TaskSnoozedException}): READY again after its delay;
     * does not count as an attempt, and the retry policy's backoff does not see it.
     */
    SNOOZED,
    /**
     * The lease expired while a node held the job (the node crashed or stalled): back to READY
     * with its place in the queue kept; the attempt counts. Written by the rescuer, never by a
     * handler's run.
     */
    RESCUED;

    /** @return whether a handler's run can end this way (all but {@link #RESCUED}) */
    public boolean isExecutionOutcome() {
        return this != RESCUED;
    }
}
