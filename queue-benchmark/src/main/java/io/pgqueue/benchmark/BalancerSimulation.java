package io.pgqueue.benchmark;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import io.pgqueue.balance.BalancerDecision;
import io.pgqueue.balance.BalancerRound;
import io.pgqueue.balance.BalancerSettings;
import io.pgqueue.internal.balance.Balancer;

/**
 * Runs the real {@link Balancer} against a simulated clock and simulated shards: no database, the
 * same result every time. Each shard serves its partitions' jobs at a fixed capacity; what it cannot
 * serve queues up, and the age of its oldest due job (queued jobs over capacity) is the overload
 * signal the balancer sees. A partition's weight is the jobs it brings per second. Moves take
 * effect at the next round.
 * <p>
 * Scenarios: {@code skew} (Zipf weights, most partitions on one shard), {@code hot} (one partition
 * overloads whichever shard holds it; {@code hot-baseline} balances it by moving a random partition
 * off the overloaded shard, with neither friction nor a check that the move helps), {@code drain} (a shard drained,
 * then given back), {@code down} (a shard unreachable for half an hour), {@code noise} (noisy
 * weights and lag spikes on an even placement). Each writes the Gini index and the moves over time
 * to {@code <out>/<scenario>.csv}, and all of them one SVG plot, {@code <out>/balancer-simulation.svg}.
 * <p>
 * {@code ./mvnw -q -pl queue-benchmark -am spring-boot:run -Dspring-boot.run.arguments="workload=balancer out=target/balancer"}
 */
public final class BalancerSimulation {

    /** Partitions of the simulated installation. */
    static final int PARTITIONS = 1024;

    /** Jobs per second a simulated shard serves. */
    static final double CAPACITY = 10_000;

    /**
     * One point of a run.
     * @param seconds seconds since the start
     * @param gini the Gini index of the shard loads
     * @param moves moves so far
     * @param blocked moves blocked by friction so far
     */
    record Point(long seconds, double gini, int moves, int blocked) {
    }

    /**
     * A finished run.
     * @param name the scenario
     * @param points one per round
     * @param movesOf moves per partition
     */
    record Run(String name, List<Point> points, Map<Integer, Integer> movesOf) {

        int moves() {
            return this.points.isEmpty() ? 0 : this.points.get(this.points.size() - 1).moves();
        }

        /** @return moves within each hour of the run */
        List<Integer> movesPerHour() {
            List<Integer> hours = new ArrayList<>();
            int before = 0;
            for (Point point : this.points) {
                int hour = (int) (point.seconds() / 3600);
                while (hours.size() <= hour) {
                    hours.add(0);
                }
                hours.set(hour, hours.get(hour) + point.moves() - before);
                before = point.moves();
            }
            return hours;
        }

        /** @return the first round (seconds) from which the Gini index stays below the bound, or -1 */
        long settledBelow(double bound) {
            long settled = -1;
            for (Point point : this.points) {
                if (point.gini() >= bound) {
                    settled = -1;
                }
                else if (settled < 0) {
                    settled = point.seconds();
                }
            }
            return settled;
        }

        double finalGini() {
            return this.points.get(this.points.size() - 1).gini();
        }
    }

    /** The simulated shards and partitions. */
    static final class Cluster {

        final Map<Integer, String> placement = new TreeMap<>();

        final Map<Integer, Double> weights = new HashMap<>();

        final Map<String, Double> backlog = new TreeMap<>();

        final Map<Integer, Integer> movesOf = new TreeMap<>();

        Cluster(List<String> shards) {
            shards.forEach(shard -> this.backlog.put(shard, 0.0));
        }

        double cost(String shard) {
            return this.placement.entrySet().stream().filter(e -> e.getValue().equals(shard))
                .mapToDouble(e -> this.weights.getOrDefault(e.getKey(), 0.0))
                .sum();
        }

        /** Serves one interval: each shard's backlog grows by what it could not serve. */
        void serve(Duration interval) {
            double seconds = interval.toMillis() / 1000.0;
            this.backlog.replaceAll((shard, queued) -> Math.max(0, queued + (cost(shard) - CAPACITY) * seconds));
        }

        double lagSeconds(String shard) {
            return this.backlog.get(shard) / CAPACITY;
        }
    }

    /** What changes the simulated world before a round. */
    interface World {

        /**
         * @param round the round, from 0
         * @param at the round's time
         * @param cluster the cluster
         * @param balancer the balancer
         * @param view the view about to be shown, to change (lag, weights, shards present)
         */
        void before(int round, Instant at, Cluster cluster, Balancer balancer, Map<String, Double> lag,
                Map<Integer, Double> weights);
    }

    private BalancerSimulation() {
    }

