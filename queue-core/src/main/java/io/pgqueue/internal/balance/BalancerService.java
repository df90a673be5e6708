package io.pgqueue.internal.balance;

import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import io.pgqueue.QueueDefaults;
import io.pgqueue.balance.BalancerDecision;
import io.pgqueue.balance.BalancerLeader;
import io.pgqueue.balance.BalancerRound;
import io.pgqueue.balance.BalancerSettings;
import io.pgqueue.balance.MoveReason;
import io.pgqueue.balance.PartitionBalancer;
import io.pgqueue.balance.RecordedDecision;
import io.pgqueue.internal.lifecycle.PeriodicTasks;
import io.pgqueue.internal.observe.QueueStatsPoller;
import io.pgqueue.internal.shard.PartitionMap;
import io.pgqueue.internal.shard.PartitionMover;
import io.pgqueue.internal.shard.Shards;
import io.pgqueue.internal.store.BalancerStore;
import io.pgqueue.observe.QueueStats;
import io.pgqueue.observe.TaskStats;
import io.pgqueue.shard.ShardException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the {@link Balancer} on a sharded installation. Every node records the jobs it enqueued per
 * partition on the main shard once per interval; on nodes where the balancer is enabled, one node
 * at a time holds its lease (a row on the main shard, renewed every round) and, each round, shows
 * the balancer the partition map, the partitions' weights (jobs per second over the load window)
 * and each shard's overload signal (the age of its oldest due job, from the statistics), records
 * each decision, and moves the partition with {@link PartitionMover}. A node that takes the lease
 * over counts the moves recorded within the friction window. Unsharded, it does nothing.
 */
public final class BalancerService implements PartitionBalancer {

    private static final Logger log = LoggerFactory.getLogger(BalancerService.class);

    /** How long decisions are kept. */
    static final Duration DECISION_RETENTION = Duration.ofDays(7);

    private final Shards shards;

    private final BalancerStore store;

    private final QueueStatsPoller stats;

    private final PartitionLoad load;

    private final BalancerSettings settings;

    private final Duration loadWindow;

    private final String node;

    private final boolean enabled;

    private final Map<MoveReason, AtomicLong> moves = new EnumMap<>(MoveReason.class);

    private final AtomicLong blocked = new AtomicLong();

    private final AtomicLong failed = new AtomicLong();

    private volatile Balancer balancer;

    private volatile BalancerRound lastRound;

    private PeriodicTasks rounds;

    /**
     * @param shards the installation's shards
     * @param stats the statistics, for each shard's overload signal
     * @param load this node's job counts per partition ({@code null} unsharded)
     * @param settings how the balancer decides
     * @param loadWindow over how long the partitions' weights are measured
     * @param node this node's id, which holds the lease
     * @param enabled whether this node may run the balancer (every sharded node records its counts)
     */
    public BalancerService(Shards shards, QueueStatsPoller stats, PartitionLoad load, BalancerSettings settings,
            Duration loadWindow, String node, boolean enabled) {
        this.shards = shards;
        this.store = shards.main().stores().balancer();
        this.stats = stats;
        this.load = load;
        this.settings = settings;
        this.loadWindow = loadWindow;
        this.node = node;
        this.enabled = enabled;
        for (MoveReason reason : MoveReason.values()) {
            this.moves.put(reason, new AtomicLong());
        }
    }

    /** Starts recording counts and, if enabled, balancing; idempotent, and nothing unsharded. */
    public synchronized void start() {
        if (!this.shards.sharded() || this.rounds != null) {
            return;
        }
        Duration interval = this.settings.interval();
        this.rounds = new PeriodicTasks("pgqueue-balancer", QueueDefaults.MOVE_DRAIN_TIMEOUT,
                List.of(new PeriodicTasks.Task("balancer round", interval, interval, this::tick)));
        this.rounds.start();
        if (this.enabled) {
            log.info("pgqueue balancer enabled on node '{}': a round every {}, Gini {}–{}, friction {} moves per {}",
                    this.node, this.settings.interval(), this.settings.giniLower(), this.settings.giniUpper(),
                    this.settings.frictionMoves(), this.settings.frictionWindow());
        }
    }

    /** Stops (a round's move is interrupted), recording the last counts and giving the lease up; idempotent. */
    public void stop() {
        PeriodicTasks rounds;
        synchronized (this) {
            rounds = this.rounds;
            this.rounds = null;
        }
        if (rounds == null) {
            return;
        }
        rounds.stop();
        try {
            recordCounts();
            if (this.balancer != null) {
                this.store.resign(this.node);
            }
        }
        catch (RuntimeException ex) {
            log.debug("Could not record the last job counts or give the balancer's lease up: {}", ex.toString());
        }
    }

    /** One tick: record this node's counts, then, holding the lease, one round. */
    void tick() {
        try {
            recordCounts();
            if (!this.enabled) {
                return;
            }
            if (!this.store.lead(this.node, lease())) {
                if (this.balancer != null) {
                    log.info("pgqueue balancer: node '{}' no longer holds the lease", this.node);
                    this.balancer = null;
                }
                return;
            }
            if (this.balancer == null) {
                this.balancer = takeOver();
            }
            round(this.balancer);
        }
        catch (RuntimeException ex) {
            log.warn("pgqueue balancer round failed: {}", ex.toString());
        }
    }

    private Duration lease() {
        // Long enough to cover a round with its moves, each of which may wait out the drain timeout.
        return this.settings.interval().multipliedBy(3)
            .plus(QueueDefaults.MOVE_DRAIN_TIMEOUT.multipliedBy(this.settings.movesPerRound()));
    }

