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
import io.pgqueue.Rescuer;
import io.pgqueue.TaskRegistry;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.store.ControlStore;
import io.pgqueue.store.FencedResult;
import io.pgqueue.store.JobStore;
import io.pgqueue.store.Lease;
import io.pgqueue.store.NodeStore;
import io.pgqueue.store.QueueSchema;
import io.pgqueue.store.QueueStores;
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
 * their leases expire. Hung handlers, which ignored their timeout's interrupt and whose jobs are
 * rescued already, are not waited for.
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

    private final List<Producer> pools = new ArrayList<>();

    private final Map<String, Producer> poolsByChannel = new LinkedHashMap<>();

    private final Map<String, String> tasksByChannel = new LinkedHashMap<>();

    private final List<Executor> executors = new ArrayList<>();

    private final HeldJobs held;

    private final Completer completer;

    private final LeaseKeeper leaseKeeper;

    private final QueueEvents events;

    private final ControlStore controls;

    private final NotificationListener listener;

    private final Maintenance maintenance;

    private final ScheduledExecutorService timers = scheduler("pgqueue-timer");

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
        QueueConfig config = stores.config();
        DataSource dataSource = stores.dataSource();
        this.settings = settings;
        this.dataSource = dataSource;
        this.schema = config.schema();
        this.events = telemetry.events();
        this.controls = stores.controls();
        this.store = stores.jobs();
        this.nodes = stores.nodes();
        this.mapper = mapper;
        this.held = new HeldJobs(this.events);
        this.completer = new Completer(this.store, settings.lease(), settings.batchSizes().write(), new Writes(), this.events);
        this.maintenance = new Maintenance(this.store, this.nodes, config.retention(), settings,
                new Rescuer(this.store, settings.batchSizes().maintenance(), this.events));
        AttemptOutcomes outcomes = new AttemptOutcomes(TaskRegistry.of(tasks.stream().map(WorkerTask::definition).toList()));
        JobExecutor jobExecutor = new JobExecutor(tasks, mapper, outcomes, this.completer, this.timers, telemetry,
                settings.nodeId());
        Map<String, List<WorkerTask>> byPool = new LinkedHashMap<>();
        tasks.forEach(task -> byPool.computeIfAbsent(task.pool(), pool -> new ArrayList<>()).add(task));
        for (Map.Entry<String, List<WorkerTask>> entry : byPool.entrySet()) {
            // Room for a hung handler outside the slots per slot (see TaskSlot).
            int threads = 2 * entry.getValue().stream().mapToInt(WorkerTask::concurrency).sum();
            Executor executor = executors.create(entry.getKey(), threads);
            this.executors.add(executor);
            Producer pool = new Producer(entry.getKey(), entry.getValue(), settings, this.store, this.held, jobExecutor,
                    executor, this.events);
            this.pools.add(pool);
            for (WorkerTask task : entry.getValue()) {
                String channel = this.store.channel(task.name());
                this.poolsByChannel.put(channel, pool);
                this.tasksByChannel.put(channel, task.name());
            }
        }
        this.leaseKeeper = new LeaseKeeper(this.store, this.held, settings, this.completer,
                this.pools.stream().map(Producer::slots).toList());
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
        this.nodes.register(this.settings.nodeId(), WorkerSettings.hostName(), poolsJson());
        this.completer.start();
        refreshPaused();
        this.pools.forEach(Producer::start);
        this.listener.start();
        this.leaseKeeper.start();
        long heartbeat = this.settings.heartbeatInterval().toMillis();
        this.timers.scheduleWithFixedDelay(guard(this::nodeHeartbeat), heartbeat, heartbeat, TimeUnit.MILLISECONDS);
        long poll = this.settings.pollInterval().toMillis();
        this.timers.scheduleWithFixedDelay(guard(this::refreshPaused), poll, poll, TimeUnit.MILLISECONDS);
        this.maintenance.start();
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
            this.pools.forEach(Producer::stop);
            long deadline = System.nanoTime() + this.settings.shutdownTimeout().toNanos();
            boolean idle = true;
            for (Producer pool : this.pools) {
                idle &= pool.slots().awaitIdle(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            }
            if (!idle) {
                this.held.all().stream().filter(RunningJob::isRunning).forEach(job -> {
                    log.warn("Interrupting {} at shutdown", job);
                    job.interruptForShutdown();
                });
                for (Producer pool : this.pools) {
                    if (!pool.slots().awaitIdle(INTERRUPT_GRACE)) {
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
            this.leaseKeeper.stop();
            this.maintenance.stop();
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
        return this.pools.stream().map(Producer::state).toList();
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
        Producer pool = this.poolsByChannel.get(channel);
        if (pool != null) {
            pool.wake(this.tasksByChannel.get(channel));
        }
    }

    /** Applies what the completer's writes found to the held jobs and the pools. */
    private final class Writes implements Completer.Listener {

        @Override
        public void startsWritten(FencedResult result) {
            QueueWorkers.this.held.apply(result, QueueWorkers.this.completer);
        }

        @Override
        public void outcomesWritten(List<Lease> leases, FencedResult result) {
            QueueWorkers.this.held.written(leases, result.lost());
            QueueWorkers.this.pools.forEach(Producer::outcomesWritten);
        }

        /** A job went back to READY here (retry, re-run): look for it when it is due, not at the next poll. */
        @Override
        public void requeued(String task, Duration delay) {
            Producer pool = QueueWorkers.this.poolsByChannel.get(QueueWorkers.this.store.channel(task));
            if (pool == null || delay.compareTo(QueueWorkers.this.settings.pollInterval()) >= 0) {
                return;
            }
            if (delay.isZero()) {
                pool.wake(task);
            }
            else if (QueueWorkers.this.running) {
                QueueWorkers.this.timers.schedule(() -> pool.wake(task), delay.toNanos(), TimeUnit.NANOSECONDS);
            }
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
        for (Producer pool : this.pools) {
            pools.put(pool.name(), Map.of("tasks", List.copyOf(pool.tasks()), "capacity", pool.capacity()));
        }
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
