package io.pgqueue;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import io.pgqueue.schedule.CatchUp;
import org.springframework.stereotype.Component;

/**
 * Marks a class that implements {@link TaskHandler} as the handler of a task type, with the task's
 * settings next to its code. It is a Spring {@link Component}: component scanning registers it as
 * a bean, like {@code @Service}. Every setting can be overridden in {@code application.yml} under
 * {@code pgqueue.tasks.<name>.*}. Durations are written as in Spring Boot properties
 * ({@code "500ms"}, {@code "30s"}, {@code "5m"}, or ISO-8601 {@code "PT5M"}).
 *
 * <pre>{@code
 * @QueueTask(name = "send-push", concurrency = 8, delayTolerance = "1s", maxAttempts = 5)
 * class SendPushTask implements TaskHandler<PushRequest> { ... }
 * }</pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Component
public @interface QueueTask {

    /**
     * The stable task name stored with every job: letters, digits and {@code . _ : -}, at most 48
     * characters. Renaming it orphans the jobs already queued under the old name.
     * @return the task name
     */
    String name();

    /**
     * The worker pool that runs this task; pools are configured under {@code pgqueue.pools.<pool>}.
     * @return the pool name
     */
    String pool() default "default";

    /**
     * Maximum number of jobs of this task running at once on one node; {@code -1} for the default
     * ({@link QueueDefaults#CONCURRENCY}).
     * @return the concurrency
     */
    int concurrency() default -1;

    /**
     * How long one attempt may run before its handler is interrupted and the attempt fails; empty
     * for the default ({@link QueueDefaults#TASK_TIMEOUT}).
     * @return the timeout
     */
    String timeout() default "";

    /**
     * Maximum number of attempts of a job; {@code -1} for the default ({@link QueueDefaults#MAX_ATTEMPTS}).
     * @return the maximum attempts
     */
    int maxAttempts() default -1;

    /**
     * How long to wait before retrying a failed attempt.
     * @return the backoff
     */
    Backoff retry() default @Backoff;

    /**
     * How late after becoming due a job may start (its deadline orders the claim); empty for none.
     * @return the delay tolerance
     */
    String delayTolerance() default "";

    /**
     * Default priority of the task's jobs, between -1000 and 1000; higher runs first.
     * @return the priority
     */
    int priority() default QueueDefaults.PRIORITY;

    /**
     * A SpEL expression evaluated against the payload that gives each job's dedup key (e.g.
     * {@code "'folder-' + folderId"}); empty for none. An explicit key given at enqueue wins.
     * @return the expression
     */
    String dedupKey() default "";

    /**
     * What happens when an active job already holds the dedup key.
     * @return the policy
     */
    DedupMode dedupPolicy() default DedupMode.KEEP_EXISTING;

    /**
     * With {@link DedupMode#UNIQUE}: how long after its enqueue a finished job holds its key, e.g.
     * {@code "10m"}; required then.
     * @return the period, or empty
     */
    String uniquePeriod() default "";

    /**
     * With {@link DedupMode#UNIQUE}: the final states in which a finished job holds its key.
     * @return the states
     */
    JobState[] uniqueStates() default { JobState.COMPLETED };

    /**
     * Exception types that fail a job at once, without retries ({@link TerminalTaskException} always does).
     * @return the terminal exception types
     */
    Class<? extends Throwable>[] terminal() default {};

    /**
     * Maximum number of this task's jobs running at once across all nodes; {@code 0} for no such
     * limit. Claims count the task's running jobs under a lock of the task, so concurrent claims never
     * overshoot, and a dead node's jobs hold their slots only until their leases expire. Give every
     * node that runs the task the same limit.
     * @return the global concurrency, or 0
     */
    int globalConcurrency() default 0;

    /**
     * Maximum number of this task's jobs starting per period across all nodes, as
     * {@code permits/period} ({@code "100/1s"}, {@code "6000/1m"}); empty for no such limit. Starts
     * are spaced evenly; after an idle spell up to {@link #rateBurst()} start at once.
     * @return the rate limit, or empty
     */
    String rate() default "";

    /**
     * How many jobs may start at once after an idle spell under {@link #rate()}; {@code 0} for the
     * default, a tenth of the permits per period (at least 1).
     * @return the burst, or 0
     */
    int rateBurst() default 0;

    /**
     * How claims treat the groups of this task's jobs (see {@link TaskGroups}); {@link GroupMode#NONE}
     * ignores groups unless {@link #groupKey()} or {@link #groupConcurrency()} is set, which makes
     * the claims {@link GroupMode#FAIR}.
     * @return the group mode
     */
    GroupMode groups() default GroupMode.NONE;

    /**
     * SpEL expression evaluated against the payload that gives a job's group (e.g. {@code "tenantId"});
     * empty for none. A group given at enqueue ({@link EnqueueOptions#withGroup}) wins.
     * @return the expression
     */
    String groupKey() default "";

    /**
     * With {@link GroupMode#FAIR}: the most jobs of one group running at once across all nodes;
     * {@code 0} for no such limit.
     * @return the concurrency per group, or 0
     */
    int groupConcurrency() default 0;

    /**
     * With {@link GroupMode#SEQUENCE}: whether a job that fails for good holds its group until it is
     * re-run ({@link TaskGroups.OnFailure#BLOCK}) or lets the next one run ({@link TaskGroups.OnFailure#SKIP}).
     * @return the failure policy of sequences
     */
    TaskGroups.OnFailure sequenceOnFailure() default TaskGroups.OnFailure.SKIP;

    /**
     * Whether each attempt of the task's jobs is kept with the job, with the lines its handler logs
     * through {@link TaskContext#log} or {@link TaskContext#logger()}: see {@link JobAttempt} and
     * {@link QueueClient#attempts}. Each attempt's entry is written by the statement that
     * writes its outcome, which makes that write and the job's row larger.
     * @return whether to keep the attempts
     */
    boolean history() default false;

    /**
     * Tags every job of the task gets, before those its enqueue adds ({@link EnqueueOptions#withTags}):
     * labels operators filter on in the console and in {@link JobQuery#withTags}, each 1 to
     * {@value JobTags#MAX_TAG_LENGTH} characters without commas (see {@link JobTags}).
     * @return the tags
     */
    String[] tags() default {};

    /**
     * Whether the task's payloads are encrypted at rest ({@link PayloadEncryption}, keys from
     * {@code pgqueue.encryption.keys}): stored encrypted, decrypted for this handler. A task's
     * dedup key, headers, tags, result, errors and log lines stay readable. Every node that enqueues
     * the task must declare it encrypted too ({@code pgqueue.tasks.<name>.encrypted}).
     * @return whether to encrypt
     */
    boolean encrypted() default false;

    /**
     * Application event types that become jobs of this task: publishing one of them (an object
     * given to {@code ApplicationEventPublisher.publishEvent}, a record say, not an
     * {@code ApplicationEvent}) enqueues a job with the event as its payload, in the publisher's
     * transaction when there is one — a rollback leaves no job, and a job committed with the
     * transaction survives the process. Each type must be one the handler's payload type can hold.
     * With the Spring Boot starter only.
     * @return the event types
     */
    Class<?>[] events() default {};

    /**
     * For a handler that implements {@link ChunkHandler}: the most jobs per call, at least 1 and at
     * most the task's {@link #concurrency()} (each job of a chunk holds a handler slot). 0 for a
     * {@link TaskHandler}.
     * @return the chunk size
     */
    int chunkSize() default 0;

    /**
     * For a {@link ChunkHandler}: how long the first job of a chunk waits for more before the call,
     * e.g. {@code "200ms"}; empty for {@link QueueDefaults#CHUNK_LINGER}.
     * @return the linger time
     */
    String chunkLinger() default "";

    /**
     * A cron expression that enqueues a job of this task at every slot (six fields: second minute
     * hour day-of-month month day-of-week, e.g. {@code "0 0 3 * * *"}, or a macro such as
     * {@code "@daily"}); empty for none. Each slot fires once across all nodes; the job's payload is
     * {@code {}}, so the handler's payload type must be readable from an empty JSON object. See
     * {@link io.pgqueue.schedule.Schedules}.
     * @return the cron expression, or empty
     */
    String cron() default "";

    /**
     * The time zone {@link #cron()} is read in (e.g. {@code "Europe/Amsterdam"}); empty for UTC.
     * @return the zone id, or empty
     */
    String zone() default "";

    /**
     * What {@link #cron()} does with slots missed while no node ran it.
     * @return the catch-up policy
     */
    CatchUp catchUp() default CatchUp.RUN_ONCE;

    /**
     * How claims treat the groups of a task's jobs.
     */
    enum GroupMode {

        /** Groups are ignored (unless a group key or a concurrency per group is set: then {@link #FAIR}). */
        NONE,

        /** Round-robin across groups ({@link TaskGroups.Mode#FAIR}). */
        FAIR,

        /** One job of a group at a time, in enqueue order ({@link TaskGroups.Mode#SEQUENCE}). */
        SEQUENCE
    }

    /**
     * Dedup policies that can be named in an annotation or a property.
     */
    enum DedupMode {
        /** See {@link DedupPolicy#keepExisting()}. */
        KEEP_EXISTING,
        /** See {@link DedupPolicy#replaceIfReady()}. */
        REPLACE_IF_READY,
        /** See {@link DedupPolicy#mergeIfReady}; the handler must also implement {@link DedupPolicy.PayloadMerger}. */
        MERGE_IF_READY,
        /** See {@link DedupPolicy#rerun()}. */
        RERUN,
        /** See {@link DedupPolicy#unique}: with {@link #uniquePeriod()} and {@link #uniqueStates()}. */
        UNIQUE
    }

    /**
     * A retry backoff.
     */
    @Target({})
    @Retention(RetentionPolicy.RUNTIME)
    @Documented
    @interface Backoff {

        /**
         * The shape of the backoff.
         * @return the kind
         */
        Kind kind() default Kind.EXPONENTIAL;

        /**
         * Delay after the first failure; empty for the default ({@link QueueDefaults#RETRY_DELAY}, 1 s).
         * @return the delay
         */
        String delay() default "";

        /**
         * Increase per further failure ({@link Kind#LINEAR}); empty for the same as {@link #delay()}.
         * @return the step
         */
        String step() default "";

        /**
         * Growth factor ({@link Kind#EXPONENTIAL}).
         * @return the multiplier
         */
        double multiplier() default QueueDefaults.RETRY_MULTIPLIER;

        /**
         * Cap of the delay; empty for the default ({@link QueueDefaults#RETRY_MAX_DELAY}, 1 h).
         * @return the maximum delay
         */
        String maxDelay() default "";

        /**
         * Fraction of the delay that is randomised ({@link Kind#EXPONENTIAL}), 0 to 1.
         * @return the jitter
         */
        double jitter() default QueueDefaults.RETRY_JITTER;

        /**
         * Name of a {@link io.pgqueue.retry.RetryPolicy} bean to use instead ({@link Kind#CUSTOM}).
         * @return the bean name
         */
        String policyBean() default "";

        /**
         * Backoff shapes.
         */
        enum Kind {
            /** The same delay every time. */
            FIXED,
            /** delay + step × (attempt − 1), capped. */
            LINEAR,
            /** delay × multiplier^(attempt − 1), capped, with jitter. */
            EXPONENTIAL,
            /** A {@link io.pgqueue.retry.RetryPolicy} bean named by {@link #policyBean()}. */
            CUSTOM
        }
    }
}