    private void recordCounts() {
        if (this.load == null) {
            return;
        }
        Map<Integer, Long> counts = this.load.take();
        try {
            this.store.addLoad(counts, this.settings.interval());
        }
        catch (RuntimeException ex) {
            this.load.giveBack(counts);
            throw ex;
        }
    }

    private Balancer takeOver() {
        Balancer fresh = new Balancer(this.settings);
        List<Map.Entry<Integer, Instant>> recent = this.store.movesSince(this.settings.frictionWindow());
        recent.forEach(move -> fresh.moved(move.getKey(), move.getValue()));
        log.info("pgqueue balancer runs on node '{}' ({} moves within the friction window)", this.node, recent.size());
        return fresh;
    }

    private void round(Balancer balancer) {
        Set<String> draining = new HashSet<>(this.store.draining());
        balancer.draining().stream().filter(shard -> !draining.contains(shard)).forEach(balancer::undrain);
        draining.forEach(balancer::drain);
        PartitionMap map = this.shards.refresh();
        Map<Integer, String> placement = new HashMap<>();
        for (int p = 0; p < map.partitions(); p++) {
            placement.put(p, map.shardOf(p));
        }
        double seconds = Math.max(1, this.loadWindow.toSeconds());
        Map<Integer, Double> weights = new HashMap<>();
        this.store.loads(this.loadWindow).forEach((partition, jobs) -> weights.put(partition, jobs / seconds));
        BalancerRound round = balancer.decide(new Balancer.View(Instant.now(), placement, Set.copyOf(map.moving()),
                weights, lagSeconds()));
        this.lastRound = round;
        this.blocked.addAndGet(round.blockedByFriction());
        for (BalancerDecision decision : round.moves()) {
            carryOut(decision);
        }
        this.store.prune(this.loadWindow.multipliedBy(2), DECISION_RETENTION);
    }

    /** Each reachable shard's age of its oldest due job; a shard whose statistics failed is left out. */
    private Map<String, Double> lagSeconds() {
        Map<String, QueueStats> perShard = this.stats.latest().shards();
        Map<String, Double> lag = new HashMap<>();
        for (Shards.Shard shard : this.shards.all()) {
            QueueStats stats = perShard.get(shard.name());
            if (stats != null && stats.error() == null) {
                lag.put(shard.name(), stats.tasks().values().stream().mapToDouble(TaskStats::lagSeconds).max().orElse(0));
            }
        }
        return lag;
    }

    private void carryOut(BalancerDecision decision) {
        long id = this.store.recordDecision(this.node, decision.reason().name(), decision.partition(), decision.from(),
                decision.to(), decision.weight(), decision.giniBefore(), decision.giniAfter());
        log.info("pgqueue balancer moves partition {} from shard '{}' to shard '{}' ({}; {} jobs/s; Gini {} -> {})",
                decision.partition(), decision.from(), decision.to(), decision.reason(),
                String.format(java.util.Locale.ROOT, "%.1f", decision.weight()),
                String.format(java.util.Locale.ROOT, "%.3f", decision.giniBefore()),
                String.format(java.util.Locale.ROOT, "%.3f", decision.giniAfter()));
        try {
            new PartitionMover(this.shards).move(decision.partition(), decision.to(), QueueDefaults.MOVE_DRAIN_TIMEOUT);
            this.store.finishDecision(id, true, null);
            this.moves.get(decision.reason()).incrementAndGet();
        }
        catch (ShardException ex) {
            this.failed.incrementAndGet();
            this.store.finishDecision(id, false, ex.getMessage());
            log.warn("pgqueue balancer could not move partition {}: {}", decision.partition(), ex.getMessage());
        }
    }

    @Override
    public void drain(String shard, boolean draining) {
        if (!this.shards.sharded() || this.shards.find(shard).isEmpty()) {
            throw new ShardException("There is no shard '" + shard + "'; shards are "
                    + this.shards.all().stream().map(Shards.Shard::name).toList());
        }
        this.store.setDraining(shard, draining);
        log.info("pgqueue shard '{}' {}", shard, draining ? "is drained by the balancer" : "takes partitions again");
    }

    /** @return whether the installation is sharded (else the service does nothing) */
    @Override
    public boolean sharded() {
        return this.shards.sharded();
    }

    @Override
    public boolean enabled() {
        return this.enabled;
    }

    /** @return whether this node runs the balancer now (holds its lease) */
    @Override
    public boolean leading() {
        return this.balancer != null;
    }

    /** @return the last round this node ran, if it ran one */
    @Override
    public Optional<BalancerRound> lastRound() {
        return Optional.ofNullable(this.lastRound);
    }

    /** @return moves this node carried out, by reason */
    @Override
    public Map<MoveReason, Long> moves() {
        Map<MoveReason, Long> counts = new EnumMap<>(MoveReason.class);
        this.moves.forEach((reason, count) -> counts.put(reason, count.get()));
        return counts;
    }

    /** @return moves this node's rounds passed over for friction */
    @Override
    public long blockedByFriction() {
        return this.blocked.get();
    }

    @Override
    public long failedMoves() {
        return this.failed.get();
    }

    @Override
    public BalancerSettings settings() {
        return this.settings;
    }

    @Override
    public Optional<BalancerLeader> leader() {
        return this.store.leader();
    }

    @Override
    public List<String> draining() {
        return this.store.draining();
    }

    @Override
    public List<RecordedDecision> recentDecisions(int limit) {
        return this.store.recentDecisions(limit);
    }

    /** @return the balancer's state on the main shard */
    public BalancerStore store() {
        return this.store;
    }
}
