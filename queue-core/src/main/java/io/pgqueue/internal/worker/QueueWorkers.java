package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import io.pgqueue.JobInterceptor;
import io.pgqueue.PayloadEncryption;
import io.pgqueue.QueueConfig;
import io.pgqueue.TaskRegistry;
import io.pgqueue.internal.shard.Shards;
import io.pgqueue.internal.store.ControlStore;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.internal.store.NodeStore;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.internal.store.QueueStores;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.worker.PoolState;
import io.pgqueue.worker.WorkerExecutors;
import io.pgqueue.worker.WorkerSettings;
import io.pgqueue.worker.WorkerTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.ObjectMapper;

/**
 * The worker runtime of one node: its pools and, per shard ({@link ShardWorkers}), the producers
 * that claim from it, the completer that writes outcomes in batches, the lease keeper, the
 * notification listener, the rescuer and janitor; and the node's registration.
 * <p>
 * {@link #start()} and {@link #stop()} are idempotent; stop before start does nothing. Stopping is
 * graceful: claiming stops, buffered jobs go back to READY at once, running handlers get the
 * shutdown timeout to finish and are then interrupted (their jobs are retried at once), and every
 * outcome is written before the node deregisters. Jobs still running after that come back when
 * their leases expire. Hung handlers, which ignored their timeout's interrupt and whose jobs are
 * rescued already, are not waited for.
 */
public final class QueueWorkers {

    private static final Logger log = LoggerFactory.getLogger(QueueWorkers.class);

    private static final Duration INTERRUPT_GRACE = Duration.ofSeconds(5);

    private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(10);

    private final WorkerSettings settings;

    private final Shards shards;

    private final NodeStore nodes;

    private final ObjectMapper mapper;

    /** The pools' slots, by pool name: shared by the producers of every shard. */
    private final Map<String, PoolSlots> pools = new LinkedHashMap<>();

    private final List<ShardWorkers> shardWorkers = new ArrayList<>();

    private final List<Executor> executors = new ArrayList<>();

    private final HeldJobs held;

    /** Runs the attempts of every pool. */
    private final JobExecutor jobExecutor;

    private final QueueEvents events;

    private final ControlStore controls;

    private final ScheduledExecutorService timers = scheduler("pgqueue-timer");

    /** Tasks paused by an operator, as last read. */
    private volatile Set<String> paused = Set.of();

    private volatile boolean running;

    private boolean stopped;

    /**
     * Creates the runtime; nothing runs until {@link #start()}.
     * @param dataSource the queue's database
     * @param config the queue's settings
     * @param settings the worker settings
     * @param tasks the tasks this node runs
     * @param mapper the JSON mapper for payloads
     * @param executors creates the executor of each pool
     */
    public QueueWorkers(DataSource dataSource, QueueConfig config, WorkerSettings settings, Collection<WorkerTask> tasks,
            ObjectMapper mapper, WorkerExecutors executors) {
        this(dataSource, config, settings, tasks, mapper, executors, QueueTelemetry.NONE);
    }

    /**
     * Creates the runtime; nothing runs until {@link #start()}.
     * @param dataSource the queue's database
     * @param config the queue's settings
     * @param settings the worker settings
     * @param tasks the tasks this node runs
     * @param mapper the JSON mapper for payloads
     * @param executors creates the executor of each pool
     * @param telemetry where to report events (metrics) and execution observations (tracing)
     */
    public QueueWorkers(DataSource dataSource, QueueConfig config, WorkerSettings settings, Collection<WorkerTask> tasks,
            ObjectMapper mapper, WorkerExecutors executors, QueueTelemetry telemetry) {
        this(QueueStores.create(dataSource, config), settings, tasks, mapper, executors, telemetry);
    }

    /**
     * Creates the runtime on a queue's stores; nothing runs until {@link #start()}.
     * @param stores the stores of the queue's database
     * @param settings the worker settings
     * @param tasks the tasks this node runs
     * @param mapper the JSON mapper for payloads
     * @param executors creates the executor of each pool
     * @param telemetry where to report events (metrics) and execution observations (tracing)
     */
    public QueueWorkers(QueueStores stores, WorkerSettings settings, Collection<WorkerTask> tasks, ObjectMapper mapper,
            WorkerExecutors executors, QueueTelemetry telemetry) {
        this(Shards.unsharded(stores), settings, tasks, mapper, executors, telemetry, List.of(), PayloadEncryption.NONE);
    }

