package io.pgqueue.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import io.pgqueue.AttemptOutcomes;
import io.pgqueue.QueueConfig;
import io.pgqueue.TaskRegistry;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.store.ControlStore;
import io.pgqueue.store.FencedResult;
import io.pgqueue.store.JobStore;
import io.pgqueue.store.NodeStore;
import io.pgqueue.store.QueueSchema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.ObjectMapper;

/**
 * The worker runtime of one node: its pools, the completer that writes outcomes in batches, the
 * lease keeper, the notification listener, the rescuer and janitor, and the node's registration.
 * <p>
 * {@link #start()} and {@link #stop()} are idempotent; stop before start does nothing. Stopping is
 * graceful: claiming stops, buffered jobs go back to READY at once, running handlers get the
 * shutdown timeout to finish and are then interrupted (their jobs are retried at once), and every
 * outcome is written before the node deregisters. Jobs still running after that come back when
 * their leases expire.
 */
public final class QueueWorkers {

    private static final Logger log = LoggerFactory.getLogger(QueueWorkers.class);

    private static final Duration INTERRUPT_GRACE = Duration.ofSeconds(5);

    private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(10);

    private final WorkerSettings settings;

    private final JobStore store;

    private final DataSource dataSource;

    private final String schema;

    private final NodeStore nodes;

    private final ObjectMapper mapper;

    private final List<WorkerPool> pools = new ArrayList<>();

    private final Map<String, WorkerPool> poolsByChannel = new LinkedHashMap<>();

    private final Map<String, String> tasksByChannel = new LinkedHashMap<>();

    private final List<Executor> executors = new ArrayList<>();

    private final Completer completer;

    private final QueueEvents events;

    private final ControlStore controls;

    private final NotificationListener listener;

    private final Maintenance maintenance;

    private final ScheduledExecutorService timers = scheduler("pgqueue-timer");

    private final ScheduledExecutorService housekeeping = scheduler("pgqueue-maintenance");

