package io.pgqueue;

/**
 * The result of enqueueing one job.
 *
 * @param jobId the id of the job that now represents the request (new or existing)
 * @param outcome what happened
 */
public record EnqueueResult(long jobId, EnqueueOutcome outcome) {

    /**
     * Returns whether a new job was created.
     * @return {@code true} for {@link EnqueueOutcome#CREATED}
     */
    public boolean created() {
        return this.outcome == EnqueueOutcome.CREATED;
    }
}
