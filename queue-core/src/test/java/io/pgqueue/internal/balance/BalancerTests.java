package io.pgqueue.internal.balance;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.pgqueue.InvalidSettingException;
import io.pgqueue.balance.BalancerDecision;
import io.pgqueue.balance.BalancerRound;
import io.pgqueue.balance.BalancerSettings;
import io.pgqueue.balance.MoveReason;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/**
 * The balancer's decisions on hand-made views: Gini index, median filter, hysteresis, friction,
 * affinity and draining.
 */
class BalancerTests {

    private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

    @Test
    void giniIsZeroForEvenLoadsAndGrowsWithTheSkew() {
        assertThat(Gini.of(List.of(5.0, 5.0, 5.0, 5.0))).isZero();
        assertThat(Gini.of(List.of(0.0, 1.0))).isEqualTo(0.5, within(1e-9));
        assertThat(Gini.of(List.of(0.8, 1.0, 1.0, 1.2))).isEqualTo(0.075, within(1e-9));
        assertThat(Gini.of(List.of(0.0, 0.0, 0.0, 4.0))).isEqualTo(0.75, within(1e-9));
        assertThat(Gini.of(List.of(3.0))).isZero();
    }

    @Test
    void theMedianFilterIgnoresSpikesWithinItsWindow() {
        MedianFilter filter = new MedianFilter(Duration.ofMinutes(1));
        for (int i = 0; i < 6; i++) {
            filter.add(START.plusSeconds(10L * i), i == 2 || i == 4 ? 100 : 1);
        }
        assertThat(filter.median()).isEqualTo(1);
        // Half the samples high is not enough.
        filter.add(START.plusSeconds(60), 100);
        assertThat(filter.median()).isEqualTo(1);
        filter.add(START.plusSeconds(70), 100);
        assertThat(filter.size()).isEqualTo(7);
        assertThat(filter.median()).isEqualTo(100);
    }

    @Test
    void hysteresisStartsAboveTheUpperThresholdAndStopsBelowTheLowerOne() {
        Balancer balancer = new Balancer(BalancerSettings.defaults().withFriction(1000, Duration.ofHours(1)));
        // Gini 0.1: between the thresholds, and balancing is off: nothing moves.
        Map<Integer, String> placement = spread(4, 400);
        Map<Integer, Double> weights = weights(400, 1.0);
        weights.put(0, 60.0);
        BalancerRound quiet = balancer.decide(view(0, placement, weights));
        assertThat(quiet.gini()).isBetween(0.05, 0.15);
        assertThat(quiet.balancing()).isFalse();
        assertThat(quiet.moves()).isEmpty();

        weights.put(0, 110.0);
        BalancerRound round = balancer.decide(view(1, placement, weights));
        assertThat(round.gini()).isGreaterThan(0.15);
        assertThat(round.moves()).singleElement().satisfies(move -> {
            assertThat(move.reason()).isEqualTo(MoveReason.GINI);
            assertThat(move.from()).isEqualTo("s0");
            assertThat(move.giniAfter()).isLessThan(move.giniBefore());
        });
        round.moves().forEach(move -> placement.put(move.partition(), move.to()));
        int rounds = 2;
        // Between the thresholds on the way down, it goes on until below the lower one.
        boolean passedBetween = false;
        while (balancer.balancing() && rounds < 200) {
            BalancerRound next = balancer.decide(view(rounds++, placement, weights));
            passedBetween |= next.gini() < 0.15 && next.gini() > 0.05 && !next.moves().isEmpty();
            next.moves().forEach(move -> placement.put(move.partition(), move.to()));
        }
        assertThat(passedBetween).isTrue();
        assertThat(balancer.balancing()).isFalse();
        BalancerRound settled = balancer.decide(view(rounds, placement, weights));
        assertThat(settled.gini()).isLessThan(0.05);
        assertThat(settled.moves()).isEmpty();
    }

    @Test
    void aPartitionMovedAsOftenAsFrictionAllowsStaysWhereItIs() {
        Balancer balancer = new Balancer(BalancerSettings.defaults());
        Map<Integer, Double> weights = Map.of(1, 4.0, 2, 1.5, 5, 1.5, 3, 0.5, 4, 0.5);
        int movesOfOne = 0;
        int blocked = 0;
        String heavy = "a";
        for (int round = 0; round < 10; round++) {
            // Whichever shard holds partition 1 is the heavy one, as when its load follows it.
            String light = heavy.equals("a") ? "b" : "a";
            Map<Integer, String> placement = Map.of(1, heavy, 2, heavy, 5, heavy, 3, light, 4, light);
            BalancerRound decided = balancer.decide(view(round, placement, weights));
            blocked += decided.blockedByFriction();
            for (BalancerDecision move : decided.moves()) {
                if (move.partition() == 1) {
                    movesOfOne++;
                    heavy = move.to();
                }
            }
        }
        assertThat(movesOfOne).isEqualTo(3);
        assertThat(blocked).isPositive();
    }

