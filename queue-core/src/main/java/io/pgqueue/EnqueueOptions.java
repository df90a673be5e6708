package io.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Per-job options of an enqueue call. Immutable; each {@code with...} method returns a copy.
 * Options left unset take the task's defaults ({@link TaskDefinition}).
 *
 * @param priority the priority, or {@code null} for the task's default
 * @param runAt when the job becomes due, or {@code null}
 * @param delay how long after the enqueue the job becomes due, or {@code null}
 * @param delayTolerance how late after becoming due the job may start, or {@code null} for the task's default
 * @param dedupKey the dedup key, or {@code null}
 * @param dedupPolicy the dedup policy, or {@code null} for the task's default
 * @param maxAttempts the maximum number of attempts, or {@code null} for the task's default
 * @param headers string headers stored with the job (e.g. trace context)
 * @param partitionKey the key whose hash picks the job's partition (and so its shard), or {@code null};
 * a dedup key takes precedence
 * @param dependsOn the ids of the jobs this job runs after (empty: none)
 * @param onDependencyFailure what the job does when one of {@code dependsOn} fails or is cancelled,
 * or {@code null} for {@link DependencyFailure#CANCEL}
 */
public record EnqueueOptions(Integer priority, Instant runAt, Duration delay, Duration delayTolerance,
        String dedupKey, DedupPolicy dedupPolicy, Integer maxAttempts, Map<String, String> headers,
        String partitionKey, List<Long> dependsOn, DependencyFailure onDependencyFailure) {

    private static final EnqueueOptions DEFAULTS = new EnqueueOptions(null, null, null, null, null, null, null, Map.of(),
            null, List.of(), null);

    /**
     * Options without dependencies.
     * @param priority the priority, or {@code null} for the task's default
     * @param runAt when the job becomes due, or {@code null}
     * @param delay how long after the enqueue the job becomes due, or {@code null}
     * @param delayTolerance how late after becoming due the job may start, or {@code null}
     * @param dedupKey the dedup key, or {@code null}
     * @param dedupPolicy the dedup policy, or {@code null} for the task's default
     * @param maxAttempts the maximum number of attempts, or {@code null} for the task's default
     * @param headers string headers stored with the job
     * @param partitionKey the key whose hash picks the job's partition, or {@code null}
     */
    public EnqueueOptions(Integer priority, Instant runAt, Duration delay, Duration delayTolerance, String dedupKey,
            DedupPolicy dedupPolicy, Integer maxAttempts, Map<String, String> headers, String partitionKey) {
        this(priority, runAt, delay, delayTolerance, dedupKey, dedupPolicy, maxAttempts, headers, partitionKey, List.of(),
                null);
    }

    /**
     * Normalises the headers.
     */
    public EnqueueOptions {
        if (headers != null && headers.entrySet().stream().anyMatch(h -> h.getKey() == null || h.getValue() == null)) {
            throw new InvalidJobException("Headers must not hold null names or values, were " + headers);
        }
        headers = headers == null ? Map.of() : Map.copyOf(headers);
        if (dependsOn != null && dependsOn.stream().anyMatch(id -> id == null)) {
            throw new InvalidJobException("The dependencies of a job must not hold null ids, were " + dependsOn);
        }
        dependsOn = dependsOn == null ? List.of() : List.copyOf(dependsOn.stream().distinct().toList());
    }

    /**
     * Returns options that take every default.
     * @return the default options
     */
    public static EnqueueOptions defaults() {
        return DEFAULTS;
    }

    /**
     * Sets the priority: higher runs first.
     * @param priority between {@link QueueDefaults#MIN_PRIORITY} and {@link QueueDefaults#MAX_PRIORITY}
     * @return a copy with the priority
     */
    public EnqueueOptions withPriority(int priority) {
        return new EnqueueOptions(priority, this.runAt, this.delay, this.delayTolerance, this.dedupKey,
                this.dedupPolicy, this.maxAttempts, this.headers, this.partitionKey, this.dependsOn, this.onDependencyFailure);
    }

    /**
     * Schedules the job for a point in time (the database clock decides when it is due). A job
     * has a run-at time or a delay, not both: the enqueue rejects options with both.
     * @param runAt when the job becomes due, not {@code null}
     * @return a copy with the schedule
     * @throws InvalidJobException if {@code runAt} is {@code null}
     */
    public EnqueueOptions withRunAt(Instant runAt) {
        return new EnqueueOptions(this.priority, required(runAt, "runAt"), this.delay, this.delayTolerance,
                this.dedupKey, this.dedupPolicy, this.maxAttempts, this.headers, this.partitionKey, this.dependsOn, this.onDependencyFailure);
    }

    /**
     * Schedules the job a delay after the enqueue (measured by the database clock). A job has a
     * run-at time or a delay, not both: the enqueue rejects options with both.
     * @param delay zero or positive, not {@code null}
     * @return a copy with the schedule
     * @throws InvalidJobException if {@code delay} is {@code null}
     */
    public EnqueueOptions withDelay(Duration delay) {
        return new EnqueueOptions(this.priority, this.runAt, required(delay, "delay"), this.delayTolerance,
                this.dedupKey, this.dedupPolicy, this.maxAttempts, this.headers, this.partitionKey, this.dependsOn, this.onDependencyFailure);
    }

    /**
     * Sets how late after becoming due the job may start. Jobs are claimed by priority, then by
     * this deadline: a job due at 10:05 with 1 s tolerance goes before one due at 10:00 with 10 s.
     * @param delayTolerance zero or positive
     * @return a copy with the tolerance
     */
    public EnqueueOptions withDelayTolerance(Duration delayTolerance) {
        return new EnqueueOptions(this.priority, this.runAt, this.delay, delayTolerance, this.dedupKey,
                this.dedupPolicy, this.maxAttempts, this.headers, this.partitionKey, this.dependsOn, this.onDependencyFailure);
    }

    /**
     * Sets the dedup key: at most one active job of the task holds it.
     * @param dedupKey the key
     * @return a copy with the key
     */
    public EnqueueOptions withDedupKey(String dedupKey) {
        return new EnqueueOptions(this.priority, this.runAt, this.delay, this.delayTolerance, dedupKey,
                this.dedupPolicy, this.maxAttempts, this.headers, this.partitionKey, this.dependsOn, this.onDependencyFailure);
    }

    /**
     * Sets the dedup key and the policy applied when an active job already holds it.
     * @param dedupKey the key, not {@code null}
     * @param dedupPolicy the policy, not {@code null}
     * @return a copy with the key and policy
     * @throws InvalidJobException if either is {@code null}
     */
    public EnqueueOptions withDedup(String dedupKey, DedupPolicy dedupPolicy) {
        return new EnqueueOptions(this.priority, this.runAt, this.delay, this.delayTolerance,
                required(dedupKey, "dedupKey"), required(dedupPolicy, "dedupPolicy"), this.maxAttempts, this.headers,
                this.partitionKey, this.dependsOn, this.onDependencyFailure);
    }

    /**
     * Sets the maximum number of attempts.
     * @param maxAttempts at least 1
     * @return a copy with the limit
     */
    public EnqueueOptions withMaxAttempts(int maxAttempts) {
        return new EnqueueOptions(this.priority, this.runAt, this.delay, this.delayTolerance, this.dedupKey,
                this.dedupPolicy, maxAttempts, this.headers, this.partitionKey, this.dependsOn, this.onDependencyFailure);
    }

    /**
     * Puts the job in a group of its task (a tenant, an account, a document): the header
     * {@value QueueDefaults#GROUP_HEADER}. A task with {@link TaskGroups} claims its groups in fair
     * rounds, limits how many jobs of a group run at once, or runs each group's jobs one at a time
     * in order; other tasks ignore the group.
     * @param group the group key, 1 to {@value QueueDefaults#MAX_GROUP_KEY_LENGTH} characters
     * @return a copy with the group
     * @throws InvalidJobException if the key is blank or too long
     */
    public EnqueueOptions withGroup(String group) {
        if (group == null || group.isBlank() || group.length() > QueueDefaults.MAX_GROUP_KEY_LENGTH) {
            throw new InvalidJobException("Group key must be non-blank and at most " + QueueDefaults.MAX_GROUP_KEY_LENGTH
                    + " characters, was " + (group == null ? "null" : "'" + group + "'"));
        }
        return withHeader(QueueDefaults.GROUP_HEADER, group);
    }

    /**
     * Adds tags to the job (kept with the task's own, see {@link JobTags}): labels operators filter
     * on in the console and in {@link JobQuery#withTags}.
     * @param tags the tags, each 1 to {@value JobTags#MAX_TAG_LENGTH} characters without commas
     * @return a copy with the tags
     * @throws InvalidJobException if a tag is not valid, or the job would have more than {@value JobTags#MAX_TAGS}
     */
    public EnqueueOptions withTags(String... tags) {
        List<String> all = new ArrayList<>(JobTags.of(this.headers));
        all.addAll(Arrays.asList(tags));
        return withHeader(QueueDefaults.TAGS_HEADER, JobTags.join(JobTags.check(all, "a job")));
    }

    /**
     * Adds a header.
     * @param name the header name, not {@code null}
     * @param value the header value, not {@code null}
     * @return a copy with the header
     * @throws InvalidJobException if the name or the value is {@code null}
     */
    public EnqueueOptions withHeader(String name, String value) {
        Map<String, String> copy = new LinkedHashMap<>(this.headers);
        required(name, "header name");
        if (value == null) {
            throw new InvalidJobException("Header '" + name + "' has a null value; give a value or leave the header out");
        }
        copy.put(name, value);
        return new EnqueueOptions(this.priority, this.runAt, this.delay, this.delayTolerance, this.dedupKey,
                this.dedupPolicy, this.maxAttempts, copy, this.partitionKey, this.dependsOn, this.onDependencyFailure);
    }

    /**
     * Returns a copy with a partition key: jobs with the same key land in the same partition, and so
     * on the same shard. Without it (and without a dedup key, which takes precedence) a job goes to
     * a partition picked at random.
     * @param partitionKey the key, e.g. a tenant or customer id
     * @return the copy
     * @throws InvalidJobException if the key is {@code null}
     */
    public EnqueueOptions withPartitionKey(String partitionKey) {
        return new EnqueueOptions(this.priority, this.runAt, this.delay, this.delayTolerance, this.dedupKey,
                this.dedupPolicy, this.maxAttempts, this.headers, required(partitionKey, "partitionKey"), this.dependsOn,
                this.onDependencyFailure);
    }

    /**
     * Makes the job run after other jobs: it waits, outside the claim, until every one of them
     * completed, and is then due (its run-at time or delay counts from then). When one of them fails
     * for good or is cancelled, the job is cancelled too, unless
     * {@link #withDependencyFailure(DependencyFailure)} says to run it anyway. The jobs must be in
     * the queue or finished and still kept; on a sharded installation they must be in the same
     * partition (give the same partition key). A job with dependencies cannot have a dedup key.
     * @param jobIds the ids of the jobs to wait for
     * @return a copy with the dependencies
     * @throws InvalidJobException if no id is given
     */
    public EnqueueOptions withDependsOn(long... jobIds) {
        if (jobIds == null || jobIds.length == 0) {
            throw new InvalidJobException("withDependsOn needs at least one job id");
        }
        return new EnqueueOptions(this.priority, this.runAt, this.delay, this.delayTolerance, this.dedupKey,
                this.dedupPolicy, this.maxAttempts, this.headers, this.partitionKey, Arrays.stream(jobIds).boxed().toList(),
                this.onDependencyFailure);
    }

    /**
     * Sets what the job does when one of its dependencies fails for good or is cancelled.
     * @param onDependencyFailure {@link DependencyFailure#CANCEL} (the default) or {@link DependencyFailure#RUN}
     * @return a copy with the choice
     * @throws InvalidJobException if it is {@code null}
     */
    public EnqueueOptions withDependencyFailure(DependencyFailure onDependencyFailure) {
        return new EnqueueOptions(this.priority, this.runAt, this.delay, this.delayTolerance, this.dedupKey,
                this.dedupPolicy, this.maxAttempts, this.headers, this.partitionKey, this.dependsOn,
                required(onDependencyFailure, "onDependencyFailure"));
    }

    private static <T> T required(T value, String argument) {
        if (value == null) {
            throw new InvalidJobException("The " + argument + " of an enqueue must not be null");
        }
        return value;
    }
}
