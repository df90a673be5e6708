package io.pgqueue;

import java.time.Instant;

/**
 * A job that failed for good, as {@code QueueAdmin.recentFailures} lists it.
 *
 * @param id the job id
 * @param attempt attempts made
 * @param error the last error
 * @param failedAt when it failed
 */
public record JobFailure(long id, int attempt, String error, Instant failedAt) {
}
