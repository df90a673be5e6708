package io.pgqueue.internal.store;

import io.pgqueue.JobState;

/**
 * The active job that holds a dedup key, locked for the rest of the enqueuing transaction.
 *
 * @param id the job id
 * @param state its state (READY, STARTING or RUNNING)
 * @param payload its payload as JSON text
 * @param rerunRequested whether a re-run is already requested
 */
public record ActiveDuplicate(long id, JobState state, String payload, boolean rerunRequested) {
}
