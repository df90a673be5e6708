package io.pgqueue.store;

import java.util.List;
import java.util.Map;

import io.pgqueue.JobState;

/**
 * The result of a batch of fenced writes: which jobs changed, to what, and which leases were
 * lost (the job was rescued, re-claimed or cancelled meanwhile, so the write changed nothing).
 *
 * @param applied the new state of each job the write changed, by job id
 * @param lost the leases that no longer held their job
 * @param cancelRequested ids of changed jobs whose cancellation has been requested (heartbeats only)
 */
public record FencedResult(Map<Long, JobState> applied, List<Lease> lost, List<Long> cancelRequested) {

    /**
     * Copies the collections.
     */
    public FencedResult {
        applied = Map.copyOf(applied);
        lost = List.copyOf(lost);
        cancelRequested = List.copyOf(cancelRequested);
    }

    /**
     * Returns the number of jobs that ended in the given state.
     * @param state the state
     * @return the count
     */
    public long count(JobState state) {
        return this.applied.values().stream().filter(state::equals).count();
    }
}
