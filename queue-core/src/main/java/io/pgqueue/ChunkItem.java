package io.pgqueue;

import java.time.Duration;

/**
 * One job of a {@link ChunkHandler}'s chunk: its payload, its context, and how its attempt ends.
 * The first of {@link #complete()}, {@link #fail(Throwable)} and {@link #snooze(Duration)} decides;
 * an item none of them is called for completes when the handler returns.
 *
 * @param <P> the payload type
 */
public interface ChunkItem<P> {

    /** @return the job's payload */
    P payload();

    /** @return the job's context: id, attempt, headers, result, log, cancellation */
    TaskContext context();

    /** Completes the job's attempt. */
    void complete();

    /**
     * Fails the job's attempt, as a handler that threw the failure would: retried after the task's
     * backoff, or failed for good for a terminal exception or on the last attempt.
     * @param failure why
     */
    void fail(Throwable failure);

    /**
     * Runs the job again after a delay without spending its attempt, as {@link TaskSnoozedException}.
     * @param delay how long, zero or more
     * @throws IllegalArgumentException if the delay is negative
     */
    void snooze(Duration delay);
}
