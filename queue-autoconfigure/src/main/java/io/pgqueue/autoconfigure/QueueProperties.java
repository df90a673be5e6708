package io.pgqueue.autoconfigure;

import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.pgqueue.JobState;
import io.pgqueue.QueueDefaults;
import io.pgqueue.QueueTask;
import io.pgqueue.TaskGroups;
import io.pgqueue.schedule.CatchUp;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.DeprecatedConfigurationProperty;
import org.springframework.util.unit.DataSize;

/**
 * Configuration properties of pgqueue ({@code pgqueue.*}). Defaults are the constants of
 * {@link QueueDefaults}.
 */
@ConfigurationProperties("pgqueue")
public class QueueProperties {

    /**
     * Whether to enable pgqueue.
     */
    private boolean enabled = true;

    /**
     * Database schema of the queue's tables (a lower-case identifier).
     */
    private String schema = QueueDefaults.SCHEMA;

    /**
     * How often worker pools look for due jobs when no notification arrives. Notifications wake
     * them at once; this is the fallback, and the delay of scheduled jobs becoming visible.
     */
    private Duration pollInterval = QueueDefaults.POLL_INTERVAL;

    /**
     * Id of this node in the node registry and as the lease owner of its jobs. Defaults to the
     * host name, the process id and a random suffix.
     */
    private String nodeId;

    /**
     * Maximum size of a job's payload, serialized as JSON.
     */
    private DataSize maxPayloadSize = DataSize.ofBytes(QueueDefaults.MAX_PAYLOAD_BYTES);

    /**
     * JSON field names (ignoring case) whose values the console and the queues endpoint never show
     * in a job's payload, headers, result or progress, at any depth, and that searches may not match on.
     */
    private List<String> redactedFields = new ArrayList<>();

    /**
     * Timeout of each statement the queue runs itself (enqueue, claim, writes, maintenance); a
     * statement running longer is cancelled. Zero for none.
     */
    private Duration statementTimeout = QueueDefaults.STATEMENT_TIMEOUT;

    private final Notifications notifications = new Notifications();

    /**
     * How the queue's DataSource reaches PostgreSQL: DIRECT, or through a pooler such as PgBouncer
     * in SESSION or TRANSACTION pooling. TRANSACTION is checked at start-up: it needs
     * pgqueue.notifications.enabled=false (LISTEN needs a session), prepareThreshold=0 in the JDBC
     * URL and no shards (partition moves hold a session lock).
     */
    private ConnectionPooling connectionPooling = ConnectionPooling.DIRECT;

    private final Lease lease = new Lease();

    private final Rescue rescue = new Rescue();

    private final Shutdown shutdown = new Shutdown();

    private final Retention retention = new Retention();

    private final Vacuum vacuum = new Vacuum();

    private final Batch batch = new Batch();

    private final Flyway flyway = new Flyway();

    private final Workers workers = new Workers();

    private final Stats stats = new Stats();

    private final Health health = new Health();

    private final Endpoint endpoint = new Endpoint();

    private final Balancer balancer = new Balancer();

    private final Interceptors interceptors = new Interceptors();

    private final Encryption encryption = new Encryption();

    /**
     * Worker pools by name. Tasks run in the pool named by their annotation or by
     * pgqueue.tasks.<name>.pool ("default" unless set).
     */
    private Map<String, Pool> pools = new LinkedHashMap<>();

    /**
     * Per-task overrides of the settings on @QueueTask, by task name. A task listed here without a
     * handler bean can still be enqueued (e.g. on a node that only enqueues).
     */
    private Map<String, Task> tasks = new LinkedHashMap<>();

    /**
     * Other PostgreSQL databases that hold some of the queue's partitions, by shard name (1 to 40
     * lower-case letters, digits, '-' and '_', starting with a letter or digit; kept for good). The queue's own DataSource is the shard 'main',
     * which also keeps the partition map. None: the queue is unsharded.
     */
    private Map<String, Shard> shards = new LinkedHashMap<>();

    /**
     * Partition count of a new installation (1 to 32768), recorded when the first node opens the
     * queue and kept for good; 1024 when unset. A partition is the unit that moves between shards:
     * allow at least ten per shard you may ever run. Once jobs exist, a node asking for another
     * count fails to start.
     */
    private Integer partitions;