    @Test
    void anOverloadedShardGivesItsHeaviestPartitionToTheLightestShardThatStaysLighter() {
        Balancer balancer = new Balancer(BalancerSettings.defaults());
        Map<Integer, String> placement = Map.of(1, "a", 2, "a", 3, "b", 4, "c");
        Map<Integer, Double> weights = Map.of(1, 5.0, 2, 3.0, 3, 4.0, 4, 6.0);
        BalancerRound round = null;
        for (int i = 0; i < 3; i++) {
            // One spike is not enough: the median needs three samples.
            round = balancer.decide(new Balancer.View(START.plusSeconds(10L * i), placement, Set.of(), weights,
                    Map.of("a", 30.0, "b", 0.1, "c", 0.1)));
            if (i < 2) {
                assertThat(round.overloaded()).isEmpty();
            }
        }
        assertThat(round.overloaded()).containsExactly("a");
        assertThat(round.moves()).singleElement().satisfies(move -> {
            assertThat(move.reason()).isEqualTo(MoveReason.OVERLOAD);
            assertThat(move.partition()).isEqualTo(2);
            assertThat(move.to()).isEqualTo("b");
        });
    }

    @Test
    void aDrainedShardGivesUpEveryPartitionHeaviestFirstAndAffinityIsKept() {
        Balancer balancer = new Balancer(BalancerSettings.defaults().withAffinity(Map.of(3, Set.of("c"))));
        balancer.drain("a");
        Map<Integer, String> placement = new HashMap<>(Map.of(1, "a", 2, "a", 3, "a", 4, "b", 5, "c"));
        Map<Integer, Double> weights = Map.of(1, 1.0, 2, 2.0, 3, 3.0, 4, 1.0, 5, 1.0);
        for (int round = 0; round < 5; round++) {
            balancer.decide(view(round, placement, weights)).moves().forEach(move -> {
                assertThat(move.reason()).isEqualTo(MoveReason.DRAIN);
                placement.put(move.partition(), move.to());
            });
        }
        assertThat(placement).doesNotContainValue("a").containsEntry(3, "c");
    }

    @Test
    void aDrainedShardsPartitionsGoToAnOverloadedShardOnlyWhenNoOtherMayTakeThem() {
        // Partition 2 may live only on "a" (drained) or "b" (overloaded); the others anywhere.
        Balancer balancer = new Balancer(BalancerSettings.defaults().withAffinity(Map.of(2, Set.of("a", "b"))));
        Map<Integer, String> placement = new HashMap<>(Map.of(1, "a", 2, "a", 3, "b", 4, "c"));
        // "b" is the lightest shard (loads 5, 4, 5: even enough that nothing moves), and overloaded.
        Map<Integer, Double> weights = Map.of(1, 3.0, 2, 2.0, 3, 4.0, 4, 5.0);
        Map<String, Double> lag = Map.of("a", 0.0, "b", 30.0, "c", 0.0);
        for (int round = 0; round < 3; round++) {
            assertThat(balancer.decide(new Balancer.View(START.plusSeconds(10L * round), placement, Set.of(), weights,
                    lag)).moves()).isEmpty();
        }
        balancer.drain("a");
        for (int round = 3; round < 8; round++) {
            BalancerRound decided = balancer.decide(new Balancer.View(START.plusSeconds(10L * round), placement,
                    Set.of(), weights, lag));
            assertThat(decided.overloaded()).containsExactly("b");
            decided.moves().forEach(move -> {
                assertThat(move.reason()).isEqualTo(MoveReason.DRAIN);
                placement.put(move.partition(), move.to());
            });
        }
        assertThat(placement).containsEntry(1, "c").containsEntry(2, "b").doesNotContainValue("a");
    }

    @Test
    void aDrainedShardGivesUpIdlePartitionsInBulk() {
        Balancer balancer = new Balancer(BalancerSettings.defaults());
        balancer.drain("a");
        Map<Integer, String> placement = new HashMap<>();
        Map<Integer, Double> weights = new HashMap<>();
        for (int p = 0; p < 40; p++) {
            placement.put(p, p < 30 ? "a" : "b");
        }
        weights.put(0, 5.0);
        weights.put(1, 3.0);
        BalancerRound round = balancer.decide(view(0, placement, weights));

        // The round's one move, the heaviest partition, and sixteen idle ones.
        assertThat(round.moves()).hasSize(1 + Balancer.IDLE_DRAIN_MOVES);
        assertThat(round.moves().stream().filter(move -> move.weight() > 0)).singleElement()
            .extracting(BalancerDecision::partition).isEqualTo(0);
        assertThat(round.moves()).allMatch(move -> move.reason() == MoveReason.DRAIN && move.to().equals("b"));
    }

    @Test
    void settingsOutOfRangeNameTheSetting() {
        assertThatThrownBy(() -> new BalancerSettings(Duration.ofSeconds(10), 1, Duration.ofSeconds(10),
                Duration.ofMinutes(1), 0.1, 0.2, 3, Duration.ofHours(1), Map.of()))
            .isInstanceOf(InvalidSettingException.class)
            .hasMessageContaining("balancer.gini-lower");
    }

    private static Balancer.View view(int round, Map<Integer, String> placement, Map<Integer, Double> weights) {
        Map<String, Double> lag = new HashMap<>();
        placement.values().forEach(shard -> lag.put(shard, 0.0));
        return new Balancer.View(START.plusSeconds(10L * round), placement, Set.of(), weights, lag);
    }

    private static Map<Integer, String> spread(int shards, int partitions) {
        Map<Integer, String> placement = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            placement.put(p, "s" + (p % shards));
        }
        return placement;
    }

    private static Map<Integer, Double> weights(int partitions, double weight) {
        Map<Integer, Double> weights = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            weights.put(p, weight);
        }
        return weights;
    }
}
