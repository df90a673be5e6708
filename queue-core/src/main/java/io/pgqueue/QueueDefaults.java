package io.pgqueue;

import java.time.Duration;

import io.pgqueue.retry.RetryPolicy;

/**
 * Default values of the queue's settings, defined once here. The Spring Boot properties refer to
 * these constants.
 */
public final class QueueDefaults {

    /** Default database schema of the queue's tables. */
    public static final String SCHEMA = "pgqueue";

    /** Default upper bound of a job's serialized payload: 256 KiB. */
    public static final int MAX_PAYLOAD_BYTES = 256 * 1024;

    /** Default number of attempts a job gets before it fails for good. */
    public static final int MAX_ATTEMPTS = 20;

    /** Lowest allowed job priority. */
    public static final int MIN_PRIORITY = -1000;

    /** Highest allowed job priority (claimed first). */
    public static final int MAX_PRIORITY = 1000;

    /** Default job priority. */
    public static final int PRIORITY = 0;

    /** Default lease of a claimed job; a worker renews it by heartbeats while the handler runs. */
    public static final Duration LEASE = Duration.ofSeconds(30);

    /** Default timeout of each statement the queue runs itself. */
    public static final Duration STATEMENT_TIMEOUT = Duration.ofSeconds(30);

    /** Default time completed jobs are kept before retention deletes them. */
    public static final Duration COMPLETED_RETENTION = Duration.ofHours(1);

    /** Default time failed jobs are kept before retention deletes them. */
    public static final Duration FAILED_RETENTION = Duration.ofDays(7);

    /** Default time cancelled jobs are kept before retention deletes them. */
    public static final Duration CANCELLED_RETENTION = Duration.ofDays(7);

    /** Default number of rows one retention statement deletes, or one rescue transaction returns, at most. */
    public static final int MAINTENANCE_BATCH_SIZE = 1000;

    /** Default number of jobs of one task that one claim takes at most. */
    public static final int CLAIM_BATCH_SIZE = 1000;

    /** Default number of leases one heartbeat statement renews at most. */
    public static final int HEARTBEAT_BATCH_SIZE = 1000;

    /** Default number of jobs of one task running at once on one node. */
    public static final int CONCURRENCY = 4;

    /** Default time one attempt may run before it is interrupted and fails. */
    public static final Duration TASK_TIMEOUT = Duration.ofMinutes(30);

    /** Default name of the worker pool a task runs in. */
    public static final String POOL = "default";

    /** Default interval of the fallback poll when no notification arrives. */
    public static final Duration POLL_INTERVAL = Duration.ofSeconds(2);

    /** Default interval of lease heartbeats (renewals) for claimed jobs; a third of the lease. */
    public static final Duration HEARTBEAT_INTERVAL = Duration.ofSeconds(10);

    /** Default interval between two rescues of expired leases. */
    public static final Duration RESCUE_INTERVAL = Duration.ofSeconds(5);

    /** Default interval between two retention runs. */
    public static final Duration RETENTION_INTERVAL = Duration.ofMinutes(1);

    /** Default interval between two VACUUMs of the active-job table issued by the queue; zero disables them. */
    public static final Duration VACUUM_INTERVAL = Duration.ofSeconds(10);