    /**
     * Creates the runtime on an installation's shards, claiming from each; nothing runs until
     * {@link #start()}. The pools' slots and handler threads are shared by the shards, so the jobs
     * the node holds are bounded per pool whatever the number of shards.
     * @param shards the installation's shards
     * @param settings the worker settings
     * @param tasks the tasks this node runs
     * @param mapper the JSON mapper for payloads
     * @param executors creates the executor of each pool
     * @param telemetry where to report events (metrics) and execution observations (tracing)
     * @param interceptors what wraps each attempt, outermost first
     * @param encryption decrypts the payloads that are encrypted
     */
    public QueueWorkers(Shards shards, WorkerSettings settings, Collection<WorkerTask> tasks, ObjectMapper mapper,
            WorkerExecutors executors, QueueTelemetry telemetry, List<JobInterceptor> interceptors,
            PayloadEncryption encryption) {
        QueueStores main = shards.main().stores();
        this.settings = settings;
        this.shards = shards;
        this.events = telemetry.events();
        this.controls = main.controls();
        this.nodes = main.nodes();
        this.mapper = mapper;
        this.held = new HeldJobs(this.events);
        AttemptOutcomes outcomes = new AttemptOutcomes(TaskRegistry.of(tasks.stream().map(WorkerTask::definition).toList()));
        JobExecutor jobExecutor = new JobExecutor(tasks, mapper, outcomes, new Recorders(), this.timers, telemetry,
                settings.nodeId(), interceptors, encryption);
        this.jobExecutor = jobExecutor;
        Map<String, List<WorkerTask>> byPool = new LinkedHashMap<>();
        tasks.forEach(task -> byPool.computeIfAbsent(task.pool(), pool -> new ArrayList<>()).add(task));
        for (Map.Entry<String, List<WorkerTask>> entry : byPool.entrySet()) {
            String pool = entry.getKey();
            // Room for a hung handler outside the slots per slot (see TaskSlot).
            int threads = 2 * entry.getValue().stream().mapToInt(WorkerTask::concurrency).sum();
            Executor executor = executors.create(pool, threads);
            this.executors.add(executor);
            this.pools.put(pool, new PoolSlots(pool, entry.getValue(), settings.pool(pool), this.held, jobExecutor, executor,
                    jobs -> ShardWorkers.handBack(pool, jobs, "buffered behind hung handlers", this.held)));
        }
        ShardWorkers.Shared shared = new ShardWorkers.Shared(settings, this.held, this.pools, this.events, this.timers,
                this.nodes, () -> this.shardWorkers.forEach(ShardWorkers::capacityFreed),
                shards.sharded() ? shards.main().partitions().mapChannel() : null, shards::refreshSoon);
        for (Shards.Shard shard : shards.all()) {
            this.shardWorkers.add(new ShardWorkers(shard.name(), shard == shards.main(), shard.stores(),
                    shards.limitShare(shard), shared));
        }
    }

    /** Records starts and outcomes with the completer of the shard each job was claimed from. */
    private final class Recorders implements JobExecutor.Recorder {

        @Override
        public void started(Lease lease) {
            completerOf(lease).started(lease);
        }

        @Override
        public void finished(Outcome outcome) {
            completerOf(outcome.lease()).finished(outcome);
        }

        private Completer completerOf(Lease lease) {
            List<ShardWorkers> all = QueueWorkers.this.shardWorkers;
            if (all.size() > 1) {
                RunningJob job = QueueWorkers.this.held.get(lease.jobId());
                if (job != null) {
                    return job.shard.completer();
                }
            }
            // Unsharded; or no longer held, when the write can only find the lease lost anyway.
            return all.get(0).completer();
        }
    }

    /**
     * Lets the durable handlers of this node spawn child jobs ({@link io.pgqueue.TaskContext#spawn})
     * through an enqueuer; without one, a spawn is refused.
     * @param spawner enqueues a child in its parent's partition
     */
    public void spawnChildrenWith(ChildSpawner spawner) {
        this.jobExecutor.spawnChildrenWith(spawner);
    }

    /** @return this node's id */
    public String nodeId() {
        return this.settings.nodeId();
    }

    /** @return whether the workers run */
    public synchronized boolean isRunning() {
        return this.running;
    }

    /**
     * Registers the node and starts claiming and running jobs.
     * @throws io.pgqueue.QueueSchemaException if the queue's schema is not migrated to this version
     */
    public synchronized void start() {
        if (this.running) {
            return;
        }
        if (this.stopped) {
            throw new IllegalStateException("Queue workers cannot be restarted once stopped; create new ones");
        }
        // Fail here, with what to do, rather than in every claim.
        for (Shards.Shard shard : this.shards.all()) {
            shard.stores().schema().requireMigrated();
        }
        this.nodes.register(this.settings.nodeId(), WorkerSettings.hostName(), poolsJson());
        refreshPaused();
        this.shardWorkers.forEach(ShardWorkers::start);
        long heartbeat = this.settings.heartbeatInterval().toMillis();
        this.timers.scheduleWithFixedDelay(guard(this::nodeHeartbeat), heartbeat, heartbeat, TimeUnit.MILLISECONDS);
        long poll = this.settings.pollInterval().toMillis();
        this.timers.scheduleWithFixedDelay(guard(this::refreshPaused), poll, poll, TimeUnit.MILLISECONDS);
        this.running = true;
        log.info("pgqueue node '{}' started pools {}{}", this.settings.nodeId(),
                this.pools.entrySet().stream().map(pool -> pool.getKey() + pool.getValue().tasks()).toList(),
                this.shards.sharded() ? " on shards " + this.shardWorkers.stream().map(ShardWorkers::name).toList() : "");
    }

