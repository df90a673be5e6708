package io.pgqueue.observe;

import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.pgqueue.EnqueueOutcome;
import io.pgqueue.JobState;
import io.pgqueue.RateLimit;
import io.pgqueue.TaskDefinition;
import io.pgqueue.worker.PoolState;

import static io.pgqueue.observe.QueueMeterNames.TAG_OUTCOME;
import static io.pgqueue.observe.QueueMeterNames.TAG_POOL;
import static io.pgqueue.observe.QueueMeterNames.TAG_STATE;
import static io.pgqueue.observe.QueueMeterNames.TAG_TASK;

/**
 * Binds the queue's gauges, and its counters at zero, to a {@link MeterRegistry} (names in
 * {@link QueueMeterNames}). The gauges read the cached aggregate statistics and the pools'
 * in-memory state, so a scrape never queries the database; the counters are registered for every
 * task and pool up front, so dashboards and alerts see each series from the start rather than after
 * its first event ({@link MicrometerQueueEvents} increments them).
 * <p>
 * The binder is immutable: start from {@link #NONE} and add what to measure, for example
 * <pre>{@code
 * QueueMeterBinder.NONE.withTasks(taskNames, poller::latest).withPools(poolTasks, workers::pools).bindTo(registry);
 * }</pre>
 * Like every Micrometer gauge, the gauges hold their state, this binder, weakly: keep a reference
 * to it for as long as they should report (a Spring bean is held by its context). Once it is
 * collected they report {@code NaN}, so a registry that outlives the queue does not keep the
 * statistics source or the pools alive.
 */
public final class QueueMeterBinder implements MeterBinder {

    /** Binds nothing; {@link #withTasks} and {@link #withPools} add what to measure. */
    public static final QueueMeterBinder NONE = new QueueMeterBinder(List.of(), null, Map.of(), List::of, List.of(),
            List.of());

    /** The job states that {@link QueueMeterNames#RESCUED} counts, in the order they are registered. */
    private static final List<JobState> RESCUED_STATES = List.of(JobState.READY, JobState.FAILED, JobState.CANCELLED);

    /** Counters tagged with the task alone. */
    private static final List<String> TASK_COUNTERS = List.of(QueueMeterNames.COMPLETED, QueueMeterNames.FAILED,
            QueueMeterNames.RETRIED, QueueMeterNames.CANCELLED, QueueMeterNames.LEASES_LOST,
            QueueMeterNames.DEADLINE_MISSED);

    private final List<String> tasks;

    private final Supplier<QueueStats> stats;

    /** Whether {@link #withTasks} gave a statistics source: binds the database gauges too. */
    private final boolean statistics;

    private final Map<String, List<String>> pools;

    private final Supplier<List<PoolState>> poolStates;

    /** The shards of a sharded queue, whose own gauges are bound; empty unsharded. */
    private final List<String> shards;

    /** The tasks with limits across nodes, whose limits and waiting jobs are bound. */
    private final List<TaskDefinition> limited;

    private QueueMeterBinder(List<String> tasks, Supplier<QueueStats> stats, Map<String, List<String>> pools,
            Supplier<List<PoolState>> poolStates, List<String> shards, List<TaskDefinition> limited) {
        this.shards = shards;
        this.limited = limited;
        this.tasks = tasks;
        this.stats = stats != null ? stats : () -> QueueStats.NONE;
        this.statistics = stats != null;
        this.pools = pools;
        this.poolStates = poolStates;
    }

    /**
     * Returns a binder that also binds, per task, the counters at zero and the gauges of the
     * aggregate statistics: jobs by state, lag and stuck leases; and the age of the database's
     * oldest transaction holding back cleanup.
     * @param tasks the names of the declared tasks
     * @param stats the latest statistics, read at each scrape (usually {@link QueueStatistics#latest()},
     * which never queries the database)
     * @return a new binder with these tasks and this statistics source in place of any earlier ones
     */
    public QueueMeterBinder withTasks(Collection<String> tasks, Supplier<QueueStats> stats) {
        return new QueueMeterBinder(List.copyOf(tasks), stats, this.pools, this.poolStates, this.shards, this.limited);
    }

    /**
     * Returns a binder that also binds, per pool, the gauges of its capacity, busy, hung and
     * buffered handlers and each task's prefetch depth, and the claim counters of its tasks at zero.
     * @param pools the pools this node runs, each with the names of its tasks
     * @param states the pools' current state, read at each scrape (empty before the workers start;
     * a pool missing from it reports zero)
     * @return a new binder with these pools in place of any earlier ones
     */
    public QueueMeterBinder withPools(Map<String, ? extends Collection<String>> pools, Supplier<List<PoolState>> states) {
        Map<String, List<String>> copy = new LinkedHashMap<>();
        pools.forEach((pool, tasks) -> copy.put(pool, List.copyOf(tasks)));
        return new QueueMeterBinder(this.tasks, this.statistics ? this.stats : null, copy, states, this.shards,
                this.limited);
    }

