package io.pgqueue.test;

/**
 * What a {@link QueueTester#drain()} ran.
 *
 * @param completed jobs that completed
 * @param retried jobs that failed and will be tried again (due after their backoff)
 * @param failed jobs that failed for good
 * @param cancelled jobs cancelled while they ran
 */
public record DrainResult(int completed, int retried, int failed, int cancelled) {

    /** @return every job run */
    public int ran() {
        return this.completed + this.retried + this.failed + this.cancelled;
    }
}