    public boolean isEnabled() {
        return this.enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getSchema() {
        return this.schema;
    }

    public void setSchema(String schema) {
        this.schema = schema;
    }

    public Duration getPollInterval() {
        return this.pollInterval;
    }

    public void setPollInterval(Duration pollInterval) {
        this.pollInterval = pollInterval;
    }

    public String getNodeId() {
        return this.nodeId;
    }

    public void setNodeId(String nodeId) {
        this.nodeId = nodeId;
    }

    public DataSize getMaxPayloadSize() {
        return this.maxPayloadSize;
    }

    public void setMaxPayloadSize(DataSize maxPayloadSize) {
        this.maxPayloadSize = maxPayloadSize;
    }

    public ConnectionPooling getConnectionPooling() {
        return this.connectionPooling;
    }

    public void setConnectionPooling(ConnectionPooling connectionPooling) {
        this.connectionPooling = connectionPooling;
    }

    /** How the queue's DataSource reaches PostgreSQL. */
    public enum ConnectionPooling {

        /** Straight to PostgreSQL. */
        DIRECT,

        /** Through a pooler in session pooling: a server connection per client connection. */
        SESSION,

        /** Through a pooler in transaction pooling: any server connection per transaction. */
        TRANSACTION
    }

    public Encryption getEncryption() {
        return this.encryption;
    }

    public List<String> getRedactedFields() {
        return this.redactedFields;
    }

    public void setRedactedFields(List<String> redactedFields) {
        this.redactedFields = redactedFields;
    }

    public Duration getStatementTimeout() {
        return this.statementTimeout;
    }

    public void setStatementTimeout(Duration statementTimeout) {
        this.statementTimeout = statementTimeout;
    }

    public Notifications getNotifications() {
        return this.notifications;
    }

    public Lease getLease() {
        return this.lease;
    }

    public Rescue getRescue() {
        return this.rescue;
    }

    public Shutdown getShutdown() {
        return this.shutdown;
    }

    public Retention getRetention() {
        return this.retention;
    }

    public Batch getBatch() {
        return this.batch;
    }

    public Vacuum getVacuum() {
        return this.vacuum;
    }

    public Flyway getFlyway() {
        return this.flyway;
    }

    public Workers getWorkers() {
        return this.workers;
    }

    public Stats getStats() {
        return this.stats;
    }

    public Health getHealth() {
        return this.health;
    }

    public Endpoint getEndpoint() {
        return this.endpoint;
    }

    public Map<String, Pool> getPools() {
        return this.pools;
    }

    public void setPools(Map<String, Pool> pools) {
        this.pools = pools;
    }

    public Map<String, Task> getTasks() {
        return this.tasks;
    }

    public void setTasks(Map<String, Task> tasks) {
        this.tasks = tasks;
    }

    public Map<String, Shard> getShards() {
        return this.shards;
    }

    public void setShards(Map<String, Shard> shards) {
        this.shards = shards;
    }

    public Balancer getBalancer() {
        return this.balancer;
    }

    public Interceptors getInterceptors() {
        return this.interceptors;
    }

    public Integer getPartitions() {
        return this.partitions;
    }

    public void setPartitions(Integer partitions) {
        this.partitions = partitions;
    }

    /**
     * LISTEN/NOTIFY wake-ups.
     */
    public static class Notifications {

        /**
         * Whether enqueues notify idle workers through LISTEN/NOTIFY (one notification per
         * transaction and task). Polling runs either way.
         */
        private boolean enabled = true;

        public boolean isEnabled() {
            return this.enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /**
     * Leases of claimed jobs.
     */
    public static class Lease {

        /**
         * How long a claim, and each renewal, holds a job. A crashed node's jobs are taken back
         * after at most this plus the rescue interval.
         */
        private Duration duration = QueueDefaults.LEASE;

        /**
         * How often the leases of held jobs and the node's registration are renewed; must be
         * shorter than the lease.
         */
        private Duration heartbeatInterval = QueueDefaults.HEARTBEAT_INTERVAL;

        public Duration getDuration() {
            return this.duration;
        }

        public void setDuration(Duration duration) {
            this.duration = duration;
        }

        public Duration getHeartbeatInterval() {
            return this.heartbeatInterval;
        }

        public void setHeartbeatInterval(Duration heartbeatInterval) {
            this.heartbeatInterval = heartbeatInterval;
        }
    }

    /**
     * Rescue of expired leases.
     */
    public static class Rescue {

        /**
         * How often each node takes back jobs whose lease expired.
         */
        private Duration interval = QueueDefaults.RESCUE_INTERVAL;

        public Duration getInterval() {
            return this.interval;
        }

        public void setInterval(Duration interval) {
            this.interval = interval;
        }
    }

    /**
     * Graceful shutdown.
     */
    public static class Shutdown {

        /**
         * How long running handlers get to finish when the application stops; then they are
         * interrupted and their jobs retried.
         */
        private Duration timeout = QueueDefaults.SHUTDOWN_TIMEOUT;

        public Duration getTimeout() {
            return this.timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }
    }

    /**
     * Retention of finished jobs.
     */
    public static class Retention {

        /**
         * How long completed jobs are kept; zero deletes them when they complete.
         */
        private Duration completed = QueueDefaults.COMPLETED_RETENTION;

        /**
         * How long failed jobs are kept (for inspection and re-runs).
         */
        private Duration failed = QueueDefaults.FAILED_RETENTION;

        /**
         * How long cancelled jobs are kept.
         */
        private Duration cancelled = QueueDefaults.CANCELLED_RETENTION;

        /**
         * How often each node deletes finished jobs past their retention.
         */
        private Duration interval = QueueDefaults.RETENTION_INTERVAL;

        /**
         * Maximum number of rows per statement, for all four kinds at once (see pgqueue.batch).
         */
        private Integer batchSize;

        public Duration getCompleted() {
            return this.completed;
        }

        public void setCompleted(Duration completed) {
            this.completed = completed;
        }

        public Duration getFailed() {
            return this.failed;
        }

        public void setFailed(Duration failed) {
            this.failed = failed;
        }

        public Duration getCancelled() {
            return this.cancelled;
        }

        public void setCancelled(Duration cancelled) {
            this.cancelled = cancelled;
        }

        public Duration getInterval() {
            return this.interval;
        }

        public void setInterval(Duration interval) {
            this.interval = interval;
        }

        @Deprecated(since = "0.1.0")
        @DeprecatedConfigurationProperty(replacement = "pgqueue.batch.write",
                reason = "Split by what it limits into pgqueue.batch.claim, pgqueue.batch.heartbeat, "
                        + "pgqueue.batch.write and pgqueue.batch.maintenance; when set, it still sets all four")
        public Integer getBatchSize() {
            return this.batchSize;
        }

        @Deprecated(since = "0.1.0")
        public void setBatchSize(Integer batchSize) {
            this.batchSize = batchSize;
        }
    }

    /**
     * Most rows one statement of the worker runtime handles, by what the statement does.
     */
    public static class Batch {

        /**
         * Maximum number of jobs of one task one claim takes (a task's free capacity, concurrency
         * plus prefetch, is usually smaller).
         */
        private int claim = QueueDefaults.CLAIM_BATCH_SIZE;

        /**
         * Maximum number of leases one heartbeat statement renews.
         */
        private int heartbeat = QueueDefaults.HEARTBEAT_BATCH_SIZE;

        /**
         * Maximum number of job starts or outcomes one completer statement writes.
         */
        private int write = QueueDefaults.WRITE_BATCH_SIZE;

        /**
         * Maximum number of expired leases one rescue transaction returns, and of finished jobs one
         * retention statement deletes.
         */
        private int maintenance = QueueDefaults.MAINTENANCE_BATCH_SIZE;

        public int getClaim() {
            return this.claim;
        }

        public void setClaim(int claim) {
            this.claim = claim;
        }

        public int getHeartbeat() {
            return this.heartbeat;
        }

        public void setHeartbeat(int heartbeat) {
            this.heartbeat = heartbeat;
        }

        public int getWrite() {
            return this.write;
        }

        public void setWrite(int write) {
            this.write = write;
        }

        public int getMaintenance() {
            return this.maintenance;
        }

        public void setMaintenance(int maintenance) {
            this.maintenance = maintenance;
        }
    }

    /**
     * VACUUM of the active-job table.
     */
    public static class Vacuum {

        /**
         * How often each node VACUUMs the active-job table (skipped while another VACUUM runs);
         * zero leaves it to autovacuum. Needs the table's owner.
         */
        private Duration interval = QueueDefaults.VACUUM_INTERVAL;

        public Duration getInterval() {
            return this.interval;
        }

        public void setInterval(Duration interval) {
            this.interval = interval;
        }
    }

    /**
     * Migration of the queue's schema.
     */
    public static class Flyway {

        /**
         * Whether to create and upgrade the queue's tables at start-up with the queue's own Flyway
         * (own history table in the queue's schema). Turn off when migrations run elsewhere.
         */
        private boolean enabled = true;

        public boolean isEnabled() {
            return this.enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /**
     * The worker runtime.
     */
    public static class Workers {

        /**
         * Whether this node runs jobs. Turn off for nodes that only enqueue (e.g. a web tier).
         */
        private boolean enabled = true;

        public boolean isEnabled() {
            return this.enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /**
     * The partition balancer of a sharded queue: moves partitions between shards to keep their
     * loads even, one node of the installation at a time.
     */
    public static class Balancer {

        /**
         * Whether this node may run the balancer (one node with it enabled runs it at a time).
         * Every sharded node records the jobs it enqueues per partition, whatever this says.
         */
        private boolean enabled = false;

        /** How often the balancer looks at the loads and decides (a round). */
        private Duration interval = QueueDefaults.BALANCER_INTERVAL;

        /** Most partitions moved per round. */
        private int movesPerRound = QueueDefaults.BALANCER_MOVES_PER_ROUND;

        /**
         * A shard is overloaded while the median, over the overload window, of the age of its
         * oldest due job is above this; its heaviest partition then moves to a lighter shard.
         */
        private Duration overloadLag = QueueDefaults.BALANCER_OVERLOAD_LAG;

        /** Window of the median filter over each shard's overload signal. */
        private Duration overloadWindow = QueueDefaults.BALANCER_OVERLOAD_WINDOW;

        /** Gini index of the shard loads above which the balancer evens them out (0 to 1). */
        private double giniUpper = QueueDefaults.BALANCER_GINI_UPPER;

        /** Gini index below which it stops evening them out again (below gini-upper). */
        private double giniLower = QueueDefaults.BALANCER_GINI_LOWER;

        /** Moves of one partition allowed within the friction window. */
        private int frictionMoves = QueueDefaults.BALANCER_FRICTION_MOVES;

        /** The friction window. */
        private Duration frictionWindow = QueueDefaults.BALANCER_FRICTION_WINDOW;

        /** Over how long each partition's weight (jobs enqueued per second) is measured. */
        private Duration loadWindow = QueueDefaults.BALANCER_LOAD_WINDOW;

        /**
         * The shards a partition may live on, by partition or range of partitions (e.g.
         * {@code "[0-127]": b,c}); partitions not listed may live anywhere.
         */
        private Map<String, List<String>> affinity = new LinkedHashMap<>();

        public boolean isEnabled() {
            return this.enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getInterval() {
            return this.interval;
        }

        public void setInterval(Duration interval) {
            this.interval = interval;
        }

        public int getMovesPerRound() {
            return this.movesPerRound;
        }

        public void setMovesPerRound(int movesPerRound) {
            this.movesPerRound = movesPerRound;
        }

        public Duration getOverloadLag() {
            return this.overloadLag;
        }

        public void setOverloadLag(Duration overloadLag) {
            this.overloadLag = overloadLag;
        }

        public Duration getOverloadWindow() {
            return this.overloadWindow;
        }

        public void setOverloadWindow(Duration overloadWindow) {
            this.overloadWindow = overloadWindow;
        }

        public double getGiniUpper() {
            return this.giniUpper;
        }

        public void setGiniUpper(double giniUpper) {
            this.giniUpper = giniUpper;
        }

        public double getGiniLower() {
            return this.giniLower;
        }

        public void setGiniLower(double giniLower) {
            this.giniLower = giniLower;
        }

        public int getFrictionMoves() {
            return this.frictionMoves;
        }

        public void setFrictionMoves(int frictionMoves) {
            this.frictionMoves = frictionMoves;
        }

        public Duration getFrictionWindow() {
            return this.frictionWindow;
        }

        public void setFrictionWindow(Duration frictionWindow) {
            this.frictionWindow = frictionWindow;
        }

        public Duration getLoadWindow() {
            return this.loadWindow;
        }

        public void setLoadWindow(Duration loadWindow) {
            this.loadWindow = loadWindow;
        }

        public Map<String, List<String>> getAffinity() {
            return this.affinity;
        }

        public void setAffinity(Map<String, List<String>> affinity) {
            this.affinity = affinity;
        }
    }

    /**
     * The periodic aggregate query behind metrics, health and the endpoint.
     */
    public static class Stats {

        /**
         * How often each node reads the counts of jobs per task and state (scrapes and probes
         * read the cached result). The nodes share one count: a node counts anew only when the
         * stored one is older than half the interval. While counting takes longer than a
         * twentieth of it, the interval becomes twenty times the count's duration.
         */
        private Duration interval = QueueDefaults.STATS_INTERVAL;

        public Duration getInterval() {
            return this.interval;
        }

        public void setInterval(Duration interval) {
            this.interval = interval;
        }
    }

    /**
     * Encryption at rest of the payloads of the tasks with pgqueue.tasks.<name>.encrypted (or
     * {@code @QueueTask(encrypted = true)}): AES-GCM, each payload with its own nonce, bound to its task.
     */
    public static class Encryption {

        /**
         * Keys by id (letters, digits, '_' and '-'; at most 32 characters), each the base64 of 16, 24
         * or 32 random bytes, e.g. from `openssl rand -base64 32`. Keep an old key here after a
         * rotation until no stored payload names it. Give them from the environment or a secret
         * store, not from a file in the repository.
         */
        private Map<String, String> keys = new LinkedHashMap<>();

        /**
         * Id of the key new payloads are encrypted with; may be left out when there is one key.
         */
        private String key;

        /**
         * Role whose users see encrypted payloads decrypted in the console and the queues endpoint
         * (with Spring Security; they must also be allowed to see job data). Unset: the console and
         * the endpoint never decrypt, and show which key a payload is encrypted with.
         */
        private String readerRole;

        public Map<String, String> getKeys() {
            return this.keys;
        }

        public void setKeys(Map<String, String> keys) {
            this.keys = keys;
        }

        public String getKey() {
            return this.key;
        }

        public void setKey(String key) {
            this.key = key;
        }

        public String getReaderRole() {
            return this.readerRole;
        }

        public void setReaderRole(String readerRole) {
            this.readerRole = readerRole;
        }
    }

    /** The {@code queues} Actuator endpoint. */
    public static class Endpoint {

        /**
         * Whether the queues endpoint shows job data (handlers' error messages, schedule payloads)
         * when Spring Security is not on the class path to protect its reads. Without Spring Security
         * and without this, the endpoint shows them as "hidden".
         */
        private boolean allowUnauthenticatedJobData;

        public boolean isAllowUnauthenticatedJobData() {
            return this.allowUnauthenticatedJobData;
        }

        public void setAllowUnauthenticatedJobData(boolean allowUnauthenticatedJobData) {
            this.allowUnauthenticatedJobData = allowUnauthenticatedJobData;
        }
    }

    /**
     * The built-in interceptors of every enqueue and every attempt. They come first, in this order;
     * JobInterceptor beans follow in their @Order.
     */
    public static class Interceptors {

        /**
         * Whether the job id, the task and the attempt number are in the SLF4J MDC while an attempt
         * runs, under pgqueue.jobId, pgqueue.task and pgqueue.attempt.
         */
        private boolean logContext = true;

        /**
         * MDC keys whose values are carried from the thread that enqueues a job to the threads that
         * run its attempts, in the job's headers mdc.<key>, e.g. requestId, tenantId.
         */
        private List<String> carriedMdcKeys = new ArrayList<>();

        /**
         * Whether jobs run as the user whose request enqueued them: the authenticated user's name
         * travels in the header pgqueue.principal, and while an attempt runs the Spring Security
         * context holds that user as the application's UserDetailsService gives it then (needs Spring
         * Security and a UserDetailsService bean).
         */
        private boolean securityContext;

        public boolean isSecurityContext() {
            return this.securityContext;
        }

        public void setSecurityContext(boolean securityContext) {
            this.securityContext = securityContext;
        }

        public boolean isLogContext() {
            return this.logContext;
        }

        public void setLogContext(boolean logContext) {
            this.logContext = logContext;
        }

        public List<String> getCarriedMdcKeys() {
            return this.carriedMdcKeys;
        }

        public void setCarriedMdcKeys(List<String> carriedMdcKeys) {
            this.carriedMdcKeys = carriedMdcKeys;
        }
    }

    /**
     * The "queue" health indicator.
     */
    public static class Health {

        /**
         * Most claimed jobs past their lease deadline tolerated for longer than one rescue
         * interval before the health turns to the configured status.
         */
        private int maxStuckLeases = 0;

        /**
         * Oldest age of a due READY job tolerated before the health turns to the configured
         * status (per task: pgqueue.tasks.<name>.max-lag).
         */
        private Duration maxLag = QueueDefaults.MAX_LAG;

        /**
         * Oldest age of a transaction holding back cleanup (VACUUM) of the queue's database
         * tolerated before the health turns to the configured status.
         */
        private Duration maxTransactionAge = QueueDefaults.MAX_TRANSACTION_AGE;

        /**
         * Status reported when stuck leases, lag or the oldest transaction exceed their limits, e.g.
         * DOWN or OUT_OF_SERVICE.
         */
        private String status = "DOWN";

        public int getMaxStuckLeases() {
            return this.maxStuckLeases;
        }

        public void setMaxStuckLeases(int maxStuckLeases) {
            this.maxStuckLeases = maxStuckLeases;
        }

        public Duration getMaxLag() {
            return this.maxLag;
        }

        public Duration getMaxTransactionAge() {
            return this.maxTransactionAge;
        }

        public void setMaxTransactionAge(Duration maxTransactionAge) {
            this.maxTransactionAge = maxTransactionAge;
        }

        public void setMaxLag(Duration maxLag) {
            this.maxLag = maxLag;
        }

        public String getStatus() {
            return this.status;
        }

        public void setStatus(String status) {
            this.status = status;
        }
    }

    /**
     * One shard's database, reached through a connection pool of its own.
     */
    public static class Shard {

        /**
         * JDBC URL of the shard's database.
         */
        private String url;

        /**
         * Login username of the shard's database.
         */
        private String username;

        /**
         * Login password of the shard's database.
         */
        private String password;

        /**
         * Maximum number of connections to the shard's database.
         */
        private int maximumPoolSize = QueueDefaults.SHARD_POOL_SIZE;

        public String getUrl() {
            return this.url;
        }

        public void setUrl(String url) {
            this.url = url;
        }

        public String getUsername() {
            return this.username;
        }

        public void setUsername(String username) {
            this.username = username;
        }

        public String getPassword() {
            return this.password;
        }

        public void setPassword(String password) {
            this.password = password;
        }

        public int getMaximumPoolSize() {
            return this.maximumPoolSize;
        }

        public void setMaximumPoolSize(int maximumPoolSize) {
            this.maximumPoolSize = maximumPoolSize;
        }
    }

    /**
     * One worker pool.
     */
    public static class Pool {

        /**
         * Maximum number of jobs per task the pool buffers beyond those running.
         */
        private int maxPrefetch = QueueDefaults.MAX_PREFETCH;

        /**
         * How much work, in execution time, the pool keeps buffered per task: tasks faster than
         * this are prefetched, slower ones are not.
         */
        private Duration prefetchWindow = QueueDefaults.PREFETCH_WINDOW;

        /**
         * Budget of the payloads and headers (their JSON text) of the jobs the pool buffers per
         * task: the prefetch depth is bounded by it divided by the average size of the task's
         * claimed jobs, so large payloads get a shallower buffer.
         */
        private DataSize maxPrefetchBytes = DataSize.ofBytes(QueueDefaults.MAX_PREFETCH_BYTES);

        public int getMaxPrefetch() {
            return this.maxPrefetch;
        }

        public void setMaxPrefetch(int maxPrefetch) {
            this.maxPrefetch = maxPrefetch;
        }

        public Duration getPrefetchWindow() {
            return this.prefetchWindow;
        }

        public void setPrefetchWindow(Duration prefetchWindow) {
            this.prefetchWindow = prefetchWindow;
        }

        public DataSize getMaxPrefetchBytes() {
            return this.maxPrefetchBytes;
        }

        public void setMaxPrefetchBytes(DataSize maxPrefetchBytes) {
            this.maxPrefetchBytes = maxPrefetchBytes;
        }
    }

    /**
     * Overrides of one task's settings; unset values keep the annotation's.
     */
    public static class Task {

        /**
         * Worker pool that runs the task.
         */
        private String pool;

        /**
         * Maximum number of the task's jobs running at once on one node.
         */
        private Integer concurrency;

        /**
         * How long one attempt may run before it is interrupted and fails.
         */
        private Duration timeout;

        /**
         * Maximum number of attempts of a job.
         */
        private Integer maxAttempts;

        /**
         * Default priority of the task's jobs (-1000 to 1000, higher first).
         */
        private Integer priority;

        /**
         * How late after becoming due a job may start.
         */
        private Duration delayTolerance;

        /**
         * SpEL expression on the payload that gives a job's dedup key.
         */
        private String dedupKey;

        /**
         * What happens when an active job already holds the dedup key; unique: a finished job holds
         * it too, for unique-period after its enqueue, in the unique-states.
         */
        private QueueTask.DedupMode dedupPolicy;

        /**
         * With dedup-policy unique: how long after its enqueue a finished job holds its dedup key.
         */
        private Duration uniquePeriod;

        /**
         * With dedup-policy unique: the final states (completed, failed, cancelled) in which a finished
         * job holds its dedup key. Completed when unset.
         */
        private List<JobState> uniqueStates;

        public Duration getUniquePeriod() {
            return this.uniquePeriod;
        }

        public void setUniquePeriod(Duration uniquePeriod) {
            this.uniquePeriod = uniquePeriod;
        }

        public List<JobState> getUniqueStates() {
            return this.uniqueStates;
        }

        public void setUniqueStates(List<JobState> uniqueStates) {
            this.uniqueStates = uniqueStates;
        }

        private final Retry retry = new Retry();

        /**
         * Oldest age of a due READY job of this task tolerated by the health indicator.
         */
        private Duration maxLag;

        /**
         * Maximum number of the task's jobs running at once across all nodes (0 for no limit). Give
         * every node that runs the task the same value.
         */
        private Integer globalConcurrency;

        /**
         * Maximum number of the task's jobs starting per period across all nodes, as permits/period
         * (e.g. 100/1s, 6000/1m); empty for no limit.
         */
        private String rate;

        /**
         * How many jobs may start at once after an idle spell under the rate limit (default a tenth
         * of the permits per period, at least 1).
         */
        private Integer rateBurst;

        /**
         * How claims treat the groups of the task's jobs: none, fair (round-robin across groups) or
         * sequence (one job of a group at a time, in enqueue order).
         */
        private QueueTask.GroupMode groups;

        /**
         * SpEL expression on the payload that gives a job's group (e.g. tenantId); makes the claims
         * fair unless groups is set.
         */
        private String groupKey;

        /**
         * Maximum number of jobs of one group running at once across all nodes (fair groups; 0 for
         * no limit); makes the claims fair unless groups is set.
         */
        private Integer groupConcurrency;

        /**
         * Whether a sequence's job that fails for good holds its group until re-run (block) or lets
         * the next one run (skip).
         */
        private TaskGroups.OnFailure sequenceOnFailure;

        /**
         * Whether each attempt of the task's jobs is kept with the job (start, end, node, outcome,
         * error, the lines its handler logs through TaskContext), written with each attempt's outcome.
         */
        private Boolean history;

        /**
         * Tags every job of the task gets, before those its enqueue adds: labels operators filter on
         * in the console (each 1 to 64 characters, no commas).
         */
        private List<String> tags;

        /**
         * Whether the task's payloads are encrypted at rest with pgqueue.encryption.keys: stored
         * encrypted, decrypted for the handler. Declare it on every node that enqueues the task.
         */
        private Boolean encrypted;

        /**
         * For a ChunkHandler: the most jobs per call (at least 1, at most the task's concurrency).
         */
        private Integer chunkSize;

        /**
         * For a ChunkHandler: how long the first job of a chunk waits for more before the call.
         */
        private Duration chunkLinger;

        public Integer getChunkSize() {
            return this.chunkSize;
        }

        public void setChunkSize(Integer chunkSize) {
            this.chunkSize = chunkSize;
        }

        public Duration getChunkLinger() {
            return this.chunkLinger;
        }

        public void setChunkLinger(Duration chunkLinger) {
            this.chunkLinger = chunkLinger;
        }

        /**
         * Cron expression that enqueues a job of the task at every slot (six fields, e.g. 0 0 3 * * *,
         * or a macro such as @daily); each slot fires once across all nodes.
         */
        private String cron;

        /**
         * Time zone the cron expression is read in (default UTC).
         */
        private ZoneId zone;

        /**
         * What the cron schedule does with slots missed while no node ran it.
         */
        private CatchUp catchUp;

        public String getCron() {
            return this.cron;
        }

        public void setCron(String cron) {
            this.cron = cron;
        }

        public ZoneId getZone() {
            return this.zone;
        }

        public void setZone(ZoneId zone) {
            this.zone = zone;
        }

        public CatchUp getCatchUp() {
            return this.catchUp;
        }

        public void setCatchUp(CatchUp catchUp) {
            this.catchUp = catchUp;
        }

        public QueueTask.GroupMode getGroups() {
            return this.groups;
        }

        public void setGroups(QueueTask.GroupMode groups) {
            this.groups = groups;
        }

        public String getGroupKey() {
            return this.groupKey;
        }

        public void setGroupKey(String groupKey) {
            this.groupKey = groupKey;
        }

        public Integer getGroupConcurrency() {
            return this.groupConcurrency;
        }

        public void setGroupConcurrency(Integer groupConcurrency) {
            this.groupConcurrency = groupConcurrency;
        }

        public Boolean getHistory() {
            return this.history;
        }

        public void setHistory(Boolean history) {
            this.history = history;
        }

        public List<String> getTags() {
            return this.tags;
        }

        public Boolean getEncrypted() {
            return this.encrypted;
        }

        public void setEncrypted(Boolean encrypted) {
            this.encrypted = encrypted;
        }

        public void setTags(List<String> tags) {
            this.tags = tags;
        }

        public TaskGroups.OnFailure getSequenceOnFailure() {
            return this.sequenceOnFailure;
        }

        public void setSequenceOnFailure(TaskGroups.OnFailure sequenceOnFailure) {
            this.sequenceOnFailure = sequenceOnFailure;
        }

        public Integer getGlobalConcurrency() {
            return this.globalConcurrency;
        }

        public void setGlobalConcurrency(Integer globalConcurrency) {
            this.globalConcurrency = globalConcurrency;
        }

        public String getRate() {
            return this.rate;
        }

        public void setRate(String rate) {
            this.rate = rate;
        }

        public Integer getRateBurst() {
            return this.rateBurst;
        }

        public void setRateBurst(Integer rateBurst) {
            this.rateBurst = rateBurst;
        }

        public Duration getMaxLag() {
            return this.maxLag;
        }

        public void setMaxLag(Duration maxLag) {
            this.maxLag = maxLag;
        }

        public String getPool() {
            return this.pool;
        }

        public void setPool(String pool) {
            this.pool = pool;
        }

        public Integer getConcurrency() {
            return this.concurrency;
        }

        public void setConcurrency(Integer concurrency) {
            this.concurrency = concurrency;
        }

        public Duration getTimeout() {
            return this.timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }

        public Integer getMaxAttempts() {
            return this.maxAttempts;
        }

        public void setMaxAttempts(Integer maxAttempts) {
            this.maxAttempts = maxAttempts;
        }

        public Integer getPriority() {
            return this.priority;
        }

        public void setPriority(Integer priority) {
            this.priority = priority;
        }

        public Duration getDelayTolerance() {
            return this.delayTolerance;
        }

        public void setDelayTolerance(Duration delayTolerance) {
            this.delayTolerance = delayTolerance;
        }

        public String getDedupKey() {
            return this.dedupKey;
        }

        public void setDedupKey(String dedupKey) {
            this.dedupKey = dedupKey;
        }

        public QueueTask.DedupMode getDedupPolicy() {
            return this.dedupPolicy;
        }

        public void setDedupPolicy(QueueTask.DedupMode dedupPolicy) {
            this.dedupPolicy = dedupPolicy;
        }

        public Retry getRetry() {
            return this.retry;
        }
    }

    /**
     * Overrides of a task's retry backoff; unset values keep the annotation's.
     */
    public static class Retry {

        /**
         * Shape of the backoff.
         */
        private QueueTask.Backoff.Kind kind;

        /**
         * Delay after the first failure.
         */
        private Duration delay;

        /**
         * Increase per further failure (linear backoff).
         */
        private Duration step;

        /**
         * Growth factor (exponential backoff).
         */
        private Double multiplier;

        /**
         * Cap of the delay.
         */
        private Duration maxDelay;

        /**
         * Fraction of the delay that is randomised (exponential backoff), 0 to 1.
         */
        private Double jitter;

        /**
         * Name of a RetryPolicy bean (custom backoff).
         */
        private String policyBean;

        public QueueTask.Backoff.Kind getKind() {
            return this.kind;
        }

        public void setKind(QueueTask.Backoff.Kind kind) {
            this.kind = kind;
        }

        public Duration getDelay() {
            return this.delay;
        }

        public void setDelay(Duration delay) {
            this.delay = delay;
        }

        public Duration getStep() {
            return this.step;
        }

        public void setStep(Duration step) {
            this.step = step;
        }

        public Double getMultiplier() {
            return this.multiplier;
        }

        public void setMultiplier(Double multiplier) {
            this.multiplier = multiplier;
        }

        public Duration getMaxDelay() {
            return this.maxDelay;
        }

        public void setMaxDelay(Duration maxDelay) {
            this.maxDelay = maxDelay;
        }

        public Double getJitter() {
            return this.jitter;
        }

        public void setJitter(Double jitter) {
            this.jitter = jitter;
        }

        public String getPolicyBean() {
            return this.policyBean;
        }

        public void setPolicyBean(String policyBean) {
            this.policyBean = policyBean;
        }
    }
}
