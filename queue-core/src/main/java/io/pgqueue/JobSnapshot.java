package io.pgqueue;

import java.time.Instant;

/**
 * A job as stored at one moment, active or finished.
 *
 * @param id the job id
 * @param task the task name
 * @param state the state
 * @param priority the priority
 * @param payload the payload as JSON text; for a task whose payloads are encrypted, as stored
 * ({@link PayloadEncryption}) where the queue's admin reads it, decrypted where its client does
 * @param headers the headers as JSON text
 * @param scheduleTime when the job is or was due
 * @param delayToleranceDeadline when it should have started at the latest, or {@code null}
 * @param attempt attempts made so far
 * @param maxAttempts the maximum number of attempts
 * @param leaseOwner the worker holding (or that last held) the job, or {@code null}
 * @param leaseDeadline the lease deadline of a claimed job, or {@code null}
 * @param dedupKey the dedup key, or {@code null}
 * @param rerunRequested whether a re-run follows the current run
 * @param cancelRequested whether cancellation was requested for the running job
 * @param lastError the last failure, or {@code null}
 * @param createdAt when the job was enqueued
 * @param startedAt when the last attempt was claimed, or {@code null}
 * @param finishedAt when the job finished, or {@code null} while active
 * @param progress the progress its handler last reported, or {@code null}
 * @param partition the job's partition, which places it on a shard
 * @param result the result its handler recorded ({@link TaskContext#recordResult}) as JSON text, once
 * the job completed in the attempt that recorded it; {@code null} while it is active, when it failed
 * or was cancelled, or recorded none
 */
public record JobSnapshot(long id, String task, JobState state, int priority, String payload, String headers,
        Instant scheduleTime, Instant delayToleranceDeadline, int attempt, int maxAttempts, String leaseOwner,
        Instant leaseDeadline, String dedupKey, boolean rerunRequested, boolean cancelRequested, String lastError,
        Instant createdAt, Instant startedAt, Instant finishedAt, String progress, int partition, String result) {

    /**
     * @param payload another payload
     * @return a copy with that payload
     */
    public JobSnapshot withPayload(String payload) {
        return new JobSnapshot(this.id, this.task, this.state, this.priority, payload, this.headers, this.scheduleTime,
                this.delayToleranceDeadline, this.attempt, this.maxAttempts, this.leaseOwner, this.leaseDeadline,
                this.dedupKey, this.rerunRequested, this.cancelRequested, this.lastError, this.createdAt,
                this.startedAt, this.finishedAt, this.progress, this.partition, this.result);
    }

    /** @return whether the job has ended: COMPLETED, FAILED or CANCELLED */
    public boolean finished() {
        return this.state == JobState.COMPLETED || this.state == JobState.FAILED || this.state == JobState.CANCELLED;
    }
}
