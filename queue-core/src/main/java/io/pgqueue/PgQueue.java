package io.pgqueue;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;

import javax.sql.DataSource;

import io.pgqueue.balance.BalancerSettings;
import io.pgqueue.balance.PartitionBalancer;
import io.pgqueue.internal.balance.BalancerService;
import io.pgqueue.internal.observe.QueueStatsPoller;
import io.pgqueue.internal.shard.Shards;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.QueueStores;
import io.pgqueue.internal.store.ScheduleStore;
import io.pgqueue.internal.worker.QueueWorkers;
import io.pgqueue.internal.worker.Rescuer;
import io.pgqueue.message.MessageQueueEvents;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.observe.QueueStatistics;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.schedule.Schedule;
import io.pgqueue.schedule.Schedules;
import io.pgqueue.store.QueueSchema;
import io.pgqueue.worker.PoolState;
import io.pgqueue.worker.WorkerExecutors;
import io.pgqueue.worker.WorkerSettings;
import io.pgqueue.worker.WorkerTask;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * One queue on one PostgreSQL database: the single entry point that creates the stores once and
 * hands out the {@link QueueClient} (enqueue), the {@link QueueAdmin} (inspect and steer), the
 * {@link QueueStatistics} (the shared statistics) and, on nodes that run jobs, the
 * {@link QueueWorkers}.
 * <pre>{@code
 * PgQueue queue = PgQueue.builder(dataSource)
 *     .migrateSchema(true)
 *     .workers(WorkerSettings.builder("node-1").build(), List.of(WorkerTask.of("send-push", handler, Push.class)))
 *     .build();
 * queue.start();
 * queue.client().enqueue("send-push", new Push("ann", "hi"));
 * queue.stop();
 * }</pre>
 * The Spring Boot starter builds it from {@code pgqueue.*} properties and runs {@link #start()} and
 * {@link #stop()} with the application context.
 */
public final class PgQueue {

    private final QueueStores stores;

    private final Shards shards;

    private final QueueClient client;

    private final QueueStatsPoller stats;

    private final QueueAdmin admin;

    private final QueueTelemetry telemetry;

    private final ObjectMapper mapper;

    private final WorkerSettings workerSettings;

    private final Supplier<? extends Collection<WorkerTask>> workerTasks;

    private final WorkerExecutors executors;

    private QueueWorkers workers;

    private boolean opened;

    private final Integer partitions;

    private final BalancerService balancer;

    private final MessageQueues messages;

    private final Schedules schedules;

    private final List<Schedule> configuredSchedules;

    private PgQueue(Builder builder) {
        boolean sharded = !builder.shards.isEmpty();
        this.stores = QueueStores.create(builder.dataSource, builder.config, sharded);
        if (sharded) {
            Map<String, QueueStores> others = new LinkedHashMap<>();
            builder.shards.forEach((name, dataSource) -> others.put(name, QueueStores.create(dataSource, builder.config, true)));
            this.shards = Shards.open(this.stores, others, builder.partitions);
        }
        else {
            this.shards = Shards.unsharded(this.stores);
        }
        this.telemetry = builder.telemetry;
        this.mapper = builder.mapper;
        this.workerSettings = builder.workerSettings;
        this.workerTasks = builder.workerTasks;
        this.executors = builder.executors;
        TaskRegistry tasks = builder.registry();
        this.partitions = builder.partitions;
        this.client = new QueueClient(this.shards, tasks, this.mapper, this.telemetry);
        Map<String, io.pgqueue.internal.store.StatsStore> statsStores = new LinkedHashMap<>();
        this.shards.all().forEach(shard -> statsStores.put(shard.name(), shard.stores().stats()));
        this.stats = new QueueStatsPoller(statsStores, builder.statsInterval);
        int rescueBatch = this.workerSettings != null ? this.workerSettings.batchSizes().maintenance()
                : QueueDefaults.MAINTENANCE_BATCH_SIZE;
        String node = this.workerSettings != null ? this.workerSettings.nodeId()
                : "client-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 8);
        this.balancer = new BalancerService(this.shards, this.stats, this.client.partitionLoad().orElse(null),
                builder.balancerSettings, builder.balancerLoadWindow, node, builder.balancerEnabled);
        this.messages = new MessageQueues(builder.dataSource, builder.config, builder.messageEvents, builder.statsInterval,
                this.workerSettings != null ? this.workerSettings.vacuumInterval() : QueueDefaults.VACUUM_INTERVAL);
        this.schedules = new Schedules(new ScheduleStore(builder.dataSource, builder.config), this.client, tasks, this.mapper,
                builder.clock, this.workerSettings != null ? this.workerSettings.pollInterval()
                        : QueueDefaults.POLL_INTERVAL);
        this.configuredSchedules = List.copyOf(builder.schedules);
        this.admin = new QueueAdmin(this.stores.jobs(), this.stores.controls(), this.stores.nodes(), tasks, this.stats,
                this.client, new Rescuer(this.stores.jobs(), rescueBatch, this.telemetry.events()), this.shards,
                this.schedules);
    }

    /**
     * Starts building a queue on a database.
     * @param dataSource the queue's database
     * @return the builder
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    /** @return the client that enqueues jobs */
    public QueueClient client() {
        return this.client;
    }

    /** @return the admin that inspects and steers the queue */
    public QueueAdmin admin() {
        return this.admin;
    }

    /** @return the statistics poller behind metrics, health and the admin's counts */
    public QueueStatistics stats() {
        return this.stats;
    }

    /**
     * Returns the message queues (the pull model of Amazon SQS) on the queue's database (sharded:
     * the main shard). They start listening for sends when first used and stop with {@link #stop()}.
     * @return the message queues
     */
    public MessageQueues messages() {
        return this.messages;
    }

    /** @return the job store */
    public JobStore jobs() {
        return this.stores.jobs();
    }

    /** @return the stores of the queue's database (sharded: of the main shard) */
    public QueueStores stores() {
        return this.stores;
    }

    /** @return the installation's shards and partition map; unsharded, the queue's database is the one shard */
    public Shards shards() {
        return this.shards;
    }

    /** @return the queue's database (sharded: the main shard's) */
    public DataSource dataSource() {
        return this.stores.dataSource();
    }

    /** @return the queue's settings */
    public QueueConfig config() {
        return this.stores.config();
    }

    /** @return the worker settings, empty on a node that runs no workers */
    public Optional<WorkerSettings> workerSettings() {
        return Optional.ofNullable(this.workerSettings);
    }

    /** @return the running workers, empty before {@link #startWorkers()} and on a node that runs no workers */
    public synchronized Optional<QueueWorkers> workers() {
        return Optional.ofNullable(this.workers);
    }

    /**
     * Opens what routes jobs between shards, once: settles an unsharded installation's partition
     * count and checks that its database coordinates no shards, and, sharded, starts following the partition map and relaying the
     * outbox (rows a stopped node left there are relayed by the others). {@link #start()} calls it.
     * @throws io.pgqueue.shard.ShardException if the queue's database coordinates shards this queue was not given
     */
    public synchronized void open() {
        if (this.opened) {
            return;
        }
        this.shards.openUnsharded(this.partitions);
        this.shards.startRefreshing(QueueDefaults.PARTITION_MAP_REFRESH);
        if (this.shards.sharded()) {
            this.client.relay();
        }
        this.opened = true;
    }

    /**
     * Starts the statistics poller, the message queues if any exists, and, on a node with workers,
     * the workers.
     * @throws QueueSchemaException if the schema is not migrated to this version
     */
    public synchronized void start() {
        open();
        this.stats.start();
        this.messages.startIfUsed();
        this.balancer.start();
        startWorkers();
    }

    /**
     * @return the recurring jobs: their schedules, and the scheduler, which runs on nodes with
     * workers from {@link #startWorkers()} until {@link #stop()}
     */
    public Schedules schedules() {
        return this.schedules;
    }

    /** @return the partition balancer: it records job counts on every sharded node, and balances where enabled */
    public PartitionBalancer balancer() {
        return this.balancer;
    }

    /**
     * Starts the workers, once, and the scheduler of recurring jobs, after putting the schedules
     * configured with this node's tasks in the database; on a node that runs no workers it does
     * nothing. The worker tasks are looked up now, so their handlers may depend on the client.
     * @throws QueueSchemaException if the schema is not migrated to this version
     */
    public synchronized void startWorkers() {
        if (this.workerSettings == null || (this.workers != null && this.workers.isRunning())) {
            return;
        }
        List<WorkerTask> tasks = List.copyOf(this.workerTasks.get());
        this.workers = new QueueWorkers(this.shards, this.workerSettings, tasks, this.mapper, this.executors,
                this.telemetry);
        this.workers.start();
        if (!this.schedules.isRunning()) {
            // A node owns the configured schedules of the tasks it runs: it deletes those its settings dropped.
            this.schedules.configure(this.configuredSchedules, tasks.stream().map(WorkerTask::name).toList());
            this.schedules.start();
        }
    }

    /** Stops the workers gracefully (see {@link QueueWorkers#stop()}); they can be started again. */
    public synchronized void stopWorkers() {
        if (this.workers != null) {
            this.workers.stop();
        }
    }

    /**
     * Returns what a test kit runs this queue's jobs with: on the caller's thread, through the
     * workers' executor (see {@link QueueTestSupport}).
     * @param tasks the tasks whose jobs it runs
     * @return the support; close it when done
     * @throws IllegalStateException if the queue is sharded
     */
    public QueueTestSupport testSupport(Collection<WorkerTask> tasks) {
        if (this.shards.sharded()) {
            throw new IllegalStateException("The test kit runs an unsharded queue; this one has shards "
                    + this.shards.all().stream().map(Shards.Shard::name).toList());
        }
        return new QueueTestSupport(this.stores, tasks, this.mapper, this.telemetry);
    }

    /** @return the state of this node's pools, empty on a node that runs no workers or before they start */
    public synchronized List<PoolState> pools() {
        return this.workers == null ? List.of() : this.workers.pools();
    }

    /** @return whether the workers run */
    public synchronized boolean isWorking() {
        return this.workers != null && this.workers.isRunning();
    }

    /**
     * Stops the workers gracefully, then the statistics poller, the client's group commit and the
     * message queues (receives waiting for messages end with none).
     */
    public synchronized void stop() {
        stopWorkers();
        this.schedules.stop();
        this.messages.stop();
        this.balancer.stop();
        this.stats.stop();
        this.client.close();
        this.shards.stopRefreshing();
        this.opened = false;
    }

    /**
     * Builds a {@link PgQueue}; every setting has a default from {@link QueueDefaults}.
     */
    public static final class Builder {

        private final DataSource dataSource;

        private QueueConfig config = QueueConfig.defaults();

        private TaskRegistry tasks;

        private ObjectMapper mapper;

        private QueueTelemetry telemetry = QueueTelemetry.NONE;

        private Duration statsInterval = QueueDefaults.STATS_INTERVAL;

        private WorkerSettings workerSettings;

        private Supplier<? extends Collection<WorkerTask>> workerTasks = List::of;

        private List<WorkerTask> eagerWorkerTasks = List.of();

        private WorkerExecutors executors = WorkerExecutors.platformThreads();

        private boolean migrateSchema;

        private final Map<String, DataSource> shards = new LinkedHashMap<>();

        private Integer partitions;

        private BalancerSettings balancerSettings = BalancerSettings.defaults();

        private Duration balancerLoadWindow = QueueDefaults.BALANCER_LOAD_WINDOW;

        private boolean balancerEnabled;

        private MessageQueueEvents messageEvents = MessageQueueEvents.NONE;

        private final List<Schedule> schedules = new ArrayList<>();

        private Clock clock = Clock.systemUTC();

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /**
         * @param config the queue's settings (schema, payload limit, statement timeout, retention)
         * @return this builder
         */
        public Builder config(QueueConfig config) {
            this.config = Objects.requireNonNull(config, "config");
            return this;
        }

        /**
         * Sets the task types jobs may be enqueued for. Tasks of {@link #workers(WorkerSettings, Collection)}
         * are added to them.
         * @param tasks the declared task types
         * @return this builder
         */
        public Builder tasks(TaskRegistry tasks) {
            this.tasks = Objects.requireNonNull(tasks, "tasks");
            return this;
        }

        /**
         * @param mapper the JSON mapper of payloads and headers
         * @return this builder
         */
        public Builder mapper(ObjectMapper mapper) {
            this.mapper = Objects.requireNonNull(mapper, "mapper");
            return this;
        }

        /**
         * @param telemetry where events (metrics) and observations (tracing) go
         * @return this builder
         */
        public Builder telemetry(QueueTelemetry telemetry) {
            this.telemetry = Objects.requireNonNull(telemetry, "telemetry");
            return this;
        }

        /**
         * @param statsInterval how often the shared statistics are read
         * @return this builder
         */
        public Builder statsInterval(Duration statsInterval) {
            this.statsInterval = InvalidSettingException.positive(statsInterval, "stats.interval");
            return this;
        }

        /**
         * Runs workers on this node for the given tasks; their definitions are declared too.
         * @param settings the worker settings
         * @param tasks the tasks this node runs
         * @return this builder
         */
        public Builder workers(WorkerSettings settings, Collection<WorkerTask> tasks) {
            List<WorkerTask> copy = List.copyOf(tasks);
            this.eagerWorkerTasks = copy;
            return workers(settings, () -> copy);
        }

        /**
         * Runs workers on this node for tasks looked up when the workers start, e.g. handler beans
         * that depend on the client; their definitions must be among {@link #tasks(TaskRegistry)}.
         * @param settings the worker settings
         * @param tasks supplies the tasks this node runs
         * @return this builder
         */
        public Builder workers(WorkerSettings settings, Supplier<? extends Collection<WorkerTask>> tasks) {
            this.workerSettings = Objects.requireNonNull(settings, "settings");
            this.workerTasks = Objects.requireNonNull(tasks, "tasks");
            return this;
        }

        /**
         * @param executors creates the executor of each pool's handlers
         * @return this builder
         */
        public Builder executors(WorkerExecutors executors) {
            this.executors = Objects.requireNonNull(executors, "executors");
            return this;
        }

        /**
         * Whether {@link #build()} creates or upgrades the queue's schema first (off by default:
         * many teams migrate with their own tooling; see {@link QueueSchema}).
         * @param migrateSchema whether to migrate
         * @return this builder
         */
        public Builder migrateSchema(boolean migrateSchema) {
            this.migrateSchema = migrateSchema;
            return this;
        }

        /**
         * Adds a shard: another PostgreSQL database that holds some of the queue's partitions. The
         * queue's own database is the main shard, named {@value QueueDefaults#MAIN_SHARD}; it also
         * keeps the partition map. Without added shards the queue is unsharded.
         * @param name the shard's name, for good (lower-case letters, digits, '-' and '_', at most 40)
         * @param dataSource the shard's database
         * @return this builder
         */
        public Builder shard(String name, DataSource dataSource) {
            InvalidSettingException.require(name != null && name.matches("[a-z0-9][a-z0-9_-]{0,39}"), "shards", name,
                    "a shard name must be lower-case letters, digits, '-' and '_' (at most 40, starting with a letter "
                            + "or digit)");
            InvalidSettingException.require(!QueueDefaults.MAIN_SHARD.equals(name), "shards", name,
                    "'" + QueueDefaults.MAIN_SHARD + "' names the shard on the queue's own DataSource");
            this.shards.put(name, Objects.requireNonNull(dataSource, "dataSource"));
            return this;
        }

        /**
         * Sets the partition count of a new installation, {@value QueueDefaults#PARTITIONS} if unset.
         * It is recorded when the first node opens the queue (before any job is written) and kept for
         * good: a node that asks for another count of an installation that has held jobs fails to
         * open. A partition is the unit that moves between shards, so the count bounds how evenly
         * jobs spread: about ten partitions per shard at the least.
         * @param partitions the partition count, 1 to {@value Shards#MAX_PARTITIONS}
         * @return this builder
         */
        public Builder partitions(int partitions) {
            InvalidSettingException.require(partitions >= 1 && partitions <= Shards.MAX_PARTITIONS, "partitions",
                    partitions, "an installation has 1 to " + Shards.MAX_PARTITIONS + " partitions");
            this.partitions = partitions;
            return this;
        }

        /**
         * Lets this node run the partition balancer (one node of the installation at a time does),
         * which moves partitions between shards to keep their loads even; off by default. Every
         * sharded node records the jobs it enqueues per partition, which weigh the partitions.
         * @param enabled whether this node may run it
         * @param settings how it decides
         * @param loadWindow over how long the partitions' weights are measured
         * @return this builder
         */
        public Builder balancer(boolean enabled, BalancerSettings settings, Duration loadWindow) {
            this.balancerEnabled = enabled;
            this.balancerSettings = Objects.requireNonNull(settings, "settings");
            this.balancerLoadWindow = InvalidSettingException.positive(loadWindow, "balancer.load-window");
            return this;
        }

        /**
         * @param events where message-queue sends, receives and deletes are counted
         * @return this builder
         */
        public Builder messageEvents(MessageQueueEvents events) {
            this.messageEvents = Objects.requireNonNull(events, "events");
            return this;
        }

        /**
         * Adds schedules configured with this node's tasks (recurring jobs); {@link PgQueue#start()}
         * puts them in the database.
         * @param schedules the schedules
         * @return this builder
         */
        public Builder schedules(Collection<Schedule> schedules) {
            this.schedules.addAll(schedules);
            return this;
        }

        /**
         * Sets the clock the scheduler reads the time from (tests move it; the default is the system clock).
         * @param clock the clock
         * @return this builder
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /** @return the queue; nothing runs until {@link PgQueue#start()} */
        public PgQueue build() {
            if (this.mapper == null) {
                this.mapper = JsonMapper.builder().build();
            }
            if (this.migrateSchema) {
                QueueSchema.migrate(this.dataSource, this.config.schema());
                this.shards.values().forEach(shard -> QueueSchema.migrate(shard, this.config.schema()));
            }
            return new PgQueue(this);
        }

        private TaskRegistry registry() {
            Map<String, TaskDefinition> definitions = new LinkedHashMap<>();
            if (this.tasks != null) {
                this.tasks.all().forEach(task -> definitions.put(task.name(), task));
            }
            this.eagerWorkerTasks.forEach(task -> definitions.putIfAbsent(task.name(), task.definition()));
            return TaskRegistry.of(new ArrayList<>(definitions.values()));
        }
    }
}
