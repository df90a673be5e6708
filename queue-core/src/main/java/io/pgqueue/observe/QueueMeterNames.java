package io.pgqueue.observe;

/**
 * Names of every meter and observation pgqueue publishes, and their tags. Documented in one table
 * in {@code docs/monitoring.md}. Tags are bounded: task, pool, state, outcome — never job ids or
 * payload values. {@link MicrometerQueueEvents} registers the counters and timers of events,
 * {@link QueueMeterBinder} the gauges and the counters at zero, {@link QueueObservations} the
 * observations.
 */
public final class QueueMeterNames {

    /** Gauge: jobs per task and state (ready, scheduled, starting, running, failed). Tags: task, state. */
    public static final String JOBS = "pgqueue.jobs";

    /** Gauge: seconds since the oldest due READY job of a task became due (queue lag). Tag: task. */
    public static final String LAG = "pgqueue.jobs.lag";

    /** Gauge: claimed jobs past their lease deadline, not yet rescued. Tag: task. */
    public static final String STUCK = "pgqueue.jobs.stuck";

    /**
     * Gauge: a task's limit across nodes: its global concurrency (limit {@code concurrency}),
     * or its rate in starts per second (limit {@code rate}). Tags: task, limit. Only tasks with such limits.
     */
    public static final String TASK_LIMIT = "pgqueue.tasks.limit";

    /**
     * Gauge: a task's due READY jobs waiting on its own limit (see {@link LimitStatus}); 0 when the
     * limit is not what holds them. Tag: task. Only tasks with limits across nodes.
     */
    public static final String WAITING_ON_LIMIT = "pgqueue.jobs.waiting.limit";

    /**
     * Gauge: seconds the database's oldest transaction that holds back cleanup (VACUUM of the job
     * table) has been open; a long one makes claims slow down.
     */
    public static final String OLDEST_TRANSACTION = "pgqueue.db.oldest.transaction";

    /** Gauge: active jobs on a shard (sharded queues). */
    public static final String SHARD_JOBS = "pgqueue.shard.jobs";

    /** Gauge: seconds since a shard's oldest due READY job became due (sharded queues). */
    public static final String SHARD_LAG = "pgqueue.shard.lag";

    /** Gauge: the Gini index of the shard loads at the balancer's last round on this node (NaN before one). */
    public static final String BALANCER_GINI = "pgqueue.balancer.gini";

    /** Counter: partitions the balancer moved from this node, tagged {@code reason} (DRAIN, OVERLOAD, GINI). */
    public static final String BALANCER_MOVES = "pgqueue.balancer.moves";

    /** Counter: moves the balancer on this node passed over because the partition moved too often (friction). */
    public static final String BALANCER_BLOCKED = "pgqueue.balancer.blocked";

    /** Gauge: 1 while this node runs the balancer, else 0. */
    public static final String BALANCER_LEADER = "pgqueue.balancer.leader";

    /** Counter: jobs enqueued, by what the enqueue did (created, kept_existing, replaced, merged, rerun_scheduled). Tags: task, outcome. */
    public static final String ENQUEUED = "pgqueue.jobs.enqueued";

    /** Counter: jobs claimed by this node. Tags: task, pool. */
    public static final String CLAIMED = "pgqueue.jobs.claimed";

    /** Counter: jobs that completed on this node. Tag: task. */
    public static final String COMPLETED = "pgqueue.jobs.completed";

    /** Counter: jobs that failed for good on this node (terminal error or no attempts left). Tag: task. */
    public static final String FAILED = "pgqueue.jobs.failed";

    /** Counter: jobs back to READY after an attempt (a retry, a dedup re-run, or a release at shutdown). Tag: task. */
    public static final String RETRIED = "pgqueue.jobs.retried";

    /** Counter: jobs taken back by this node's rescuer after their lease expired, by new state. Tags: task, state. */
    public static final String RESCUED = "pgqueue.jobs.rescued";

    /** Counter: jobs cancelled (by request, or while running). Tag: task. */
    public static final String CANCELLED = "pgqueue.jobs.cancelled";

    /** Counter: enqueues that met an active job with the same dedup key. Tags: task, outcome. */
    public static final String DEDUPLICATED = "pgqueue.jobs.deduplicated";

    /** Counter: fenced writes of this node that changed nothing because the lease was lost. Tag: task. */
    public static final String LEASES_LOST = "pgqueue.leases.lost";

    /** Counter: jobs that started after their delay-tolerance deadline (an SLO miss). Tag: task. */
    public static final String DEADLINE_MISSED = "pgqueue.jobs.deadline.missed";

    /** Timer: handler execution time. Tags: task, outcome (completed, retry, failed, cancelled, released). */
    public static final String EXECUTION = "pgqueue.job.execution";

    /** Timer: time from a job becoming due (schedule time) to its handler starting. Tag: task. */
    public static final String QUEUE_WAIT = "pgqueue.job.queue.wait";

