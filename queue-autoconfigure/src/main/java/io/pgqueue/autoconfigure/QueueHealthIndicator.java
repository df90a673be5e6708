package io.pgqueue.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;

import io.pgqueue.TaskDefinition;
import io.pgqueue.message.CountedQueues;
import io.pgqueue.observe.LimitStatus;
import io.pgqueue.observe.QueueStatistics;
import io.pgqueue.observe.QueueStats;
import io.pgqueue.observe.TaskStats;
import io.pgqueue.worker.PoolState;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.core.NestedExceptionUtils;

/**
 * The {@code queue} health: reads the cached aggregate statistics and this node's pools, never the
 * database itself.
 * DOWN when the statistics cannot be read (database unreachable, schema missing) or are stale; the
 * configured status when stuck leases exceed their limit for longer than one rescue interval, a
 * task's oldest due job is older than its maximum lag, or a transaction has held back cleanup of the
 * database longer than {@code pgqueue.health.max-transaction-age}. Details name the offending tasks.
 * Handlers of this node still running past their timeout are listed per task whatever the status:
 * their jobs are rescued and run again, but their threads need an operator (a thread dump, a fix
 * in the handler, a restart).
 */
public class QueueHealthIndicator extends AbstractHealthIndicator {

    private final QueueStatistics stats;

    private final int maxStuckLeases;

    private final Duration rescueInterval;

    private final Function<String, Duration> maxLag;

    private final Duration maxTransactionAge;

    private final Status problem;

    private final Supplier<List<PoolState>> pools;

    private final Supplier<Optional<CountedQueues>> messageCounts;

    private final Function<String, Optional<TaskDefinition>> definitions;

    private Instant stuckSince;

    /**
     * Creates the indicator.
     * @param stats the statistics cache
     * @param maxStuckLeases stuck leases tolerated
     * @param rescueInterval how long stuck leases may exceed the limit before it counts
     * @param maxLag the maximum lag of each task
     * @param maxTransactionAge the oldest age of a transaction holding back cleanup tolerated
     * @param problem the status to report when limits are exceeded
     * @param pools the state of this node's pools (empty without workers)
     */
    public QueueHealthIndicator(QueueStatistics stats, int maxStuckLeases, Duration rescueInterval,
            Function<String, Duration> maxLag, Duration maxTransactionAge, Status problem,
            Supplier<List<PoolState>> pools) {
        this(stats, maxStuckLeases, rescueInterval, maxLag, maxTransactionAge, problem, pools, Optional::empty);
    }

    /**
     * Creates the indicator, with the message queues' latest counts among its details.
     * @param stats the statistics cache
     * @param maxStuckLeases stuck leases tolerated
     * @param rescueInterval how long stuck leases may exceed the limit before it counts
     * @param maxLag the maximum lag of each task
     * @param maxTransactionAge the oldest age of a transaction holding back cleanup tolerated
     * @param problem the status to report when limits are exceeded
     * @param pools the state of this node's pools (empty without workers)
     * @param messageCounts the latest count of the message queues' messages, if taken
     */
    public QueueHealthIndicator(QueueStatistics stats, int maxStuckLeases, Duration rescueInterval,
            Function<String, Duration> maxLag, Duration maxTransactionAge, Status problem,
            Supplier<List<PoolState>> pools, Supplier<Optional<CountedQueues>> messageCounts) {
        this(stats, maxStuckLeases, rescueInterval, maxLag, maxTransactionAge, problem, pools, messageCounts,
                task -> Optional.empty());
    }

