package io.pgqueue.internal.balance;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import io.pgqueue.balance.BalancerDecision;
import io.pgqueue.balance.BalancerRound;
import io.pgqueue.balance.BalancerSettings;
import io.pgqueue.balance.MoveReason;

/**
 * Decides, round after round, which partitions move between shards. What it does follows a
 * balancer that went through four versions in production, each fixing the last one's failure:
 * <ul>
 * <li><b>Weights, not timings.</b> A partition weighs what it brings: jobs enqueued and executed in
 * it (counted by whoever builds the {@link View}). Mean execution time is not used: it makes a
 * freshly started node, or a cold shard, look heavy.</li>
 * <li><b>Overload by median filter.</b> A shard is overloaded while the median, over the last
 * {@link BalancerSettings#overloadWindow()}, of the age of its oldest due job is above
 * {@link BalancerSettings#overloadLag()} (and it has at least three samples); a spike does not
 * count. Its heaviest partition, the likeliest cause, then leaves it for the least loaded shard
 * that is not overloaded, if that shard stays lighter than the overloaded one was: a move that
 * would turn the imbalance round invites the move back. An overloaded shard takes no partitions,
 * except a drained shard's when no other shard may take them.</li>
 * <li><b>Gini with hysteresis.</b> Without overload, balancing starts when the Gini index of the
 * shard loads rises above {@link BalancerSettings#giniUpper()} and stops when it falls below
 * {@link BalancerSettings#giniLower()}, like a thermostat; in between, whatever it was doing goes
 * on. Noise around one threshold does not flip it.</li>
 * <li><b>Friction.</b> A partition moved {@link BalancerSettings#frictionMoves()} times within
 * {@link BalancerSettings#frictionWindow()} does not move again until the oldest of those moves
 * leaves the window. A hot partition that overloads whichever shard holds it stops after that
 * many moves instead of bouncing between shards for good.</li>
 * </ul>
 * A move for evenness is only made if it narrows the gap between the two shards: the partition
 * moved weighs less than the difference of their loads, and of those the one closest to half of
 * it is chosen (ties: the lowest partition number), so decisions are deterministic. Shards being drained give
 * up every partition, heaviest first, at the same bounded rate; they are left out of the Gini
 * index, as they are emptied on purpose; their partitions that bring no jobs leave up to
 * {@value #IDLE_DRAIN_MOVES} per round besides the round's moves. Affinity limits where a
 * partition may go.
 * <p>
 * Not thread-safe: one round at a time.
 */
public final class Balancer {

    /**
     * What the balancer sees in a round.
     * @param at when
     * @param placement the shard of each partition
     * @param moving the partitions moving now (they stay where the placement says until they arrive)
     * @param weights the weight of each partition (missing: 0)
     * @param lagSeconds the overload signal of each shard that can give and take partitions: the age
     * of its oldest due job, in seconds; a shard missing here is left alone this round
     */
    public record View(Instant at, Map<Integer, String> placement, Set<Integer> moving, Map<Integer, Double> weights,
            Map<String, Double> lagSeconds) {

        /** Copies the maps. */
        public View {
            placement = Map.copyOf(placement);
            moving = Set.copyOf(moving);
            weights = Map.copyOf(weights);
            lagSeconds = Map.copyOf(lagSeconds);
        }
    }

    /**
     * Partitions without load a drained shard gives up per round besides the round's moves: they
     * shift no load, so a shard that holds hundreds of idle partitions empties in minutes.
     */
    static final int IDLE_DRAIN_MOVES = 16;

    private final BalancerSettings settings;

    private final Map<String, MedianFilter> signals = new HashMap<>();

    private final Map<Integer, Deque<Instant>> moves = new HashMap<>();

    private final Set<String> draining = new TreeSet<>();

    private boolean balancing;

    /**
     * @param settings how it decides
     */
    public Balancer(BalancerSettings settings) {
        this.settings = Objects.requireNonNull(settings, "settings");
    }

    /** @return how it decides */
    public BalancerSettings settings() {
        return this.settings;
    }

    /**
     * Starts draining a shard: its partitions leave it, at the balancer's pace, and none comes back.
     * @param shard the shard
     */
    public void drain(String shard) {
        this.draining.add(shard);
    }

    /**
     * Stops draining a shard: it takes partitions again.
     * @param shard the shard
     */
    public void undrain(String shard) {
        this.draining.remove(shard);
    }

    /** @return the shards being drained */
    public Set<String> draining() {
        return Set.copyOf(this.draining);
    }

    /** @return whether balancing by Gini index is on (the hysteresis flag) */
    public boolean balancing() {
        return this.balancing;
    }

