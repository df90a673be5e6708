package io.pgqueue.internal.worker;

import java.time.Duration;

import io.pgqueue.worker.PoolSettings;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The prefetch depth: bounded by the maximum, the time window and the byte budget.
 */
class AdaptivePrefetchTests {

    private static final PoolSettings SETTINGS = new PoolSettings(1000, Duration.ofMillis(200), 1_000_000);

    @Test
    void beforeAnyJobRanTheDepthIsTheConcurrency() {
        assertThat(new AdaptivePrefetch(8, SETTINGS).depth()).isEqualTo(8);
    }

    @Test
    void fastJobsWithSmallPayloadsGetTheMaximum() {
        AdaptivePrefetch prefetch = fastTask();
        prefetch.recordSize(100);
        assertThat(prefetch.depth()).isEqualTo(1000);
    }

    @Test
    void slowerJobsGetTheWindowsWorthAndJobsSlowerThanTheWindowNone() {
        AdaptivePrefetch prefetch = new AdaptivePrefetch(8, SETTINGS);
        prefetch.record(Duration.ofMillis(20).toNanos());
        assertThat(prefetch.depth()).isEqualTo(80);
        AdaptivePrefetch single = new AdaptivePrefetch(1, SETTINGS);
        single.record(Duration.ofSeconds(1).toNanos());
        assertThat(single.depth()).isZero();
    }

    @Test
    void largePayloadsGetWhatTheBudgetHoldsAndTheDepthFollowsTheirAverage() {
        AdaptivePrefetch prefetch = fastTask();
        prefetch.recordSize(100_000);
        assertThat(prefetch.depth()).isEqualTo(10);
        for (int i = 0; i < 50; i++) {
            prefetch.recordSize(10_000);
        }
        assertThat(prefetch.depth()).isBetween(99, 100);
        prefetch.recordSize(500_000);
        assertThat(prefetch.depth()).as("one large job weighs in at once").isLessThan(20);
    }

    @Test
    void aJobLargerThanTheBudgetLeavesNoBuffer() {
        AdaptivePrefetch prefetch = fastTask();
        prefetch.recordSize(2_000_000);
        assertThat(prefetch.depth()).isZero();
    }

    /** A task of concurrency 8 whose jobs took 1 ms: the window alone would allow 1,600. */
    private static AdaptivePrefetch fastTask() {
        AdaptivePrefetch prefetch = new AdaptivePrefetch(8, SETTINGS);
        prefetch.record(Duration.ofMillis(1).toNanos());
        return prefetch;
    }
}
