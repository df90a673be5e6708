package io.pgqueue.balance;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import io.pgqueue.InvalidSettingException;
import io.pgqueue.QueueDefaults;

/**
 * How the balancer decides. The defaults are {@link QueueDefaults}' {@code BALANCER_*} constants.
 *
 * @param interval how often it looks at the loads and decides (a round)
 * @param movesPerRound how many partitions it moves in a round at most
 * @param overloadLag the overload threshold: a shard is overloaded while the median, over
 * {@code overloadWindow}, of the age of its oldest due job is above this
 * @param overloadWindow the window of the median filter over the overload signal
 * @param giniUpper the Gini index of the shard loads above which balancing starts
 * @param giniLower the Gini index below which balancing stops again (hysteresis)
 * @param frictionMoves how many times a partition may move within {@code frictionWindow}
 * @param frictionWindow the friction window
 * @param affinity the shards each listed partition may live on; a partition not listed may live anywhere
 */
public record BalancerSettings(Duration interval, int movesPerRound, Duration overloadLag, Duration overloadWindow,
        double giniUpper, double giniLower, int frictionMoves, Duration frictionWindow,
        Map<Integer, Set<String>> affinity) {

    /**
     * Checks the settings.
     * @throws InvalidSettingException naming the setting that is out of range
     */
    public BalancerSettings {
        InvalidSettingException.positive(interval, "balancer.interval");
        InvalidSettingException.require(movesPerRound >= 1, "balancer.moves-per-round", movesPerRound,
                "must be at least 1");
        InvalidSettingException.positive(overloadLag, "balancer.overload-lag");
        InvalidSettingException.positive(overloadWindow, "balancer.overload-window");
        InvalidSettingException.require(giniUpper > 0 && giniUpper < 1, "balancer.gini-upper", giniUpper,
                "must be between 0 and 1");
        InvalidSettingException.require(giniLower >= 0 && giniLower < giniUpper, "balancer.gini-lower", giniLower,
                "must be at least 0 and below balancer.gini-upper (" + giniUpper + ")");
        InvalidSettingException.require(frictionMoves >= 1, "balancer.friction-moves", frictionMoves,
                "must be at least 1");
        InvalidSettingException.positive(frictionWindow, "balancer.friction-window");
        affinity = Map.copyOf(Objects.requireNonNull(affinity, "affinity"));
    }

    /** @return the default settings */
    public static BalancerSettings defaults() {
        return new BalancerSettings(QueueDefaults.BALANCER_INTERVAL, QueueDefaults.BALANCER_MOVES_PER_ROUND,
                QueueDefaults.BALANCER_OVERLOAD_LAG, QueueDefaults.BALANCER_OVERLOAD_WINDOW,
                QueueDefaults.BALANCER_GINI_UPPER, QueueDefaults.BALANCER_GINI_LOWER,
                QueueDefaults.BALANCER_FRICTION_MOVES, QueueDefaults.BALANCER_FRICTION_WINDOW, Map.of());
    }

    /**
     * @param frictionMoves moves allowed per window
     * @param frictionWindow the window
     * @return these settings with another friction
     */
    public BalancerSettings withFriction(int frictionMoves, Duration frictionWindow) {
        return new BalancerSettings(this.interval, this.movesPerRound, this.overloadLag, this.overloadWindow,
                this.giniUpper, this.giniLower, frictionMoves, frictionWindow, this.affinity);
    }

    /**
     * @param affinity the shards each listed partition may live on
     * @return these settings with that affinity
     */
    public BalancerSettings withAffinity(Map<Integer, Set<String>> affinity) {
        return new BalancerSettings(this.interval, this.movesPerRound, this.overloadLag, this.overloadWindow,
                this.giniUpper, this.giniLower, this.frictionMoves, this.frictionWindow, affinity);
    }

    /**
     * @param partition a partition
     * @param shard a shard
     * @return whether the partition may live on the shard
     */
    public boolean allows(int partition, String shard) {
        Set<String> allowed = this.affinity.get(partition);
        return allowed == null || allowed.contains(shard);
    }
}
