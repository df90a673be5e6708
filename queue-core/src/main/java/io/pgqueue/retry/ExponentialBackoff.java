package io.pgqueue.retry;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff with a cap and jitter: the base delay after attempt {@code n} is
 * {@code min(max, initial * multiplier^(n-1))}; the returned delay is drawn uniformly from
 * {@code [base * (1 - jitter), base]}, so retries of many jobs that failed together spread out
 * instead of hammering a recovering dependency at the same instant.
 *
 * @param initial the delay after the first failure
 * @param multiplier the growth factor, at least 1
 * @param max the cap of the base delay
 * @param jitter the fraction of the base delay that is randomised, between 0 and 1
 */
public record ExponentialBackoff(Duration initial, double multiplier, Duration max, double jitter)
        implements RetryPolicy {

    /**
     * Validates the settings.
     */
    public ExponentialBackoff {
        Objects.requireNonNull(initial, "initial");
        Objects.requireNonNull(max, "max");
        if (initial.isNegative() || max.isNegative()) {
            throw new IllegalArgumentException("Exponential backoff delays must not be negative");
        }
        if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
            throw new IllegalArgumentException("Exponential backoff multiplier must be at least 1, was " + multiplier);
        }
        if (!(jitter >= 0.0 && jitter <= 1.0)) {
            throw new IllegalArgumentException("Exponential backoff jitter must be between 0 and 1, was " + jitter);
        }
    }

    /**
     * Returns the base delay after the given attempt, before jitter.
     * @param failedAttempt the attempt that failed, starting at 1
     * @return the capped base delay
     */
    public Duration baseDelayAfter(int failedAttempt) {
        double factor = Math.pow(this.multiplier, Math.max(0, failedAttempt - 1));
        double nanos = this.initial.toNanos() * factor;
        if (nanos >= this.max.toNanos() || Double.isInfinite(nanos)) {
            return this.max;
        }
        return Duration.ofNanos((long) nanos);
    }

    @Override
    public Duration delayAfter(int failedAttempt) {
        Duration base = baseDelayAfter(failedAttempt);
        if (this.jitter == 0.0 || base.isZero()) {
            return base;
        }
        double keep = 1.0 - this.jitter * ThreadLocalRandom.current().nextDouble();
        return Duration.ofNanos((long) (base.toNanos() * keep));
    }
}