    /**
     * Runs a scenario.
     * @param name its name
     * @param settings the balancer's settings
     * @param cluster the simulated cluster at the start
     * @param duration how long
     * @param world what changes before each round
     * @return the run
     */
    static Run run(String name, BalancerSettings settings, Cluster cluster, Duration duration, World world) {
        Balancer balancer = new Balancer(settings);
        Instant start = Instant.parse("2026-01-01T00:00:00Z");
        List<Point> points = new ArrayList<>();
        int moves = 0;
        int blocked = 0;
        long rounds = duration.toMillis() / settings.interval().toMillis();
        for (int round = 0; round < rounds; round++) {
            Instant at = start.plus(settings.interval().multipliedBy(round));
            cluster.serve(settings.interval());
            Map<String, Double> lag = new TreeMap<>();
            cluster.backlog.keySet().forEach(shard -> lag.put(shard, cluster.lagSeconds(shard)));
            Map<Integer, Double> weights = new HashMap<>(cluster.weights);
            world.before(round, at, cluster, balancer, lag, weights);
            BalancerRound decided = balancer.decide(new Balancer.View(at, cluster.placement, Set.of(), weights, lag));
            for (BalancerDecision move : decided.moves()) {
                cluster.placement.put(move.partition(), move.to());
                cluster.movesOf.merge(move.partition(), 1, Integer::sum);
            }
            moves += decided.moves().size();
            blocked += decided.blockedByFriction();
            points.add(new Point(Duration.between(start, at).toSeconds(), decided.gini(), moves, blocked));
        }
        return new Run(name, points, cluster.movesOf);
    }

