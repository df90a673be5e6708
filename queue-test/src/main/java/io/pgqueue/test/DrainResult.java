package io.pgqueue.test;

import java.util.List;

import io.pgqueue.AttemptResult;
import io.pgqueue.QueueTestSupport;

/**
 * What a {@link QueueTester#drain()} ran.
 *
 * @param completed jobs that completed
 * @param retried jobs that failed and will be tried again (due after their backoff), or came back
 * READY otherwise (a re-run requested while they ran)
 * @param snoozed jobs whose handler snoozed them ({@link io.pgqueue.TaskSnoozedException}): due again
 * after the delay, their attempt given back
 * @param failed jobs that failed for good
 * @param cancelled jobs cancelled while they ran
 */
public record DrainResult(int completed, int retried, int snoozed, int failed, int cancelled) {

    /**
     * Counts how the jobs of a drain ended.
     * @param jobs each job's outcome and state after its run
     * @return the counts
     */
    static DrainResult of(List<QueueTestSupport.DrainedJob> jobs) {
        int[] counts = new int[5];
        for (QueueTestSupport.DrainedJob job : jobs) {
            switch (job.state()) {
                case COMPLETED -> counts[0]++;
                case FAILED -> counts[3]++;
                case CANCELLED -> counts[4]++;
                default -> counts[job.outcome() == AttemptResult.SNOOZED ? 2 : 1]++;
            }
        }
        return new DrainResult(counts[0], counts[1], counts[2], counts[3], counts[4]);
    }

    /** @return every job run */
    public int ran() {
        return this.completed + this.retried + this.snoozed + this.failed + this.cancelled;
    }
}
