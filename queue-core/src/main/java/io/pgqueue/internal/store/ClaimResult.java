package io.pgqueue.internal.store;

import java.time.Duration;
import java.util.List;

/**
 * What a claim took, and which tasks' limits across nodes cut it short.
 *
 * @param jobs the claimed jobs, in no particular order
 * @param limited the tasks whose global concurrency or rate let the claim take fewer jobs than it asked for
 */
public record ClaimResult(List<ClaimedJob> jobs, List<LimitWait> limited) {

    /**
     * A task whose limit cut a claim short.
     *
     * @param task the task name
     * @param retryAfter when its rate limit gives the next permit, or {@code null} when it waits for a
     * running job of the task to finish (its global concurrency is taken, or its groups held jobs back)
     * @param orNewJobs whether new jobs may be claimable before then (its groups held jobs back, while
     * other groups may get jobs)
     */
    public record LimitWait(String task, Duration retryAfter, boolean orNewJobs) {
    }

    /** Copies the lists. */
    public ClaimResult {
        jobs = List.copyOf(jobs);
        limited = List.copyOf(limited);
    }
}