    /**
     * Records a move made outside the balancer (by an operator), so that friction counts it.
     * @param partition the partition
     * @param at when
     */
    public void moved(int partition, Instant at) {
        this.moves.computeIfAbsent(partition, p -> new ArrayDeque<>()).addLast(at);
    }

    /**
     * Looks at the loads and decides this round's moves. The moves are counted for friction as
     * decided; the caller carries them out.
     * @param view what the balancer sees
     * @return what it found and decided
     */
    public BalancerRound decide(View view) {
        Instant at = view.at();
        Set<String> shards = new TreeSet<>(view.lagSeconds().keySet());
        shards.forEach(shard -> this.signals.computeIfAbsent(shard, s -> new MedianFilter(this.settings.overloadWindow()))
            .add(at, view.lagSeconds().get(shard)));
        this.signals.keySet().retainAll(shards);
        forgetOldMoves(at);

        Map<String, Double> loads = new TreeMap<>();
        shards.forEach(shard -> loads.put(shard, 0.0));
        Map<String, List<Integer>> held = new HashMap<>();
        view.placement().forEach((partition, shard) -> {
            if (loads.containsKey(shard)) {
                loads.merge(shard, weight(view, partition), Double::sum);
                held.computeIfAbsent(shard, s -> new ArrayList<>()).add(partition);
            }
        });
        double gini = gini(loads);
        if (gini > this.settings.giniUpper()) {
            this.balancing = true;
        }
        else if (gini < this.settings.giniLower()) {
            this.balancing = false;
        }
        Set<String> overloaded = new LinkedHashSet<>();
        shards.stream()
            .filter(shard -> !this.draining.contains(shard))
            .filter(shard -> this.signals.get(shard).size() >= 3
                    && this.signals.get(shard).median() > this.settings.overloadLag().toMillis() / 1000.0)
            .sorted(Comparator.comparingDouble((String shard) -> this.signals.get(shard).median()).reversed())
            .forEach(overloaded::add);

        Planner planner = new Planner(view, loads, held);
        // A drained shard's partitions that bring no jobs shift no load: they leave in bulk.
        for (int i = 0; i < IDLE_DRAIN_MOVES; i++) {
            Optional<BalancerDecision> idle = planner.drainOne(true, overloaded);
            if (idle.isEmpty()) {
                break;
            }
            moved(idle.get().partition(), at);
        }
        for (int i = 0; i < this.settings.movesPerRound(); i++) {
            Optional<BalancerDecision> move = planner.drainOne(false, overloaded).or(() -> planner.relieveOne(overloaded))
                .or(() -> this.balancing ? planner.evenOne(overloaded) : Optional.empty());
            if (move.isEmpty()) {
                break;
            }
            moved(move.get().partition(), at);
            if (move.get().reason() == MoveReason.GINI && move.get().giniAfter() < this.settings.giniLower()) {
                this.balancing = false;
            }
        }
        return new BalancerRound(at, Map.copyOf(loads), gini, this.balancing, Set.copyOf(overloaded),
                List.copyOf(planner.decisions), planner.blocked);
    }

    private static double weight(View view, int partition) {
        return view.weights().getOrDefault(partition, 0.0);
    }

    private double gini(Map<String, Double> loads) {
        List<Double> counted = new ArrayList<>();
        loads.forEach((shard, load) -> {
            if (!this.draining.contains(shard)) {
                counted.add(load);
            }
        });
        return Gini.of(counted);
    }

    private void forgetOldMoves(Instant at) {
        Instant oldest = at.minus(this.settings.frictionWindow());
        this.moves.values().forEach(times -> {
            while (!times.isEmpty() && !times.peekFirst().isAfter(oldest)) {
                times.removeFirst();
            }
        });
        this.moves.values().removeIf(Collection::isEmpty);
    }

    private boolean underFriction(int partition) {
        Deque<Instant> times = this.moves.get(partition);
        return times != null && times.size() >= this.settings.frictionMoves();
    }

    /** Plans one round's moves on a working copy of the loads. */
    private final class Planner {

        private final View view;

        private final Map<String, Double> loads;

        private final Map<String, List<Integer>> held;

        private final List<BalancerDecision> decisions = new ArrayList<>();

        private int blocked;

        Planner(View view, Map<String, Double> loads, Map<String, List<Integer>> held) {
            this.view = view;
            this.loads = new LinkedHashMap<>(loads);
            this.held = held;
        }

