package io.pgqueue.internal.store;

import java.time.Duration;
import java.util.Objects;

import io.pgqueue.AttemptResult;

/**
 * The result of one attempt, to be written under the lease it was made with.
 *
 * @param lease the lease of the attempt
 * @param kind what happened
 * @param retryDelay the delay before the next attempt, for {@link AttemptResult#RETRY} and
 * {@link AttemptResult#SNOOZED}; zero otherwise
 * @param error the failure description, or {@code null}
 * @param progress the progress the handler reported last, stored with the outcome, or {@code null}
 * @param result the result the handler recorded last, as JSON, written with a completion (an attempt
 * that did not complete has no result anyone reads), or {@code null}
 * @param history the attempt as its job's history keeps it ({@link AttemptHistory#entry}), or
 * {@code null} when the task keeps none
 * @param steps whether the job may have recorded durable steps ({@link StepStore}): their rows are dropped
 * with the outcome when it ends the job unkept or re-runs it
 */
public record Outcome(Lease lease, AttemptResult kind, Duration retryDelay, String error, String progress,
        String result, String history, boolean steps) {

    /** Longest error text stored with a job. */
    public static final int MAX_ERROR_LENGTH = 4000;

    /**
     * Validates the outcome and bounds the error text.
     */
    public Outcome {
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(kind, "kind");
        retryDelay = retryDelay == null ? Duration.ZERO : retryDelay;
        if (retryDelay.isNegative()) {
            throw new IllegalArgumentException("Retry delay must not be negative, was " + retryDelay);
        }
        error = text(error, MAX_ERROR_LENGTH);
        progress = text(progress, MAX_ERROR_LENGTH);
    }

    /** PostgreSQL text cannot hold NUL characters: one in an exception message must not poison a batch. */
    private static String text(String value, int maxLength) {
        if (value == null) {
            return null;
        }
        String clean = value.indexOf('\u0000') < 0 ? value : value.replace("\u0000", "");
        return clean.length() > maxLength ? clean.substring(0, maxLength) : clean;
    }

    /**
     * The attempt succeeded.
     * @param lease the lease
     * @return the outcome
     */
    public static Outcome completed(Lease lease) {
        return new Outcome(lease, AttemptResult.COMPLETED, Duration.ZERO, null, null, null, null, false);
    }

    /**
     * The handler asked to run later: the job is READY again after the delay, the attempt given back.
     * @param lease the lease
     * @param delay how long until it is due again
     * @return the outcome
     */
    public static Outcome snoozed(Lease lease, Duration delay) {
        return new Outcome(lease, AttemptResult.SNOOZED, delay, null, null, null, null, false);
    }

    /**
     * The attempt failed; the job is READY again after the delay.
     * @param lease the lease
     * @param delay the delay before the next attempt
     * @param error the failure
     * @return the outcome
     */
    public static Outcome retry(Lease lease, Duration delay, String error) {
        return new Outcome(lease, AttemptResult.RETRY, delay, error, null, null, null, false);
    }

    /**
     * The attempt failed and no retry follows.
     * @param lease the lease
     * @param error the failure
     * @return the outcome
     */
    public static Outcome failed(Lease lease, String error) {
        return new Outcome(lease, AttemptResult.FAILED, Duration.ZERO, error, null, null, null, false);
    }

    /**
     * The attempt was cut short by the node shutting down: the job is READY again at once and the
     * attempt does not count.
     * @param lease the lease
     * @param reason why
     * @return the outcome
     */
    public static Outcome released(Lease lease, String reason) {
        return new Outcome(lease, AttemptResult.RELEASED, Duration.ZERO, reason, null, null, null, false);
    }

    /**
     * The lease expired: the job goes back to READY keeping its schedule, so it starts before jobs
     * enqueued after it; the attempt counts.
     * @param lease the expired lease
     * @param reason why, stored as the job's last error
     * @return the outcome
     */
    public static Outcome rescued(Lease lease, String reason) {
        return new Outcome(lease, AttemptResult.RESCUED, Duration.ZERO, reason, null, null, null, false);
    }

    /**
     * The handler stopped because cancellation was requested.
     * @param lease the lease
     * @return the outcome
     */
    public static Outcome cancelled(Lease lease) {
        return new Outcome(lease, AttemptResult.CANCELLED, Duration.ZERO, null, null, null, null, false);
    }

    /**
     * Returns this outcome with the handler's last progress report.
     * @param progress the progress, or {@code null}
     * @return the outcome with the progress
     */
    public Outcome withProgress(String progress) {
        return new Outcome(this.lease, this.kind, this.retryDelay, this.error, progress, this.result, this.history, this.steps);
    }

    /**
     * Returns this outcome with the handler's last recorded result, kept only for a completion.
     * @param result the result as JSON, or {@code null}
     * @return the outcome with the result
     */
    public Outcome withResult(String result) {
        return new Outcome(this.lease, this.kind, this.retryDelay, this.error, this.progress,
                this.kind == AttemptResult.COMPLETED ? result : null, this.history, this.steps);
    }

    /**
     * Returns this outcome with the attempt's entry for its job's history.
     * @param history the entry as JSON ({@link AttemptHistory#entry}), or {@code null}
     * @return the outcome with the entry
     */
    public Outcome withHistory(String history) {
        return new Outcome(this.lease, this.kind, this.retryDelay, this.error, this.progress, this.result, history, this.steps);
    }

    /**
     * Returns this outcome marked as one of a job that may have recorded durable steps.
     * @return the outcome, marked
     */
    public Outcome withSteps() {
        return new Outcome(this.lease, this.kind, this.retryDelay, this.error, this.progress, this.result, this.history,
                true);
    }

    /**
     * Whether this is a success with nothing else to store but a history entry (no progress, no
     * message): such outcomes are written through the schema's {@code complete_jobs} function.
     * @return {@code true} for a plain completion
     */
    public boolean isPlainCompletion() {
        return this.kind == AttemptResult.COMPLETED && this.progress == null && this.error == null;
    }
}
