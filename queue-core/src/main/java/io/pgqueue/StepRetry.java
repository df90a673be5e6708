package io.pgqueue;

import java.time.Duration;
import java.util.Objects;

import io.pgqueue.retry.RetryPolicy;

/**
 * How often a durable step is tried within one attempt of its job before the attempt fails (and
 * the job's own retry policy takes over). The waits between tries hold the handler's thread, so
 * they suit short hiccups; a step whose job is retried later runs again from its first try.
 *
 * @param maxTries how many times the step runs at most in one attempt, at least 1
 * @param backoff the wait after each failed try (its argument is the try that failed, from 1)
 */
public record StepRetry(int maxTries, RetryPolicy backoff) {

    /** One try: a failing step fails the attempt at once. The default. */
    public static final StepRetry NONE = new StepRetry(1, RetryPolicy.fixed(Duration.ZERO));

    /**
     * Checks the settings.
     */
    public StepRetry {
        if (maxTries < 1) {
            throw new IllegalArgumentException("A step runs at least once; maxTries must be 1 or more, not " + maxTries);
        }
        Objects.requireNonNull(backoff, "backoff");
    }

    /**
     * Tries a step up to a number of times, waiting per the policy between tries.
     * @param maxTries how many times at most, at least 1
     * @param backoff the wait after each failed try
     * @return the retry
     */
    public static StepRetry of(int maxTries, RetryPolicy backoff) {
        return new StepRetry(maxTries, backoff);
    }
}