    /**
     * Returns a binder that also binds, per task with limits across nodes (global concurrency, rate),
     * the gauges of its limits and of its due jobs waiting on them, from the statistics given to
     * {@link #withTasks}.
     * @param definitions the declared tasks; those without limits across nodes are left out
     * @return a new binder with these tasks' limits in place of any earlier ones
     */
    public QueueMeterBinder withLimits(Collection<TaskDefinition> definitions) {
        return new QueueMeterBinder(this.tasks, this.statistics ? this.stats : null, this.pools, this.poolStates,
                this.shards, definitions.stream().filter(TaskDefinition::hasGlobalLimits).toList());
    }

    /**
     * Registers the meters of every task and pool this binder was given.
     * @param registry the registry to bind to
     */
    @Override
    public void bindTo(MeterRegistry registry) {
        if (this.statistics) {
            Gauge.builder(QueueMeterNames.OLDEST_TRANSACTION, this, binder -> {
                Duration age = binder.stats.get().oldestTransaction();
                return age == null ? Double.NaN : age.toMillis() / 1000.0;
            })
                .description("Seconds the database's oldest transaction holding back cleanup (VACUUM) has been open")
                .baseUnit("seconds")
                .register(registry);
            Gauge.builder(QueueMeterNames.WORKFLOWS_RUNNING, this,
                    binder -> binder.stats.get().workflows().getOrDefault("RUNNING", 0L))
                .description("Workflows running now, across all nodes")
                .register(registry);
            for (String reason : List.of("sleep", "signal")) {
                Gauge.builder(QueueMeterNames.JOBS_SUSPENDED, this,
                        binder -> binder.stats.get().suspended().getOrDefault(reason, 0L))
                    .description("Jobs of durable handlers suspended now, holding no thread: in a durable sleep, or "
                            + "waiting for a signal, across all nodes")
                    .tag(QueueMeterNames.TAG_REASON, reason)
                    .register(registry);
            }
            for (String state : List.of("COMPLETED", "FAILED", "CANCELLED")) {
                FunctionCounter.builder(QueueMeterNames.WORKFLOWS_FINISHED, this,
                        binder -> binder.stats.get().workflows().getOrDefault(state, 0L))
                    .description("Workflows that ended, across all nodes, since the queue's schema was created")
                    .tag(QueueMeterNames.TAG_OUTCOME, state.toLowerCase(Locale.ROOT))
                    .register(registry);
            }
        }
        for (String task : this.tasks) {
            bindTask(registry, task);
        }
        this.pools.forEach((pool, tasks) -> bindPool(registry, pool, tasks));
        if (this.statistics) {
            this.limited.forEach(definition -> bindLimits(registry, definition));
        }
        if (this.statistics) {
            for (String shard : this.shards) {
                bindShard(registry, shard);
            }
        }
    }

    /**
     * Returns a binder that also binds, per shard of a sharded queue, the gauges of its active
     * jobs and its lag, from the shard's own statistics ({@link QueueStats#shards()}).
     * @param shards the shards' names
     * @return a new binder with these shards in place of any earlier ones
     */
    public QueueMeterBinder withShards(Collection<String> shards) {
        return new QueueMeterBinder(this.tasks, this.statistics ? this.stats : null, this.pools, this.poolStates,
                List.copyOf(shards), this.limited);
    }

    private void bindShard(MeterRegistry registry, String shard) {
        Gauge.builder(QueueMeterNames.SHARD_JOBS, this, binder -> {
            QueueStats stats = binder.stats.get().shards().get(shard);
            return stats == null ? Double.NaN : stats.tasks().values().stream()
                .mapToLong(task -> task.ready() + task.scheduled() + task.starting() + task.running())
                .sum();
        })
            .description("Active jobs (READY, scheduled, STARTING, RUNNING) on the shard")
            .tag(QueueMeterNames.TAG_SHARD, shard)
            .register(registry);
        Gauge.builder(QueueMeterNames.SHARD_LAG, this, binder -> {
            QueueStats stats = binder.stats.get().shards().get(shard);
            return stats == null ? Double.NaN : stats.tasks().values().stream().mapToDouble(TaskStats::lagSeconds)
                .max().orElse(0);
        })
            .description("Seconds since the shard's oldest due READY job became due")
            .baseUnit("seconds")
            .tag(QueueMeterNames.TAG_SHARD, shard)
            .register(registry);
    }

