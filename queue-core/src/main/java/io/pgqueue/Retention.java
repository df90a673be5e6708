package io.pgqueue;

import java.time.Duration;

/**
 * How long finished jobs are kept before the retention deletes them, by final state. Defaults
 * come from {@link QueueDefaults}.
 *
 * @param completed how long completed jobs are kept; zero deletes them when they complete (they are
 * then never archived)
 * @param failed how long failed jobs are kept, to be inspected and re-run
 * @param cancelled how long cancelled jobs are kept
 */
public record Retention(Duration completed, Duration failed, Duration cancelled) {

    /**
     * Validates the durations.
     */
    public Retention {
        InvalidSettingException.notNegative(completed, "retention.completed");
        InvalidSettingException.notNegative(failed, "retention.failed");
        InvalidSettingException.notNegative(cancelled, "retention.cancelled");
    }

    /**
     * Returns the default retentions.
     * @return the defaults
     */
    public static Retention defaults() {
        return new Retention(QueueDefaults.COMPLETED_RETENTION, QueueDefaults.FAILED_RETENTION,
                QueueDefaults.CANCELLED_RETENTION);
    }

    /**
     * Returns the retention of jobs that ended in the given final state.
     * @param state COMPLETED, FAILED or CANCELLED
     * @return the retention
     */
    public Duration of(JobState state) {
        return switch (state) {
            case COMPLETED -> this.completed;
            case FAILED -> this.failed;
            case CANCELLED -> this.cancelled;
            default -> throw new IllegalArgumentException(state + " is not a final state");
        };
    }
}