    /** Default time running handlers get to finish when a node shuts down. */
    public static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);

    /** Default upper bound of prefetched (buffered, not yet running) jobs per task and node. */
    public static final int MAX_PREFETCH = 1000;

    /**
     * Default budget of the payloads and headers of prefetched jobs per task and node, in bytes: the
     * prefetch depth is bounded so that buffered jobs of the task's average size fit in it.
     */
    public static final long MAX_PREFETCH_BYTES = 16L * 1024 * 1024;

    /** Default time's worth of work a node prefetches for a task, measured by its execution times. */
    public static final Duration PREFETCH_WINDOW = Duration.ofMillis(200);

    /** Default number of outcomes (or starts) written in one statement at most. */
    public static final int WRITE_BATCH_SIZE = 1000;

    /** Default delay before the second attempt of a failed job. */
    public static final Duration RETRY_DELAY = Duration.ofSeconds(1);

    /** Default growth factor of the delay between attempts (exponential backoff). */
    public static final double RETRY_MULTIPLIER = 2.0;

    /** Default cap of the delay between attempts. */
    public static final Duration RETRY_MAX_DELAY = Duration.ofHours(1);

    /** Default fraction of the delay between attempts that is randomised (exponential backoff). */
    public static final double RETRY_JITTER = 0.2;

    /**
     * Default retry policy: exponential from {@link #RETRY_DELAY}, growing by {@link #RETRY_MULTIPLIER},
     * capped at {@link #RETRY_MAX_DELAY}, with {@link #RETRY_JITTER} jitter.
     */
    public static final RetryPolicy RETRY_POLICY = RetryPolicy.exponential(RETRY_DELAY, RETRY_MULTIPLIER,
            RETRY_MAX_DELAY, RETRY_JITTER);

    /** Default interval of the aggregate statistics query behind metrics, health and the endpoint. */
    public static final Duration STATS_INTERVAL = Duration.ofSeconds(10);

    /**
     * Default age of the database's oldest transaction holding back cleanup above which the health
     * indicator reports a problem.
     */
    public static final Duration MAX_TRANSACTION_AGE = Duration.ofMinutes(10);

    /** Default age of the oldest due job above which the health indicator reports a problem. */
    public static final Duration MAX_LAG = Duration.ofMinutes(5);

    /** Maximum length of a task name (it becomes part of a NOTIFY channel name). */
    public static final int MAX_TASK_NAME_LENGTH = 48;

    /** Maximum length of a dedup key. */
    public static final int MAX_DEDUP_KEY_LENGTH = 512;

    /** Maximum length of a job's group key ({@link EnqueueOptions#withGroup}). */
    public static final int MAX_GROUP_KEY_LENGTH = 256;

    /** Maximum length of a workflow's name and of a step's name ({@link Workflow}). */
    public static final int MAX_WORKFLOW_NAME_LENGTH = 128;

    /** Maximum number of jobs in one workflow or batch ({@link Workflow}, {@link Batch}). */
    public static final int MAX_WORKFLOW_JOBS = 10_000;

    /** Maximum size of a job's recorded result in bytes of JSON ({@link TaskContext#recordResult(Object)}). */
    public static final int MAX_RESULT_BYTES = 16_384;

    /** Longest name of a signal to a durable handler ({@link TaskContext#awaitSignal}, {@link QueueClient#signal}). */
    public static final int MAX_SIGNAL_NAME_LENGTH = 190;

    /** Attempts a job's history keeps ({@link JobAttempt}); older ones make room for newer ones. */
    public static final int MAX_HISTORY_ATTEMPTS = 25;

    /** Lines an attempt's log keeps ({@link TaskContext#log(String)}); further lines are counted, not kept. */
    public static final int MAX_LOG_LINES = 100;

    /** Characters of one line of an attempt's log; a longer line is cut. */
    public static final int MAX_LOG_LINE_LENGTH = 1_000;

    /** How long the first job of a chunk waits for more ({@link ChunkHandler}), unless the task says. */
    public static final Duration CHUNK_LINGER = Duration.ofMillis(100);

    /** The header that holds the id of a job's workflow. */
    public static final String WORKFLOW_HEADER = "pgqueue.workflow";

    /** The header that holds a job's step name in its workflow. */
    public static final String STEP_HEADER = "pgqueue.workflow.step";

    /** Header of a child job ({@link TaskContext#spawn}): the id of the job that spawned it. */
    public static final String PARENT_HEADER = "pgqueue.parent";

    /**
     * Header of a child job spawned detached ({@link TaskContext#spawnDetached}): it is not
     * cancelled with its parent.
     */
    public static final String PARENT_DETACHED_HEADER = "pgqueue.parent.detached";

    /** The header that holds the names of the steps a workflow's step comes after, as a JSON array. */
    public static final String AFTER_HEADER = "pgqueue.workflow.after";

    /** The header a job released after its dependencies gets: how many of them completed. */
    public static final String DEPENDENCIES_SUCCEEDED_HEADER = "pgqueue.dependencies.succeeded";

    /** The header a job released after its dependencies gets: how many of them failed or were cancelled. */
    public static final String DEPENDENCIES_FAILED_HEADER = "pgqueue.dependencies.failed";

    /** The header that holds a job's group key ({@link EnqueueOptions#withGroup}, {@link TaskGroups}). */
    public static final String GROUP_HEADER = "pgqueue.group";

    /** The header that holds a job's tags, comma-separated ({@link JobTags}). */
    public static final String TAGS_HEADER = "pgqueue.tags";

    /** The group of a job of a task with {@link TaskGroups} that was enqueued without one. */
    public static final String DEFAULT_GROUP = "default";

    /**
     * The header that marks a job of a sequence that blocks on failure ({@link TaskGroups.OnFailure#BLOCK}),
     * with the value {@code block}; set at enqueue.
     */
    public static final String SEQUENCE_HEADER = "pgqueue.sequence";

    /**
     * Number of partitions of an installation, recorded in its schema when it is created. Enough for
     * about a hundred shards with a few percent of imbalance between them; a partition is the unit
     * that moves between shards.
     */
    public static final int PARTITIONS = 1024;

    /** Name of the shard on the queue's own DataSource, which also coordinates the others. */
    public static final String MAIN_SHARD = "main";

    /**
     * Default maximum number of connections to a shard configured by URL: a producer per pool, the
     * completer, the lease keeper, the listener and maintenance each hold one at times, and
     * enqueues take the rest.
     */
    public static final int SHARD_POOL_SIZE = 10;

    /** How long an enqueue waits for a moving partition to settle on its new shard before it fails. */
    public static final Duration PARTITION_MOVE_WAIT = Duration.ofSeconds(10);

    /**
     * How long a partition move waits for the partition's jobs that workers hold on the source
     * shard; those still running after it finish there.
     */
    public static final Duration MOVE_DRAIN_TIMEOUT = Duration.ofSeconds(30);

    /** How often each node looks for journaled partition moves whose node died, to finish them. */
    public static final Duration MOVE_RESUME_INTERVAL = Duration.ofSeconds(5);

    /** How often a node checks the partition map's version (it also refreshes on notification). */
    public static final Duration PARTITION_MAP_REFRESH = Duration.ofSeconds(1);

    /**
     * How often each node looks for outbox rows left unrelayed (by a node that stopped before
     * relaying them); rows written by this node are relayed on commit.
     */
    public static final Duration OUTBOX_RELAY_INTERVAL = Duration.ofMillis(500);

    /**
     * How often the partition balancer decides. Long enough for a move (about a second per 10,000
     * queued jobs) and the map's refresh to show in the next round's loads.
     */
    public static final Duration BALANCER_INTERVAL = Duration.ofSeconds(10);

    /**
     * Over how long the balancer measures each partition's weight (jobs enqueued per second): long
     * enough that bursts of a few seconds average out, short enough to follow a day's load.
     */
    public static final Duration BALANCER_LOAD_WINDOW = Duration.ofMinutes(5);

    /** Partitions the balancer moves per round at most: one, so that load shifts smoothly. */
    public static final int BALANCER_MOVES_PER_ROUND = 1;

    /**
     * A shard is overloaded while the median age of its oldest due job stays above this: far
     * beyond the claim cadence of a healthy shard (milliseconds, or the poll interval), yet short
     * enough that users have not noticed yet.
     */
    public static final Duration BALANCER_OVERLOAD_LAG = Duration.ofSeconds(10);

    /** Window of the median filter over the overload signal: a minute, so spikes of up to half of it pass. */
    public static final Duration BALANCER_OVERLOAD_WINDOW = Duration.ofMinutes(1);

    /**
     * Gini index of the shard loads above which the balancer evens them out: on four shards, about
     * the heaviest 40 % above the mean and the lightest 40 % below.
     */
    public static final double BALANCER_GINI_UPPER = 0.15;

    /** Gini index below which it stops again: on four shards, within about 13 % of the mean. */
    public static final double BALANCER_GINI_LOWER = 0.05;

    /** Moves of one partition allowed within the friction window. */
    public static final int BALANCER_FRICTION_MOVES = 3;

    /** The friction window: a partition moved three times within an hour stays where it is. */
    public static final Duration BALANCER_FRICTION_WINDOW = Duration.ofHours(1);

    private QueueDefaults() {
    }
}
