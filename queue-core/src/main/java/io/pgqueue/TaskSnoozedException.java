package io.pgqueue;

import java.time.Duration;

/**
 * Thrown by a handler to say "not now, try again in this long": the job is READY again after the
 * delay, and the attempt does not count — neither towards the job's maximum attempts nor for the
 * retry policy's backoff (the next failure waits as long as if this run had not happened). The
 * outcome is fenced by the attempt's lease like any other; a job whose cancellation was requested
 * ends CANCELLED instead. Events and the {@code pgqueue.execution} timer report it as
 * {@link AttemptResult#SNOOZED}.
 *
 * <pre>{@code
 * if (!partner.isOpen()) {
 *     throw new TaskSnoozedException(Duration.ofMinutes(10));
 * }
 * }</pre>
 */
public class TaskSnoozedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final Duration delay;

    /**
     * Creates the signal.
     * @param delay how long until the job is due again: zero or more
     * @throws IllegalArgumentException if the delay is {@code null} or negative
     */
    public TaskSnoozedException(Duration delay) {
        super("Snoozed for " + delay);
        if (delay == null || delay.isNegative()) {
            throw new IllegalArgumentException("A snooze needs a delay of zero or more, not " + delay);
        }
        this.delay = delay;
    }

    /** @return how long until the job is due again */
    public Duration delay() {
        return this.delay;
    }
}
