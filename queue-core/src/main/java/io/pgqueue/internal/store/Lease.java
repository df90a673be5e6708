package io.pgqueue.internal.store;

/**
 * The fencing token of one claim of a job: the job id and the claim's epoch. The epoch grows by one
 * with every claim, so a worker whose lease expired and whose job was claimed again holds a token
 * that no longer matches, and every write it attempts changes nothing.
 *
 * @param jobId the job id
 * @param epoch the claim's epoch
 */
public record Lease(long jobId, int epoch) {
}
