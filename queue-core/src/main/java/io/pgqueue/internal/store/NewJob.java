package io.pgqueue.internal.store;

import java.time.Instant;

/**
 * A validated job, ready to be written: payload and headers already serialized.
 *
 * @param task the task name
 * @param payload the payload as JSON text
 * @param headers the headers as JSON text
 * @param priority the priority
 * @param runAt an absolute schedule time, or {@code null} to schedule {@code delayMillis} after now
 * @param delayMillis the delay after now (database clock) when {@code runAt} is {@code null}
 * @param toleranceMillis the delay tolerance, or {@code null} for none
 * @param maxAttempts the maximum number of attempts
 * @param dedupKey the dedup key, or {@code null}
 * @param partition the partition (see {@link io.pgqueue.internal.shard.PartitionHash})
 */
public record NewJob(String task, String payload, String headers, int priority, Instant runAt, long delayMillis,
        Long toleranceMillis, int maxAttempts, String dedupKey, int partition) {

    /**
     * A job in partition 0, for an unsharded queue.
     * @param task the task name
     * @param payload the payload as JSON text
     * @param headers the headers as JSON text
     * @param priority the priority
     * @param runAt an absolute schedule time, or {@code null} to schedule {@code delayMillis} after now
     * @param delayMillis the delay after now (database clock) when {@code runAt} is {@code null}
     * @param toleranceMillis the delay tolerance, or {@code null} for none
     * @param maxAttempts the maximum number of attempts
     * @param dedupKey the dedup key, or {@code null}
     */
    public NewJob(String task, String payload, String headers, int priority, Instant runAt, long delayMillis,
            Long toleranceMillis, int maxAttempts, String dedupKey) {
        this(task, payload, headers, priority, runAt, delayMillis, toleranceMillis, maxAttempts, dedupKey, 0);
    }

    /**
     * Returns a copy in another partition.
     * @param partition the partition
     * @return the copy
     */
    public NewJob inPartition(int partition) {
        return new NewJob(this.task, this.payload, this.headers, this.priority, this.runAt, this.delayMillis,
                this.toleranceMillis, this.maxAttempts, this.dedupKey, partition);
    }
}
