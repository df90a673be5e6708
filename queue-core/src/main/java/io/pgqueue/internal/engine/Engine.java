package io.pgqueue.internal.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import io.pgqueue.QueueDefaults;
import io.pgqueue.TaskDefinition;
import io.pgqueue.internal.admin.BulkActions;
import io.pgqueue.internal.balance.BalancerService;
import io.pgqueue.internal.enqueue.DedupPolicies;
import io.pgqueue.internal.enqueue.Enqueuer;
import io.pgqueue.internal.message.MessageEngine;
import io.pgqueue.internal.observe.MessageHistoryRecorder;
import io.pgqueue.internal.observe.QueueStatsPoller;
import io.pgqueue.internal.observe.TaskHistoryRecorder;
import io.pgqueue.internal.result.JobAwaiter;
import io.pgqueue.internal.schedule.Scheduler;
import io.pgqueue.internal.shard.LimitShare;
import io.pgqueue.internal.shard.Shards;
import io.pgqueue.internal.store.ControlStore;
import io.pgqueue.internal.store.QueueStores;
import io.pgqueue.internal.store.StatsStore;
import io.pgqueue.internal.worker.QueueWorkers;
import io.pgqueue.internal.worker.Rescuer;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.worker.PoolState;
import io.pgqueue.worker.WorkerSettings;
import io.pgqueue.worker.WorkerTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine of one queue: it creates the stores of each of the queue's databases once (in its
 * {@link Shards}), the engine parts the public facades stand on, and runs every background service
 * from one ordered list. {@link #start()} starts the list in order; {@link #stop()} stops it in
 * reverse, each service even if another failed to stop:
 * <ol>
 * <li>shards: the partition count settled and, sharded, the partition map followed;</li>
 * <li>enqueue: the outbox relay (sharded); stopping ends the group commits and the awaits of job ends;</li>
 * <li>bulk actions: started by operators; stopping ends the running one after its batch, recorded as stopped;</li>
 * <li>statistics: the periodic aggregate behind metrics, health and the admin's counts;</li>
 * <li>message queues: listening for sends and housekeeping, if any message queue exists, and the writer of
 * this node's message counts to the message queues' history;</li>
 * <li>balancer: partition loads recorded and, where enabled, balanced (sharded);</li>
 * <li>workers: this node's pools, if it runs workers, and the writer of their figures to the task history;</li>
 * <li>scheduler: the schedules configured with this node's tasks written, and fired (with workers).</li>
 * </ol>
 * Steps 1 and 2 are what {@link #open()} runs: jobs can be routed from then on.
 */
public final class Engine {

    private static final Logger log = LoggerFactory.getLogger(Engine.class);

    private final EngineSettings settings;

    private final Shards shards;

    private final Enqueuer enqueuer;

    private final QueueStatsPoller stats;

    private final BalancerService balancer;

    private final MessageEngine messages;

    private final Scheduler scheduler;

    private final JobAwaiter awaiter;

    private final Rescuer rescuer;

    private final BulkActions bulkActions;

    private final TaskHistoryRecorder history;

    private final MessageHistoryRecorder messageHistory;

    /** The telemetry's events and the task history's recorder: what the worker runtime reports to. */
    private final QueueEvents events;

    private final List<Service> services;

    private QueueWorkers workers;

    /** The names of the tasks the workers run, once they started. */
    private List<String> workerTaskNames = List.of();

    /** How many of {@link #services} run, from the first. */
    private int started;

    /**
     * Creates the engine's stores and parts; nothing runs until {@link #start()}.
     * @param settings what it is built from
     * @throws io.pgqueue.shard.ShardException if the shards' databases do not form one installation
     */
    public Engine(EngineSettings settings) {
        this.settings = settings;
        QueueStores main = QueueStores.create(settings.dataSource(), settings.config(), !settings.shards().isEmpty());
        if (settings.shards().isEmpty()) {
            this.shards = Shards.unsharded(main);
        }
        else {
            Map<String, QueueStores> others = new LinkedHashMap<>();
            settings.shards().forEach((name, dataSource) -> others.put(name, QueueStores.create(dataSource, settings.config(), true)));
            this.shards = Shards.open(main, others, settings.partitions());
        }
        settings.tasks().all().forEach(task -> LimitShare.requireShareable(task, this.shards.all().size()));
        this.enqueuer = new Enqueuer(this.shards, settings.tasks(), settings.mapper(), settings.telemetry(),
                settings.interceptors(), settings.encryption());
        Map<String, StatsStore> statsStores = new LinkedHashMap<>();
        this.shards.all().forEach(shard -> statsStores.put(shard.name(), shard.stores().stats()));
        this.stats = new QueueStatsPoller(statsStores, settings.statsInterval());
        WorkerSettings workerSettings = settings.workerSettings();
        String node = workerSettings != null ? workerSettings.nodeId()
                : "client-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 8);
        this.balancer = new BalancerService(this.shards, this.stats, this.enqueuer.partitionLoad().orElse(null),
                settings.balancerSettings(), settings.balancerLoadWindow(), node, settings.balancerEnabled());
        this.messageHistory = new MessageHistoryRecorder(main.history(), settings.clock(), settings.messageEvents());
        this.messages = new MessageEngine(this.shards, this.enqueuer.partitionLoad().orElse(null), this.messageHistory,
                settings.statsInterval(), workerSettings != null ? workerSettings.vacuumInterval() : QueueDefaults.VACUUM_INTERVAL);
        this.scheduler = new Scheduler(main.schedules(), this.enqueuer, settings.tasks(), settings.mapper(), settings.clock(),
                workerSettings != null ? workerSettings.pollInterval() : QueueDefaults.POLL_INTERVAL);
        this.history = new TaskHistoryRecorder(main.history(), settings.clock());
        this.events = QueueEvents.of(List.of(settings.telemetry().events(), this.history));
        this.rescuer = new Rescuer(main.jobs(), workerSettings != null ? workerSettings.batchSizes().maintenance()
                : QueueDefaults.MAINTENANCE_BATCH_SIZE, this.events,
                settings.tasks().all().stream().filter(TaskDefinition::history).map(TaskDefinition::name).toList());
        this.awaiter = new JobAwaiter(() -> this.shards.all().stream().map(Shards.Shard::stores).toList(),
                this.enqueuer::storesOf, workerSettings != null ? workerSettings.pollInterval() : QueueDefaults.POLL_INTERVAL);
        this.bulkActions = new BulkActions(() -> this.shards.all().stream().map(shard -> shard.stores().jobs()).toList(),
                main.actions(), settings.telemetry().events(), node);
        List<ControlStore.DeclaredTask> declared = settings.tasks().all().stream().map(task -> new ControlStore.DeclaredTask(
                task.name(), task.priority(), task.maxAttempts(),
                task.delayTolerance() == null ? null : task.delayTolerance().toMillis(),
                DedupPolicies.nameOf(task.dedupPolicy()), task.dedupKey() != null, task.groups() != null,
                task.groups() != null && task.groups().key() != null, task.tags(), task.encrypted())).toList();
        this.services = List.of(
                new Service("shards", () -> {
                    this.shards.openUnsharded(settings.partitions());
                    this.shards.startRefreshing(QueueDefaults.PARTITION_MAP_REFRESH);
                }, this.shards::stopRefreshing),
                new Service("enqueue", () -> {
                    // The tasks' settings, for jobs enqueued from SQL (enqueue_job).
                    if (!main.controls().declare(declared, node)) {
                        log.warn("pgqueue could not write its tasks' settings for enqueue_job: schema '{}' has no table "
                                + "task_definition (it is not migrated to this release)", settings.config().schema());
                    }
                    if (this.shards.sharded()) {
                        this.enqueuer.relay();
                    }
                    this.awaiter.allowStart();
                }, () -> {
                    this.awaiter.stop();
                    this.enqueuer.close();
                }),
                new Service("bulk actions", () -> { }, this.bulkActions::stop),
                new Service("statistics", this.stats::start, this.stats::stop),
                new Service("message queues", () -> {
                    this.messages.startIfUsed();
                    this.messageHistory.start();
                }, () -> {
                    this.messages.stop();
                    this.messageHistory.stop();
                }),
                new Service("balancer", this.balancer::start, this.balancer::stop),
                new Service("workers", this::startWorkerPools, this::stopWorkers),
                new Service("scheduler", this::startScheduler, this.scheduler::stop));
    }

    /** The number of leading {@link #services} that {@link #open()} runs. */
    private static final int OPEN_SERVICES = 2;

    /**
     * Opens what routes jobs between shards, once: the first two services of the list.
     * @throws io.pgqueue.shard.ShardException if the queue's database coordinates shards this queue was not given
     */
    public synchronized void open() {
        startUpTo(OPEN_SERVICES);
    }

    /**
     * Starts every service not yet running, in the list's order; if one fails, those it started
     * are stopped again and the failure is thrown.
     */
    public synchronized void start() {
        startUpTo(this.services.size());
    }

    private void startUpTo(int count) {
        int from = this.started;
        try {
            while (this.started < count) {
                this.services.get(this.started).start().run();
                this.started++;
            }
        }
        catch (RuntimeException | Error ex) {
            stopDownTo(from);
            throw ex;
        }
    }

    /**
     * Stops every running service, in the list's reverse order; a failing stop is logged and the next
     * one runs. The message queues stop too when a call started them on a node that never started
     * its services.
     */
    public synchronized void stop() {
        stopDownTo(0);
        this.messages.stop();
    }

    private void stopDownTo(int count) {
        while (this.started > count) {
            Service service = this.services.get(--this.started);
            try {
                service.stop().run();
            }
            catch (RuntimeException ex) {
                log.warn("pgqueue's {} did not stop cleanly: {}", service.name(), ex.toString(), ex);
            }
        }
    }

    /**
     * Starts the workers and the scheduler, and what runs before them if it does not yet; on a node
     * that runs no workers it starts the rest only.
     */
    public synchronized void startWorkers() {
        if (this.settings.workerSettings() == null) {
            return;
        }
        if (this.started == this.services.size()) {
            // Restarted after stopWorkers(): the workers alone were stopped.
            startWorkerPools();
            return;
        }
        start();
    }

    private void startWorkerPools() {
        WorkerSettings workerSettings = this.settings.workerSettings();
        if (workerSettings == null || (this.workers != null && this.workers.isRunning())) {
            return;
        }
        List<WorkerTask> tasks = List.copyOf(this.settings.workerTasks().get());
        this.workerTaskNames = tasks.stream().map(WorkerTask::name).toList();
        this.workers = new QueueWorkers(this.shards, workerSettings, tasks, this.settings.mapper(), this.settings.executors(),
                new QueueTelemetry(this.events, this.settings.telemetry().observations()), this.settings.interceptors(),
                this.settings.encryption());
        this.workers.spawnChildrenWith(this.enqueuer::enqueueChild);
        this.workers.start();
        this.history.start();
    }

    private void startScheduler() {
        if (this.workers == null || this.scheduler.isRunning()) {
            return;
        }
        // A node owns the configured schedules of the tasks it runs: it deletes those its settings dropped.
        this.scheduler.configure(this.settings.schedules(), this.workerTaskNames);
        this.scheduler.start();
    }

    /** Stops the workers gracefully (see {@link QueueWorkers#stop()}); the rest runs on. */
    public synchronized void stopWorkers() {
        if (this.workers != null) {
            this.workers.stop();
        }
        this.history.stop();
    }

    /** @return the runner of bulk actions on this node */
    public BulkActions bulkActions() {
        return this.bulkActions;
    }

    /** @return whether the workers run */
    public synchronized boolean isWorking() {
        return this.workers != null && this.workers.isRunning();
    }

    /** @return the state of this node's pools, empty on a node that runs no workers or before they start */
    public synchronized List<PoolState> pools() {
        return this.workers == null ? List.of() : this.workers.pools();
    }

    /** @return the running workers, empty before they start and on a node that runs no workers */
    public synchronized Optional<QueueWorkers> workers() {
        return Optional.ofNullable(this.workers);
    }

    /** @return what the engine was built from */
    public EngineSettings settings() {
        return this.settings;
    }

    /** @return the stores of the queue's database (sharded: of the main shard) */
    public QueueStores stores() {
        return this.shards.main().stores();
    }

    /** @return the installation's shards and partition map; unsharded, the queue's database is the one shard */
    public Shards shards() {
        return this.shards;
    }

    /** @return the enqueue pipeline */
    public Enqueuer enqueuer() {
        return this.enqueuer;
    }

    /** @return the statistics poller */
    public QueueStatsPoller stats() {
        return this.stats;
    }

    /** @return the partition balancer */
    public BalancerService balancer() {
        return this.balancer;
    }

    /** @return the message queues' engine */
    public MessageEngine messages() {
        return this.messages;
    }

    /** @return what completes the callers awaiting jobs' ends */
    public JobAwaiter awaiter() {
        return this.awaiter;
    }

    /** @return the scheduler and the schedules' table */
    public Scheduler scheduler() {
        return this.scheduler;
    }

    /** @return the rescuer of expired leases, for rescues on demand */
    public Rescuer rescuer() {
        return this.rescuer;
    }

    /** @return the names of the services in their start order, for diagnostics */
    public List<String> serviceNames() {
        List<String> names = new ArrayList<>();
        this.services.forEach(service -> names.add(service.name()));
        return names;
    }

    private record Service(String name, Runnable start, Runnable stop) {
    }
}
