package io.pgqueue.test;

import java.util.List;

import io.pgqueue.JobState;

/**
 * What a {@link QueueTester#drain()} ran.
 *
 * @param completed jobs that completed
 * @param retried jobs that failed and will be tried again (due after their backoff)
 * @param failed jobs that failed for good
 * @param cancelled jobs cancelled while they ran
 */
public record DrainResult(int completed, int retried, int failed, int cancelled) {

    /**
     * Counts the states the jobs of a drain ended in.
     * @param states each job's state after its run
     * @return the counts
     */
    static DrainResult of(List<JobState> states) {
        int[] counts = new int[4];
        for (JobState state : states) {
            switch (state) {
                case COMPLETED -> counts[0]++;
                case FAILED -> counts[2]++;
                case CANCELLED -> counts[3]++;
                default -> counts[1]++;
            }
        }
        return new DrainResult(counts[0], counts[1], counts[2], counts[3]);
    }

    /** @return every job run */
    public int ran() {
        return this.completed + this.retried + this.failed + this.cancelled;
    }
}