    private boolean running;

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
        this.settings = settings;
        this.dataSource = dataSource;
        this.schema = config.schema();
        this.events = telemetry.events();
        this.controls = new ControlStore(dataSource, config);
        this.store = new JobStore(dataSource, config);
        this.nodes = new NodeStore(dataSource, config);
        this.mapper = mapper;
        this.completer = new Completer(this.store, settings.lease(), settings.batchSize(), this::onStarted,
                this::onRequeued, leases -> this.pools.forEach(pool -> {
                    leases.forEach(pool::written);
                    pool.outcomesWritten();
                }), this.events);
        this.maintenance = new Maintenance(this.store, this.nodes, config.completedRetention(), settings, this.events);
        AttemptOutcomes outcomes = new AttemptOutcomes(TaskRegistry.of(tasks.stream().map(WorkerTask::definition).toList()));
        Map<String, List<WorkerTask>> byPool = new LinkedHashMap<>();
        tasks.forEach(task -> byPool.computeIfAbsent(task.pool(), pool -> new ArrayList<>()).add(task));
        for (Map.Entry<String, List<WorkerTask>> entry : byPool.entrySet()) {
            int threads = entry.getValue().stream().mapToInt(WorkerTask::concurrency).sum();
            Executor executor = executors.create(entry.getKey(), threads);
            this.executors.add(executor);
            WorkerPool pool = new WorkerPool(entry.getKey(), entry.getValue(), settings.pool(entry.getKey()), settings,
                    this.store, mapper, outcomes, this.completer, executor, this.timers, telemetry);
            this.pools.add(pool);
            for (WorkerTask task : entry.getValue()) {
                String channel = this.store.channel(task.name());
                this.poolsByChannel.put(channel, pool);
                this.tasksByChannel.put(channel, task.name());
            }
        }
        this.listener = new NotificationListener(dataSource,
                settings.notifications() ? List.copyOf(this.poolsByChannel.keySet()) : List.of(), this::onNotification,
                () -> this.pools.forEach(pool -> pool.wake(null)));
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
        QueueSchema.requireMigrated(this.dataSource, this.schema);
        this.nodes.register(this.settings.nodeId(), host(), poolsJson());
        this.completer.start("pgqueue-completer");
        refreshPaused();
        this.pools.forEach(WorkerPool::start);
        this.listener.start();
        LeaseKeeper leaseKeeper = new LeaseKeeper(this.store, this.pools, this.settings, this.completer, this.events);
        long heartbeat = this.settings.heartbeatInterval().toMillis();
        this.timers.scheduleWithFixedDelay(guard(leaseKeeper), heartbeat, heartbeat, TimeUnit.MILLISECONDS);
        this.timers.scheduleWithFixedDelay(guard(this::nodeHeartbeat), heartbeat, heartbeat, TimeUnit.MILLISECONDS);
        long poll = this.settings.pollInterval().toMillis();
        this.timers.scheduleWithFixedDelay(guard(this::refreshPaused), poll, poll, TimeUnit.MILLISECONDS);
        every(this.settings.rescueInterval(), this.maintenance::rescue);
        every(this.settings.retentionInterval(), this.maintenance::purge);
        if (!this.settings.vacuumInterval().isZero()) {
            every(this.settings.vacuumInterval(), this.maintenance::vacuum);
        }
        this.running = true;
        log.info("pgqueue node '{}' started pools {}", this.settings.nodeId(),
                this.pools.stream().map(pool -> pool.name() + pool.tasks()).toList());
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
            this.listener.stop();
            for (WorkerPool pool : this.pools) {
                pool.stopFetching();
            }
            long deadline = System.nanoTime() + this.settings.shutdownTimeout().toNanos();
            boolean idle = true;
            for (WorkerPool pool : this.pools) {
                idle &= pool.awaitIdle(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            }
            if (!idle) {
                this.pools.forEach(WorkerPool::interruptRunning);
                for (WorkerPool pool : this.pools) {
                    if (!pool.awaitIdle(INTERRUPT_GRACE)) {
                        log.warn("Pool '{}' still has handlers running after their interrupt; their jobs return when "
                                + "their leases expire", pool.name());
                    }
                }
            }
            if (!this.completer.awaitDrained(DRAIN_TIMEOUT)) {
                log.warn("Not every outcome could be written before shutdown; those jobs return when their leases expire");
            }
            this.completer.stop();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        finally {
            this.timers.shutdownNow();
            this.housekeeping.shutdownNow();
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
        return this.pools.stream().map(WorkerPool::state).toList();
    }

    /** Reads which tasks operators paused; every node honours a pause within one poll interval. */
    private void refreshPaused() {
        try {
            java.util.Set<String> paused = this.controls.pausedTasks();
            this.pools.forEach(pool -> pool.setPaused(paused));
        }
        catch (RuntimeException ex) {
            log.debug("Could not read paused tasks: {}", ex.toString());
        }
    }

    private void onNotification(String channel) {
        WorkerPool pool = this.poolsByChannel.get(channel);
        if (pool != null) {
            pool.wake(this.tasksByChannel.get(channel));
        }
    }

    /** A job went back to READY here (retry, re-run): look for it when it is due, not at the next poll. */
    private void onRequeued(String task, Duration delay) {
        WorkerPool pool = this.poolsByChannel.get(this.store.channel(task));
        if (pool == null || delay.compareTo(this.settings.pollInterval()) >= 0) {
            return;
        }
        if (delay.isZero()) {
            pool.wake(task);
        }
        else if (this.running) {
            this.timers.schedule(() -> pool.wake(task), delay.toNanos(), TimeUnit.NANOSECONDS);
        }
    }

    private void onStarted(FencedResult result) {
        if (result.lost().isEmpty() && result.cancelRequested().isEmpty()) {
            return;
        }
        for (WorkerPool pool : this.pools) {
            List<RunningJob> held = pool.held().stream()
                .filter(job -> result.lost().contains(job.lease()) || result.cancelRequested().contains(job.jobId()))
                .toList();
            for (RunningJob job : held) {
                if (result.lost().contains(job.lease())) {
                    job.leaseLost = true;
                }
                else {
                    job.cancelRequested = true;
                }
            }
        }
    }

    private void nodeHeartbeat() {
        if (!this.nodes.heartbeat(this.settings.nodeId())) {
            // Removed as silent (e.g. after a long pause): register again.
            this.nodes.register(this.settings.nodeId(), host(), poolsJson());
        }
    }

    private void every(Duration interval, Runnable work) {
        long millis = interval.toMillis();
        this.housekeeping.scheduleWithFixedDelay(guard(work), millis, millis, TimeUnit.MILLISECONDS);
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
        for (WorkerPool pool : this.pools) {
            pools.put(pool.name(), Map.of("tasks", List.copyOf(pool.tasks()),
                    "capacity", pool.capacity(this.settings.pool(pool.name()))));
        }
        return this.mapper.writeValueAsString(pools);
    }

    private static String host() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        }
        catch (java.io.IOException ex) {
            return "unknown";
        }
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