    private void bindTask(MeterRegistry registry, String task) {
        counters(registry, task);
        jobs(registry, task, "ready", TaskStats::ready);
        jobs(registry, task, "scheduled", TaskStats::scheduled);
        jobs(registry, task, "starting", TaskStats::starting);
        jobs(registry, task, "running", TaskStats::running);
        jobs(registry, task, "failed", TaskStats::failed);
        Gauge.builder(QueueMeterNames.LAG, this, binder -> binder.task(task).lagSeconds())
            .description("Seconds since the oldest due READY job became due")
            .baseUnit("seconds")
            .tag(TAG_TASK, task)
            .register(registry);
        Gauge.builder(QueueMeterNames.STUCK, this, binder -> binder.task(task).stuck())
            .description("Claimed jobs past their lease deadline, not yet rescued")
            .tag(TAG_TASK, task)
            .register(registry);
    }

    private void bindLimits(MeterRegistry registry, TaskDefinition definition) {
        String task = definition.name();
        if (definition.globalConcurrency() > 0) {
            Gauge.builder(QueueMeterNames.TASK_LIMIT, this, binder -> definition.globalConcurrency())
                .description("A task's limit across nodes: jobs running at once, or starts per second")
                .tags(TAG_TASK, task, QueueMeterNames.TAG_LIMIT, "concurrency")
                .register(registry);
        }
        RateLimit rate = definition.rateLimit();
        if (rate != null) {
            Gauge.builder(QueueMeterNames.TASK_LIMIT, this, binder -> rate.permits() * 1000.0 / rate.period().toMillis())
                .description("A task's limit across nodes: jobs running at once, or starts per second")
                .tags(TAG_TASK, task, QueueMeterNames.TAG_LIMIT, "rate")
                .register(registry);
        }
        Gauge.builder(QueueMeterNames.WAITING_ON_LIMIT, this,
                binder -> LimitStatus.of(definition, binder.task(task)).waitingJobs())
            .description("Due READY jobs waiting on their task's limit across nodes")
            .tag(TAG_TASK, task)
            .register(registry);
    }

    private static void counters(MeterRegistry registry, String task) {
        for (String name : TASK_COUNTERS) {
            registry.counter(name, TAG_TASK, task);
        }
        for (EnqueueOutcome outcome : EnqueueOutcome.values()) {
            String tag = outcome.name().toLowerCase(Locale.ROOT);
            registry.counter(QueueMeterNames.ENQUEUED, TAG_TASK, task, TAG_OUTCOME, tag);
            if (outcome != EnqueueOutcome.CREATED && outcome != EnqueueOutcome.RELAYED) {
                registry.counter(QueueMeterNames.DEDUPLICATED, TAG_TASK, task, TAG_OUTCOME, tag);
            }
        }
        for (JobState state : RESCUED_STATES) {
            registry.counter(QueueMeterNames.RESCUED, TAG_TASK, task, TAG_STATE, state.name().toLowerCase(Locale.ROOT));
        }
    }

    private void jobs(MeterRegistry registry, String task, String state, ToDoubleFunction<TaskStats> value) {
        Gauge.builder(QueueMeterNames.JOBS, this, binder -> value.applyAsDouble(binder.task(task)))
            .description("Jobs by task and state")
            .tags(TAG_TASK, task, TAG_STATE, state)
            .register(registry);
    }

    private void bindPool(MeterRegistry registry, String pool, List<String> tasks) {
        poolGauge(registry, QueueMeterNames.POOL_CAPACITY, "Handler slots of a pool", pool, PoolState::capacity);
        poolGauge(registry, QueueMeterNames.POOL_BUSY, "Handlers holding a slot of a pool", pool, PoolState::busy);
        poolGauge(registry, QueueMeterNames.POOL_HUNG, "Handlers of a pool still running past their timeout", pool,
                PoolState::hung);
        poolGauge(registry, QueueMeterNames.POOL_BUFFERED, "Jobs claimed into a pool's buffer, not yet running", pool,
                PoolState::buffered);
        for (String task : tasks) {
            registry.counter(QueueMeterNames.CLAIMED, TAG_TASK, task, TAG_POOL, pool);
            Gauge.builder(QueueMeterNames.POOL_PREFETCH, this, binder -> {
                PoolState.Task state = binder.pool(pool).tasks().get(task);
                return state == null ? 0 : state.prefetchDepth();
            })
                .description("Prefetch depth the adaptive logic chose")
                .tags(TAG_POOL, pool, TAG_TASK, task)
                .register(registry);
        }
    }

    private void poolGauge(MeterRegistry registry, String name, String description, String pool,
            ToDoubleFunction<PoolState> value) {
        Gauge.builder(name, this, binder -> value.applyAsDouble(binder.pool(pool)))
            .description(description)
            .tag(TAG_POOL, pool)
            .register(registry);
    }

    private TaskStats task(String task) {
        return this.stats.get().task(task);
    }

    /** The pool's current state; an empty one before the workers start. */
    private PoolState pool(String name) {
        return this.poolStates.get()
            .stream()
            .filter(pool -> pool.name().equals(name))
            .findFirst()
            .orElse(new PoolState(name, 0, 0, 0, 0, Map.of()));
    }
}