    /**
     * Stops gracefully (see the class description). Blocks for up to the shutdown timeout plus a
     * few seconds.
     */
    public synchronized void stop() {
        if (!this.running) {
            return;
        }
        this.running = false;
        this.stopped = true;
        try {
            this.shardWorkers.forEach(ShardWorkers::stopClaiming);
            long deadline = System.nanoTime() + this.settings.shutdownTimeout().toNanos();
            boolean idle = true;
            for (PoolSlots pool : this.pools.values()) {
                idle &= pool.awaitIdle(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            }
            if (!idle) {
                this.held.all().stream().filter(RunningJob::isRunning).forEach(job -> {
                    log.warn("Interrupting {} at shutdown", job);
                    job.interruptForShutdown();
                });
                for (Map.Entry<String, PoolSlots> pool : this.pools.entrySet()) {
                    if (!pool.getValue().awaitIdle(INTERRUPT_GRACE)) {
                        log.warn("Pool '{}' still has handlers running after their interrupt; their jobs return when "
                                + "their leases expire", pool.getKey());
                    }
                }
            }
            long drainDeadline = System.nanoTime() + DRAIN_TIMEOUT.toNanos();
            for (ShardWorkers shard : this.shardWorkers) {
                if (!shard.drain(Duration.ofNanos(Math.max(0, drainDeadline - System.nanoTime())))) {
                    log.warn("Not every outcome could be written before shutdown{}; those jobs return when their "
                            + "leases expire", shard.describe());
                }
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        finally {
            this.shardWorkers.forEach(ShardWorkers::stopRest);
            this.timers.shutdownNow();
            for (Executor executor : this.executors) {
                shutdown(executor);
            }
            try {
                this.nodes.remove(this.settings.nodeId());
            }
            catch (RuntimeException ex) {
                log.warn("Could not deregister node '{}': {}", this.settings.nodeId(), ex.toString());
            }
            log.info("pgqueue node '{}' stopped", this.settings.nodeId());
        }
    }

    /** @return the state of each pool, for metrics and operators */
    public List<PoolState> pools() {
        Set<String> paused = this.paused;
        return this.pools.values().stream().map(pool -> pool.state(paused)).toList();
    }

    /** Reads which tasks operators paused; every node honours a pause within one poll interval. */
    private void refreshPaused() {
        try {
            Set<String> paused = this.controls.pausedTasks();
            this.paused = paused;
            this.shardWorkers.forEach(shard -> shard.setPaused(paused));
        }
        catch (RuntimeException ex) {
            log.debug("Could not read paused tasks: {}", ex.toString());
        }
    }

    private void nodeHeartbeat() {
        if (!this.nodes.heartbeat(this.settings.nodeId())) {
            // Removed as silent (e.g. after a long pause): register again.
            this.nodes.register(this.settings.nodeId(), WorkerSettings.hostName(), poolsJson());
        }
    }

    private static Runnable guard(Runnable work) {
        return () -> {
            try {
                work.run();
            }
            catch (RuntimeException ex) {
                log.warn("Periodic queue work failed: {}", ex.toString());
            }
        };
    }

    private String poolsJson() {
        Map<String, Object> pools = new LinkedHashMap<>();
        this.pools.forEach((name, pool) -> pools.put(name, Map.of("tasks", List.copyOf(pool.tasks()),
                "capacity", pool.capacity(this.settings.pool(name).maxPrefetch()))));
        return this.mapper.writeValueAsString(pools);
    }

    private static ScheduledExecutorService scheduler(String name) {
        ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, task -> {
            Thread thread = new Thread(task, name);
            thread.setDaemon(true);
            return thread;
        });
        scheduler.setRemoveOnCancelPolicy(true);
        return scheduler;
    }

    private static void shutdown(Executor executor) {
        try {
            if (executor instanceof ExecutorService service) {
                service.shutdownNow();
            }
            else if (executor instanceof AutoCloseable closeable) {
                closeable.close();
            }
        }
        catch (Exception ex) {
            log.debug("Could not shut down a worker executor: {}", ex.toString());
        }
    }
}
