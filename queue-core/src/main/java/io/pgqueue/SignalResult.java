package io.pgqueue;

/**
 * What became of a signal sent to a job ({@link QueueClient#signal}).
 */
public enum SignalResult {

    /** The job was sleeping in a wait for the signal: it has it, and is due now. */
    WOKEN,

    /**
     * The job waits for the signal in an attempt that is ending, or runs after dependencies: it has
     * the signal and runs with it when it runs next.
     */
    DELIVERED,

    /** The job does not wait for the signal yet: it is kept, and the wait returns it at once. */
    STORED,

    /** The job had a signal of that name already; this one is dropped. */
    DUPLICATE,

    /** The job's wait for the signal ended without it (timed out); this one is dropped. */
    TOO_LATE,

    /** The job has ended. */
    FINISHED,

    /** There is no such job. */
    NOT_FOUND
}
