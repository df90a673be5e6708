package io.pgqueue.retry;

import java.time.Duration;
import java.util.Objects;

/**
 * Decides how long a job waits before its next attempt, as a function of the attempt that just
 * failed. Whether there is a next attempt at all is decided by the job's maximum attempts and the
 * task's terminal exceptions, not by the policy.
 * <p>
 * Any function of the attempt number is a policy: {@code attempt -> Duration.ofMinutes(attempt * attempt)}.
 */
@FunctionalInterface
public interface RetryPolicy {

    /**
     * Returns the delay before the attempt after {@code failedAttempt}.
     * @param failedAttempt the attempt that failed, starting at 1
     * @return the delay, zero or positive
     */
    Duration delayAfter(int failedAttempt);

    /**
     * Retries after the same delay every time.
     * @param delay the delay
     * @return the policy
     */
    static RetryPolicy fixed(Duration delay) {
        requireNonNegative(delay, "delay");
        return attempt -> delay;
    }

    /**
     * Retries after {@code initial + step * (attempt - 1)}, capped at {@code max}.
     * @param initial the delay after the first failure
     * @param step the increase per further failure
     * @param max the cap
     * @return the policy
     */
    static RetryPolicy linear(Duration initial, Duration step, Duration max) {
        requireNonNegative(initial, "initial");
        requireNonNegative(step, "step");
        requireNonNegative(max, "max");
        return attempt -> {
            Duration delay = step.multipliedBy(Math.max(0, attempt - 1)).plus(initial);
            return delay.compareTo(max) > 0 ? max : delay;
        };
    }

    /**
     * Retries after {@code initial * multiplier^(attempt - 1)}, capped at {@code max}, with random
     * jitter (see {@link ExponentialBackoff}).
     * @param initial the delay after the first failure
     * @param multiplier the growth factor, at least 1
     * @param max the cap
     * @param jitter the fraction of the delay that is randomised, between 0 and 1
     * @return the policy
     */
    static RetryPolicy exponential(Duration initial, double multiplier, Duration max, double jitter) {
        return new ExponentialBackoff(initial, multiplier, max, jitter);
    }

    private static void requireNonNegative(Duration value, String name) {
        Objects.requireNonNull(value, name);
        if (value.isNegative()) {
            throw new IllegalArgumentException("Retry " + name + " must not be negative, was " + value);
        }
    }
}