        /**
         * Moves the heaviest partition off a drained shard to the lightest shard that may take it and
         * is not overloaded; to an overloaded one only when no other may take it, so that a drain
         * still finishes.
         * @param idle whether to move only a partition that brings no jobs
         * @param overloaded the overloaded shards
         */
        Optional<BalancerDecision> drainOne(boolean idle, Set<String> overloaded) {
            List<String> targets = takers().stream()
                .sorted(Comparator.comparing(overloaded::contains))
                .toList();
            for (String source : Balancer.this.draining) {
                for (int partition : heaviestFirst(source)) {
                    if (idle && weight(this.view, partition) > 0) {
                        continue;
                    }
                    Optional<String> target = targets.stream()
                        .filter(shard -> Balancer.this.settings.allows(partition, shard))
                        .findFirst();
                    if (target.isPresent()) {
                        return Optional.of(apply(MoveReason.DRAIN, partition, source, target.get()));
                    }
                }
            }
            return Optional.empty();
        }

        /**
         * Moves the heaviest partition of the most overloaded shard that has one to give to the
         * lightest shard that is not overloaded and stays lighter than the source was: the likeliest
         * cause goes first.
         */
        Optional<BalancerDecision> relieveOne(Set<String> overloaded) {
            List<String> targets = takers().stream().filter(shard -> !overloaded.contains(shard)).toList();
            for (String source : overloaded) {
                List<Integer> partitions = heaviestFirst(source).stream().filter(p -> weight(this.view, p) > 0).toList();
                for (int partition : partitions) {
                    double weight = weight(this.view, partition);
                    Optional<String> target = targets.stream()
                        .filter(shard -> Balancer.this.settings.allows(partition, shard))
                        .filter(shard -> this.loads.get(shard) + weight < this.loads.get(source))
                        .findFirst();
                    if (target.isEmpty()) {
                        continue;
                    }
                    if (underFriction(partition)) {
                        this.blocked++;
                        continue;
                    }
                    return Optional.of(apply(MoveReason.OVERLOAD, partition, source, target.get()));
                }
            }
            return Optional.empty();
        }

        /** Moves a partition off the heaviest shard that has one to give. */
        Optional<BalancerDecision> evenOne(Set<String> overloaded) {
            List<String> byLoad = takers().stream().filter(shard -> !overloaded.contains(shard)).toList();
            for (int i = byLoad.size() - 1; i > 0; i--) {
                Optional<BalancerDecision> move = narrowing(MoveReason.GINI, byLoad.get(i), byLoad.subList(0, i));
                if (move.isPresent()) {
                    return move;
                }
            }
            return Optional.empty();
        }

        /**
         * The move from the source to the lightest target that narrows their gap most: the partition
         * closest to half the gap, below the whole gap. Partitions under friction are passed over.
         */
        private Optional<BalancerDecision> narrowing(MoveReason reason, String source, List<String> targets) {
            for (String target : targets) {
                double gap = this.loads.get(source) - this.loads.get(target);
                if (gap <= 0) {
                    continue;
                }
                List<Integer> candidates = movable(source).stream()
                    .filter(p -> Balancer.this.settings.allows(p, target))
                    .filter(p -> weight(this.view, p) > 0 && weight(this.view, p) < gap)
                    .sorted(Comparator.comparingDouble((Integer p) -> Math.abs(gap / 2 - weight(this.view, p)))
                        .thenComparing(Comparator.naturalOrder()))
                    .toList();
                for (int partition : candidates) {
                    if (underFriction(partition)) {
                        this.blocked++;
                        continue;
                    }
                    return Optional.of(apply(reason, partition, source, target));
                }
            }
            return Optional.empty();
        }

        private List<Integer> heaviestFirst(String shard) {
            return movable(shard).stream()
                .sorted(Comparator.comparingDouble((Integer p) -> weight(this.view, p)).reversed()
                    .thenComparing(Comparator.naturalOrder()))
                .toList();
        }

        /** Shards that may take partitions, lightest first. */
        private List<String> takers() {
            return this.loads.keySet().stream()
                .filter(shard -> !Balancer.this.draining.contains(shard))
                .sorted(Comparator.comparingDouble((String shard) -> this.loads.get(shard))
                    .thenComparing(Comparator.naturalOrder()))
                .toList();
        }

        private List<Integer> movable(String shard) {
            return this.held.getOrDefault(shard, List.of()).stream()
                .filter(p -> !this.view.moving().contains(p))
                .filter(p -> this.decisions.stream().noneMatch(d -> d.partition() == p))
                .toList();
        }

        private BalancerDecision apply(MoveReason reason, int partition, String from, String to) {
            double before = gini(this.loads);
            double weight = weight(this.view, partition);
            this.loads.merge(from, -weight, Double::sum);
            this.loads.merge(to, weight, Double::sum);
            this.held.get(from).remove(Integer.valueOf(partition));
            this.held.computeIfAbsent(to, s -> new ArrayList<>()).add(partition);
            BalancerDecision decision = new BalancerDecision(this.view.at(), reason, partition, from, to, weight, before,
                    gini(this.loads));
            this.decisions.add(decision);
            return decision;
        }
    }
}