    /**
     * Creates the indicator, knowing the tasks' limits across nodes: a task whose due jobs wait on
     * its own global concurrency or rate is not lagging while the limit explains its lag; it is
     * listed under {@code waitingOnLimit} with the reason.
     * @param stats the statistics cache
     * @param maxStuckLeases stuck leases tolerated
     * @param rescueInterval how long stuck leases may exceed the limit before it counts
     * @param maxLag the maximum lag of each task
     * @param maxTransactionAge the oldest age of a transaction holding back cleanup tolerated
     * @param problem the status to report when limits are exceeded
     * @param pools the state of this node's pools (empty without workers)
     * @param messageCounts the latest count of the message queues' messages, if taken
     * @param definitions the definition of a task, with its limits, if declared here
     */
    public QueueHealthIndicator(QueueStatistics stats, int maxStuckLeases, Duration rescueInterval,
            Function<String, Duration> maxLag, Duration maxTransactionAge, Status problem,
            Supplier<List<PoolState>> pools, Supplier<Optional<CountedQueues>> messageCounts,
            Function<String, Optional<TaskDefinition>> definitions) {
        super("Queue health check failed");
        this.definitions = definitions;
        this.messageCounts = messageCounts;
        this.stats = stats;
        this.maxStuckLeases = maxStuckLeases;
        this.rescueInterval = rescueInterval;
        this.maxLag = maxLag;
        this.maxTransactionAge = maxTransactionAge;
        this.problem = problem;
        this.pools = pools;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        Map<String, Integer> hung = hungHandlers();
        if (!hung.isEmpty()) {
            builder.withDetail("hungHandlers", hung);
        }
        QueueStats latest = this.stats.latest();
        if (latest.error() != null) {
            Throwable cause = NestedExceptionUtils.getMostSpecificCause(latest.error());
            builder.down().withDetail("error", cause.getMessage() == null ? cause.toString() : cause.getMessage());
            List<String> downShards = latest.shards().entrySet().stream()
                .filter(shard -> shard.getValue().error() != null)
                .map(Map.Entry::getKey)
                .toList();
            if (!downShards.isEmpty()) {
                builder.withDetail("downShards", downShards);
            }
            if (latest.takenAt() != null) {
                builder.withDetail("statsTakenAt", latest.takenAt());
            }
            return;
        }
        if (latest.takenAt() == null) {
            builder.unknown().withDetail("reason", "Queue statistics not read yet");
            return;
        }
        Duration age = Duration.between(latest.takenAt(), Instant.now());
        if (age.compareTo(this.stats.interval().multipliedBy(3).plusSeconds(5)) > 0) {
            builder.down().withDetail("reason", "Queue statistics are " + age.toSeconds() + " s old")
                .withDetail("statsTakenAt", latest.takenAt());
            return;
        }
        Map<String, Long> stuck = new LinkedHashMap<>();
        Map<String, Double> lagging = new LinkedHashMap<>();
        Map<String, String> waiting = new LinkedHashMap<>();
        long totalStuck = 0;
        for (Map.Entry<String, TaskStats> entry : latest.tasks().entrySet()) {
            TaskStats task = entry.getValue();
            if (task.stuck() > 0) {
                stuck.put(entry.getKey(), task.stuck());
                totalStuck += task.stuck();
            }
            LimitStatus limit = this.definitions.apply(entry.getKey())
                .map(definition -> LimitStatus.of(definition, task))
                .orElse(LimitStatus.NONE);
            double maxLagSeconds = this.maxLag.apply(entry.getKey()).toMillis() / 1000.0;
            if (limit.waiting()) {
                waiting.put(entry.getKey(), limit.reason());
            }
            if (task.lagSeconds() > maxLagSeconds && !limit.explains(task.lagSeconds(), maxLagSeconds)) {
                lagging.put(entry.getKey(), task.lagSeconds());
            }
        }
        boolean stuckTooLong = stuckTooLong(totalStuck, latest.takenAt());
        builder.withDetail("statsTakenAt", latest.takenAt());
        if (stuckTooLong) {
            builder.withDetail("stuckLeases", stuck);
        }
        if (!lagging.isEmpty()) {
            builder.withDetail("lagSeconds", lagging);
        }
        if (!waiting.isEmpty()) {
            builder.withDetail("waitingOnLimit", waiting);
        }
        Duration oldest = latest.oldestTransaction();
        boolean holdingBack = oldest != null && oldest.compareTo(this.maxTransactionAge) > 0;
        if (holdingBack) {
            builder.withDetail("oldestTransactionSeconds", oldest.toMillis() / 1000.0)
                .withDetail("oldestTransaction", "A transaction open for " + oldest.toSeconds() + " s holds back "
                        + "VACUUM of the job table: find it in pg_stat_activity (xact_start, backend_xmin) and end it");
        }
        this.messageCounts.get().filter(counted -> !counted.counts().isEmpty())
            .ifPresent(counted -> builder.withDetail("messageQueues", messageQueues(counted)));
        builder.status(stuckTooLong || !lagging.isEmpty() || holdingBack ? this.problem : Status.UP);
    }

    /** Per message queue, its counts: shown, never a reason to be unhealthy (a backlog is the consumers' matter). */
    static Map<String, Object> messageQueues(CountedQueues counted) {
        Map<String, Object> queues = new LinkedHashMap<>();
        counted.counts().forEach((name, counts) -> {
            Map<String, Object> each = new LinkedHashMap<>();
            each.put("visible", counts.visible());
            each.put("inFlight", counts.inFlight());
            each.put("delayed", counts.delayed());
            each.put("oldestAgeSeconds", counts.oldestAge().toMillis() / 1000.0);
            queues.put(name, each);
        });
        return queues;
    }

    /** @return per task, the handlers of this node still running past their timeout, where there are any */
    private Map<String, Integer> hungHandlers() {
        Map<String, Integer> hung = new LinkedHashMap<>();
        for (PoolState pool : this.pools.get()) {
            pool.tasks().forEach((task, state) -> {
                if (state.hung() > 0) {
                    hung.put(task, state.hung());
                }
            });
        }
        return hung;
    }

    private synchronized boolean stuckTooLong(long totalStuck, Instant takenAt) {
        if (totalStuck <= this.maxStuckLeases) {
            this.stuckSince = null;
            return false;
        }
        if (this.stuckSince == null) {
            this.stuckSince = takenAt;
        }
        return Duration.between(this.stuckSince, takenAt).compareTo(this.rescueInterval) >= 0;
    }
}
