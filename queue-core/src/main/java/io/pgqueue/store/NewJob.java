package io.pgqueue.store;

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
 */
public record NewJob(String task, String payload, String headers, int priority, Instant runAt, long delayMillis,
        Long toleranceMillis, int maxAttempts, String dedupKey) {
}
