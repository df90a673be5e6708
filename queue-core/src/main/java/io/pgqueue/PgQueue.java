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
import java.util.function.Supplier;

import javax.sql.DataSource;

import io.pgqueue.balance.BalancerSettings;
import io.pgqueue.balance.PartitionBalancer;
import io.pgqueue.internal.engine.Engine;
import io.pgqueue.internal.engine.EngineSettings;
import io.pgqueue.internal.shard.Shards;
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
 * One queue on its PostgreSQL database (and shards): the single entry point. It builds the queue's
 * engine, which creates the stores of each database once, and hands out the {@link QueueClient}
 * (enqueue), the {@link QueueAdmin} (inspect and steer), the {@link QueueStatistics} (the shared
 * statistics), the {@link Schedules} and the {@link MessageQueues}; {@link #start()} and
 * {@link #stop()} run every background service, the workers of a node that runs jobs included, in
 * one order.
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
 * {@link #stop()} with the application context. Most of this file is the {@link Builder}: one
 * documented method per setting.
 */
public final class PgQueue {

    private final Engine engine;

    private final QueueClient client;

    private final QueueAdmin admin;

    private PgQueue(Engine engine) {
        this.engine = engine;
        this.client = new QueueClient(engine.settings().tasks(), engine.enqueuer(), engine.awaiter(),
                engine.settings().mapper());
        this.admin = new QueueAdmin(engine, this.client);
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
        return this.engine.stats();
    }

    /**
     * Returns the message queues (the pull model of Amazon SQS) on the queue's database (sharded:
     * the main shard). They start listening for sends when first used and stop with {@link #stop()}.
     * @return the message queues
     */
    public MessageQueues messages() {
        return this.engine.messages();
    }

    /** @return the engine: what the project's own tests reach past the facades for */
    Engine engine() {
        return this.engine;
    }

    /** @return the queue's database (sharded: the main shard's) */
    public DataSource dataSource() {
        return this.engine.stores().dataSource();
    }

    /** @return the queue's settings */
    public QueueConfig config() {
        return this.engine.stores().config();
    }

    /** @return the worker settings, empty on a node that runs no workers */
    public Optional<WorkerSettings> workerSettings() {
        return Optional.ofNullable(this.engine.settings().workerSettings());
    }

    /**
     * Opens what routes jobs between shards, once: settles an unsharded installation's partition
     * count and checks that its database coordinates no shards, and, sharded, starts following the partition map and relaying the
     * outbox (rows a stopped node left there are relayed by the others). {@link #start()} calls it.
     * @throws io.pgqueue.shard.ShardException if the queue's database coordinates shards this queue was not given
     */
    public void open() {
        this.engine.open();
    }

    /**
     * Starts, in this order, what {@link #open()} opens, the statistics poller, the message queues
     * if any exists, the partition balancer and, on a node with workers, the workers and the
     * scheduler of recurring jobs (after putting the schedules configured with this node's tasks in
     * the database). If one of them fails to start, those started are stopped again.
     * @throws QueueSchemaException if the schema is not migrated to this version
     */
    public void start() {
        this.engine.start();
    }

    /**
     * @return the recurring jobs: their schedules, and the scheduler, which runs on nodes with
     * workers from {@link #start()} until {@link #stop()}
     */
    public Schedules schedules() {
        return this.engine.scheduler();
    }

    /** @return the partition balancer: it records job counts on every sharded node, and balances where enabled */
    public PartitionBalancer balancer() {
        return this.engine.balancer();
    }

    /**
     * Starts the workers, once, with the rest {@link #start()} starts if it does not run yet; on a
     * node that runs no workers it does nothing. The worker tasks are looked up now, so their
     * handlers may depend on the client.
     * @throws QueueSchemaException if the schema is not migrated to this version
     */
    public void startWorkers() {
        this.engine.startWorkers();
    }

    /** Stops the workers gracefully (see {@link #stop()}); they can be started again. */
    public void stopWorkers() {
        this.engine.stopWorkers();
    }

    /**
     * Returns what a test kit runs this queue's jobs with: on the caller's thread, through the
     * workers' executor (see {@link QueueTestSupport}).
     * @param tasks the tasks whose jobs it runs
     * @return the support; close it when done
     * @throws IllegalStateException if the queue is sharded
     */
    public QueueTestSupport testSupport(Collection<WorkerTask> tasks) {
        if (this.engine.shards().sharded()) {
            throw new IllegalStateException("The test kit runs an unsharded queue; this one has shards "
                    + this.engine.shards().all().stream().map(Shards.Shard::name).toList() + ". Test the handlers "
                    + "on one database: leave pgqueue.shards (PgQueue.Builder.shard) out of the tests' configuration");
        }
        return new QueueTestSupport(this.engine, tasks);
    }

    /** @return the state of this node's pools, empty on a node that runs no workers or before they start */
    public List<PoolState> pools() {
        return this.engine.pools();
    }

    /** @return whether the workers run */
    public boolean isWorking() {
        return this.engine.isWorking();
    }

    /**
     * Stops what {@link #start()} started, in reverse order: the workers gracefully (stop fetching,
     * hand buffered jobs back, wait for running handlers up to the shutdown timeout), the scheduler,
     * the balancer, the message queues (receives waiting for messages end with none), the
     * statistics poller, the group commits and the outbox relay, and the partition map's refresh.
     * Idempotent; the queue can be started again.
     */
    public void stop() {
        this.engine.stop();
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

        private final List<JobInterceptor> interceptors = new ArrayList<>();

        private PayloadEncryption encryption = PayloadEncryption.NONE;

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

        /**
         * Adds interceptors that see every enqueue and every attempt of this queue, in the order
         * given: the first sees an enqueue first and wraps an attempt outermost.
         * @param interceptors the interceptors
         * @return this builder
         */
        public Builder interceptors(Collection<? extends JobInterceptor> interceptors) {
            interceptors.forEach(interceptor -> this.interceptors.add(Objects.requireNonNull(interceptor, "interceptor")));
            return this;
        }

        /**
         * Sets the keys that encrypt the payloads of the tasks that ask for it
         * ({@link TaskDefinition#encrypted()}) and decrypt them for their handlers. Without keys
         * such a task is refused when the queue is built, and an encrypted payload fails its
         * attempt, naming the key it needs.
         * @param encryption the keys
         * @return this builder
         */
        public Builder encryption(PayloadEncryption encryption) {
            this.encryption = Objects.requireNonNull(encryption, "encryption");
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
            return new PgQueue(new Engine(new EngineSettings(this.dataSource, this.config, this.shards, this.partitions,
                    registry(), this.mapper, this.telemetry, this.statsInterval, this.workerSettings, this.workerTasks,
                    this.executors, this.balancerEnabled, this.balancerSettings, this.balancerLoadWindow,
                    this.messageEvents, this.schedules, this.clock, this.interceptors, this.encryption)));
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
