package io.pgqueue.benchmark;

import java.util.List;

import io.pgqueue.QueueDefaults;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The balancer against simulated shards (no database): it converges, it does not oscillate where a
 * balancer without friction and without its checks does, and noise moves nothing.
 */
class BalancerSimulationTests {

    @Test
    void aSkewedStartConvergesBelowTheLowerThresholdWithinTenRounds() {
        BalancerSimulation.Run run = BalancerSimulation.skew();

        assertThat(run.points().get(0).gini()).isGreaterThan(0.4);
        long settled = run.settledBelow(QueueDefaults.BALANCER_GINI_LOWER);
        assertThat(settled).isBetween(0L, 10 * QueueDefaults.BALANCER_INTERVAL.toSeconds());
        assertThat(run.moves()).isLessThanOrEqualTo(10);
    }

    @Test
    void aHotPartitionSettlesWhereTheBaselineKeepsMovingPartitionsForever() {
        BalancerSimulation.Run ours = BalancerSimulation.hot("hot", false);
        BalancerSimulation.Run baseline = BalancerSimulation.hot("hot-baseline", true);

        List<Integer> ourHours = ours.movesPerHour();
        assertThat(ourHours.subList(1, ourHours.size())).as("moves per hour after the first").containsOnly(0);
        assertThat(ours.movesOf().getOrDefault(7, 0)).isLessThanOrEqualTo(QueueDefaults.BALANCER_FRICTION_MOVES);
        assertThat(baseline.movesPerHour()).as("the baseline's moves per hour").allMatch(moves -> moves > 200);
        assertThat(baseline.movesOf().get(7)).as("the hot partition bouncing between shards").isGreaterThan(10);
    }

    @Test
    void aDrainedShardEmptiesAtOneMovePerRoundAndFillsAgainWhenGivenBack() {
        BalancerSimulation.Run run = BalancerSimulation.drain();

        assertThat(run.movesPerHour().get(0)).isEqualTo(256);
        assertThat(run.points().get(359).gini()).as("the three other shards stay even").isLessThan(0.05);
        assertThat(run.points().get(361).gini()).as("the emptied shard given back").isGreaterThan(0.15);
        assertThat(run.settledBelow(QueueDefaults.BALANCER_GINI_LOWER)).isGreaterThan(3600);
        assertThat(run.movesPerHour().get(2)).isZero();
    }

    @Test
    void aShardThatIsDownForHalfAnHourMovesNothing() {
        assertThat(BalancerSimulation.down().moves()).isZero();
    }

    @Test
    void noisyWeightsAndLagSpikesMoveNothing() {
        BalancerSimulation.Run run = BalancerSimulation.noise();

        assertThat(run.moves()).isZero();
        assertThat(run.points()).allMatch(point -> point.gini() < QueueDefaults.BALANCER_GINI_UPPER);
    }
}