    /** Timer: time from enqueue to handler start, for jobs due at once (the NOTIFY path). Tag: task. */
    public static final String START_LATENCY = "pgqueue.job.start.latency";

    /** Gauge: handler slots of a pool (sum of its tasks' concurrency). Tag: pool. */
    public static final String POOL_CAPACITY = "pgqueue.pool.capacity";

    /** Gauge: handlers holding a slot of a pool. Tag: pool. */
    public static final String POOL_BUSY = "pgqueue.pool.busy";

    /**
     * Gauge: handlers of a pool still running past their timeout, which ignored its interrupt
     * (their jobs are rescued and run again). Tag: pool.
     */
    public static final String POOL_HUNG = "pgqueue.pool.hung";

    /** Gauge: jobs claimed into a pool's buffer, not yet running. Tag: pool. */
    public static final String POOL_BUFFERED = "pgqueue.pool.buffered";

    /** Gauge: prefetch depth the adaptive logic chose for a task. Tags: pool, task. */
    public static final String POOL_PREFETCH = "pgqueue.pool.prefetch";

    /** Distribution summary: jobs per claim statement. Tag: pool. */
    public static final String CLAIM_BATCH = "pgqueue.claim.batch";

    /** Timer: latency of a claim statement. Tag: pool. */
    public static final String CLAIM_LATENCY = "pgqueue.claim.latency";

    /** Observation: one enqueue call (one job or a batch). Low-cardinality key: task. */
    public static final String ENQUEUE_OBSERVATION = "pgqueue.enqueue";

    /** Observation: one job execution, continuing the trace of its enqueue. Low-cardinality keys: task, outcome. */
    public static final String EXECUTE_OBSERVATION = "pgqueue.execute";

    /** Counter: workflows and batches this node enqueued, by workflow name. */
    public static final String WORKFLOWS_STARTED = "pgqueue.workflows.started";

    /**
     * Function counter: workflows that ended, by outcome (completed, failed, cancelled), across all
     * nodes since the schema was created (every node reports the same value).
     */
    public static final String WORKFLOWS_FINISHED = "pgqueue.workflows.finished";

    /** Gauge: workflows running now, across all nodes. */
    public static final String WORKFLOWS_RUNNING = "pgqueue.workflows.running";

    /** Gauge: jobs of durable handlers suspended now, by {@link #TAG_REASON} ({@code sleep}, {@code signal}). */
    public static final String JOBS_SUSPENDED = "pgqueue.jobs.suspended";

    /** Tag: a workflow's name. */
    public static final String TAG_WORKFLOW = "workflow";

    /** Tag name of the task. */
    public static final String TAG_TASK = "task";

    /** Tag name of the pool. */
    public static final String TAG_POOL = "pool";

    /** Tag name of the state. */
    public static final String TAG_STATE = "state";

    /** Tag: the shard's name. */
    public static final String TAG_SHARD = "shard";

    /** Tag: why the balancer moved a partition ({@code DRAIN}, {@code OVERLOAD}, {@code GINI}). */
    public static final String TAG_REASON = "reason";

    /** Tag name of the outcome. */
    public static final String TAG_OUTCOME = "outcome";

    /** Tag name of a task's limit: {@code concurrency} or {@code rate}. */
    public static final String TAG_LIMIT = "limit";

    /** Tag name of a message queue. */
    public static final String TAG_QUEUE = "queue";

    /** Gauge: messages of a message queue that can be received now. */
    public static final String MESSAGES_VISIBLE = "pgqueue.messages.visible";

    /** Gauge: messages of a message queue received and not yet deleted or visible again. */
    public static final String MESSAGES_IN_FLIGHT = "pgqueue.messages.in.flight";

    /** Gauge: messages of a message queue whose delay has not passed. */
    public static final String MESSAGES_DELAYED = "pgqueue.messages.delayed";

    /** Gauge: age of a message queue's oldest message, seconds. */
    public static final String MESSAGES_OLDEST_AGE = "pgqueue.messages.oldest.age";

    /** Counter: messages sent to a message queue by this node. */
    public static final String MESSAGES_SENT = "pgqueue.messages.sent";

    /** Counter: messages received from a message queue by this node. */
    public static final String MESSAGES_RECEIVED = "pgqueue.messages.received";

    /** Counter: messages deleted from a message queue by this node. */
    public static final String MESSAGES_DELETED = "pgqueue.messages.deleted";

    /** Counter: receive calls on a message queue by this node, by outcome (messages, empty). */
    public static final String MESSAGES_RECEIVES = "pgqueue.messages.receives";

    /** Timer: from a message's send to its first receive (write→read delay). */
    public static final String MESSAGES_DELIVERY_DELAY = "pgqueue.messages.delivery.delay";

    private QueueMeterNames() {
    }
}
