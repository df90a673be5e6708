package io.pgqueue.test;

/**
 * When the jobs a test enqueues run. No worker runs in the background in either mode, so a test
 * sees every job it enqueued until it runs them.
 */
public enum QueueTestMode {

    /** Nothing runs until the test calls {@link QueueTester#drain()} (or runs a job itself). */
    MANUAL,

    /**
     * Every enqueue runs the due jobs at once, on the calling thread, after its transaction commits
     * (the jobs those jobs enqueue too); {@code enqueue} returns when they ran.
     */
    INLINE
}
