package io.pgqueue.retry;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RetryPolicyTests {

    @Test
    void fixedAlwaysWaitsTheSame() {
        RetryPolicy policy = RetryPolicy.fixed(Duration.ofSeconds(5));

        assertThat(policy.delayAfter(1)).isEqualTo(Duration.ofSeconds(5));
        assertThat(policy.delayAfter(100)).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void linearGrowsByAStepUpToTheCap() {
        RetryPolicy policy = RetryPolicy.linear(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(6));

        assertThat(policy.delayAfter(1)).isEqualTo(Duration.ofSeconds(1));
        assertThat(policy.delayAfter(2)).isEqualTo(Duration.ofSeconds(3));
        assertThat(policy.delayAfter(3)).isEqualTo(Duration.ofSeconds(5));
        assertThat(policy.delayAfter(4)).isEqualTo(Duration.ofSeconds(6));
        assertThat(policy.delayAfter(1_000_000)).isEqualTo(Duration.ofSeconds(6));
    }

    @Test
    void exponentialDoublesUpToTheCap() {
        ExponentialBackoff policy = new ExponentialBackoff(Duration.ofMillis(100), 2.0, Duration.ofSeconds(1), 0.0);

        assertThat(policy.delayAfter(1)).isEqualTo(Duration.ofMillis(100));
        assertThat(policy.delayAfter(2)).isEqualTo(Duration.ofMillis(200));
        assertThat(policy.delayAfter(4)).isEqualTo(Duration.ofMillis(800));
        assertThat(policy.delayAfter(5)).isEqualTo(Duration.ofSeconds(1));
        assertThat(policy.delayAfter(10_000)).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void jitterSpreadsDelaysBelowTheBase() {
        ExponentialBackoff policy = new ExponentialBackoff(Duration.ofSeconds(10), 2.0, Duration.ofMinutes(10), 0.5);

        long distinct = java.util.stream.IntStream.range(0, 200)
            .mapToObj(i -> policy.delayAfter(2))
            .peek(d -> assertThat(d).isBetween(Duration.ofSeconds(10), Duration.ofSeconds(20)))
            .distinct()
            .count();
        assertThat(distinct).isGreaterThan(50);
    }

    @Test
    void customPolicyIsAnyFunctionOfTheAttempt() {
        RetryPolicy squares = attempt -> Duration.ofSeconds((long) attempt * attempt);

        assertThat(squares.delayAfter(3)).isEqualTo(Duration.ofSeconds(9));
    }

    @Test
    void rejectsNonsense() {
        assertThatThrownBy(() -> RetryPolicy.fixed(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> RetryPolicy.exponential(Duration.ofSeconds(1), 0.5, Duration.ofSeconds(2), 0))
            .hasMessageContaining("multiplier");
        assertThatThrownBy(() -> RetryPolicy.exponential(Duration.ofSeconds(1), 2, Duration.ofSeconds(2), 1.5))
            .hasMessageContaining("jitter");
    }
}
