package io.pgqueue.internal.store;

import java.util.List;
import java.util.Map;

import io.pgqueue.JobState;

/**
 * The result of a batch of fenced writes: which jobs changed, to what, and which leases were
 * lost (the job was rescued, re-claimed or cancelled meanwhile, so the write changed nothing).
 *
 * @param applied the new state of each job the write changed, by job id
 * @param tasks the task of each job the write changed, by job id
 * @param lost the leases that no longer held their job
 * @param cancelRequested ids of changed jobs whose cancellation has been requested
 */
public record FencedResult(Map<Long, JobState> applied, Map<Long, String> tasks, List<Lease> lost,
        List<Long> cancelRequested) {

    /** Nothing written. */
    public static final FencedResult EMPTY = new FencedResult(Map.of(), Map.of(), List.of(), List.of());

    /**
     * Copies the collections.
     */
    public FencedResult {
        applied = Map.copyOf(applied);
        tasks = Map.copyOf(tasks);
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