    static List<String> shards(int count) {
        List<String> shards = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            shards.add("s" + i);
        }
        return shards;
    }

    /** Zipf weights (exponent 1) in a shuffled order, most partitions on the first shard. */
    static Run skew() {
        Cluster cluster = new Cluster(shards(4));
        List<Integer> ranks = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++) {
            ranks.add(p);
        }
        java.util.Collections.shuffle(ranks, new Random(42));
        double harmonic = 0;
        for (int r = 1; r <= PARTITIONS; r++) {
            harmonic += 1.0 / r;
        }
        double total = 1.6 * CAPACITY;
        for (int p = 0; p < PARTITIONS; p++) {
            cluster.weights.put(p, total / harmonic / (ranks.get(p) + 1));
            cluster.placement.put(p, p < 512 ? "s0" : p < 768 ? "s1" : p < 896 ? "s2" : "s3");
        }
        return run("skew", BalancerSettings.defaults(), cluster, Duration.ofHours(2), (r, at, c, b, lag, w) -> {
        });
    }

    /**
     * An even start; partition 7 brings more jobs than any shard serves, so whichever shard holds it
     * is overloaded for good. Balanced by the real balancer, or by the baseline that moves a random
     * partition off the overloaded shard to the least loaded one, with neither friction nor a check
     * that the move helps.
     */
    static Run hot(String name, boolean baseline) {
        Cluster cluster = even(4, 0.5);
        cluster.weights.put(7, 1.2 * CAPACITY);
        if (!baseline) {
            return run(name, BalancerSettings.defaults(), cluster, Duration.ofHours(4), (r, at, c, b, lag, w) -> {
            });
        }
        return runBaseline(name, cluster, Duration.ofHours(4));
    }

    /** The baseline balancer: a random partition off the most overloaded shard, by median filter. */
    private static Run runBaseline(String name, Cluster cluster, Duration duration) {
        BalancerSettings settings = BalancerSettings.defaults();
        Random random = new Random(11);
        Map<String, java.util.Deque<double[]>> samples = new HashMap<>();
        Instant start = Instant.parse("2026-01-01T00:00:00Z");
        List<Point> points = new ArrayList<>();
        int moves = 0;
        long rounds = duration.toMillis() / settings.interval().toMillis();
        for (int round = 0; round < rounds; round++) {
            long seconds = round * settings.interval().toSeconds();
            cluster.serve(settings.interval());
            String worst = null;
            double worstMedian = settings.overloadLag().toSeconds();
            for (String shard : cluster.backlog.keySet()) {
                java.util.Deque<double[]> window = samples.computeIfAbsent(shard, s -> new java.util.ArrayDeque<>());
                window.addLast(new double[] { seconds, cluster.lagSeconds(shard) });
                while (window.peekFirst()[0] < seconds - settings.overloadWindow().toSeconds()) {
                    window.removeFirst();
                }
                double[] values = window.stream().mapToDouble(sample -> sample[1]).sorted().toArray();
                double median = values[values.length / 2];
                if (values.length >= 3 && median > worstMedian) {
                    worst = shard;
                    worstMedian = median;
                }
            }
            String source = worst;
            List<Integer> held = source == null ? List.of() : cluster.placement.entrySet().stream()
                .filter(e -> e.getValue().equals(source)).map(Map.Entry::getKey).toList();
            if (!held.isEmpty()) {
                String target = cluster.backlog.keySet().stream().filter(shard -> !shard.equals(source))
                    .min(java.util.Comparator.comparingDouble(cluster::cost)).orElseThrow();
                int partition = held.get(random.nextInt(held.size()));
                cluster.placement.put(partition, target);
                cluster.movesOf.merge(partition, 1, Integer::sum);
                moves++;
            }
            Map<String, Double> loads = new TreeMap<>();
            cluster.backlog.keySet().forEach(shard -> loads.put(shard, cluster.cost(shard)));
            points.add(new Point(seconds, io.pgqueue.internal.balance.Gini.of(loads.values()), moves, 0));
        }
        return new Run(name, points, cluster.movesOf);
    }

    /** An even start; shard s3 drained for an hour, then given back. */
    static Run drain() {
        Cluster cluster = even(4, 0.5);
        return run("drain", BalancerSettings.defaults(), cluster, Duration.ofHours(3), (round, at, c, balancer, lag, w) -> {
            if (round == 0) {
                balancer.drain("s3");
            }
            if (round == 360) {
                balancer.undrain("s3");
            }
        });
    }

    /** An even start; shard s3 unreachable from minute 10 to minute 40. */
    static Run down() {
        Cluster cluster = even(4, 0.5);
        return run("down", BalancerSettings.defaults(), cluster, Duration.ofHours(1), (round, at, c, balancer, lag, w) -> {
            if (round >= 60 && round < 240) {
                lag.remove("s3");
            }
        });
    }

    /**
     * An even start; weights with 10 % noise each round, and lag spikes of 30 s in one round in
     * ten (never two rounds running), on every shard.
     */
    static Run noise() {
        Cluster cluster = even(4, 0.6);
        Random random = new Random(7);
        Set<String> spiked = new java.util.HashSet<>();
        return run("noise", BalancerSettings.defaults(), cluster, Duration.ofHours(4), (round, at, c, balancer, lag, w) -> {
            w.replaceAll((p, weight) -> weight * Math.max(0, 1 + 0.1 * random.nextGaussian()));
            lag.replaceAll((shard, seconds) -> {
                boolean spike = !spiked.contains(shard + (round - 1)) && random.nextInt(10) == 0;
                if (spike) {
                    spiked.add(shard + round);
                }
                return spike ? seconds + 30 : seconds;
            });
        });
    }

    /** Partitions spread round-robin with equal weights, each shard at the given share of its capacity. */
    static Cluster even(int shards, double utilisation) {
        Cluster cluster = new Cluster(shards(shards));
        double weight = utilisation * CAPACITY * shards / PARTITIONS;
        for (int p = 0; p < PARTITIONS; p++) {
            cluster.weights.put(p, weight);
            cluster.placement.put(p, "s" + (p % shards));
        }
        return cluster;
    }

    /**
     * Runs every scenario, prints a summary and writes the CSV files and the plot.
     * @param argv {@code out=<directory>} (default {@code target/balancer})
     * @throws IOException if the files cannot be written
     */
    public static void main(String[] argv) throws IOException {
        Path out = Path.of("target/balancer");
        for (String arg : argv) {
            if (arg.startsWith("out=")) {
                out = Path.of(arg.substring(4));
            }
        }
        Files.createDirectories(out);
        Map<String, Run> runs = new LinkedHashMap<>();
        for (Run run : all()) {
            runs.put(run.name(), run);
            write(out.resolve(run.name() + ".csv"), run);
            System.out.printf(Locale.ROOT, "scenario=%s rounds=%d moves=%d moves_per_hour=%s gini_start=%.3f gini_end=%.3f "
                    + "settled_below_lower_s=%d blocked_by_friction=%d hot_partition_moves=%d%n", run.name(),
                    run.points().size(), run.moves(), run.movesPerHour(), run.points().get(0).gini(), run.finalGini(),
                    run.settledBelow(BalancerSettings.defaults().giniLower()),
                    run.points().get(run.points().size() - 1).blocked(), run.movesOf().getOrDefault(7, 0));
        }
        Files.writeString(out.resolve("balancer-simulation.svg"), SimulationPlot.svg(runs));
        System.out.println("wrote " + out.toAbsolutePath());
    }

    /** @return every scenario's run */
    static List<Run> all() {
        return List.of(skew(), hot("hot", false), hot("hot-baseline", true), drain(), down(), noise());
    }

    private static void write(Path file, Run run) throws IOException {
        StringBuilder csv = new StringBuilder("seconds,gini,moves,blocked_by_friction\n");
        run.points().forEach(point -> csv.append(String.format(Locale.ROOT, "%d,%.5f,%d,%d%n", point.seconds(),
                point.gini(), point.moves(), point.blocked())));
        Files.writeString(file, csv);
    }
}
