package io.pgqueue.internal.store;

import java.time.Instant;

/**
 * A job claimed by a worker, with the lease it holds.
 *
 * @param lease the fencing token to present on every later write
 * @param task the task name
 * @param payload the payload as JSON text
 * @param headers the headers as JSON text
 * @param priority the priority
 * @param attempt this attempt's number, starting at 1
 * @param maxAttempts the maximum number of attempts
 * @param scheduleTime when the job became due
 * @param delayToleranceDeadline when it should have started at the latest, or {@code null}
 * @param createdAt when it was enqueued
 * @param claimedAt when it was claimed (database clock)
 * @param leaseDeadline when the lease expires unless renewed (database clock)
 */
public record ClaimedJob(Lease lease, String task, String payload, String headers, int priority, int attempt,
        int maxAttempts, Instant scheduleTime, Instant delayToleranceDeadline, Instant createdAt, Instant claimedAt,
        Instant leaseDeadline) {

    /** @return the job id */
    public long id() {
        return this.lease.jobId();
    }

    /**
     * Returns whether this is the job's last allowed attempt.
     * @return {@code true} if no retry can follow a failure
     */
    public boolean isLastAttempt() {
        return this.attempt >= this.maxAttempts;
    }
}
