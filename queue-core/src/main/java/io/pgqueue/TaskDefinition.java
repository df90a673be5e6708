package io.pgqueue;

import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

import io.pgqueue.retry.RetryPolicy;

/**
 * The settings of one task type that the engine needs: its stable name, attempts, retry policy and
 * the defaults of the jobs enqueued for it.
 *
 * @param name the stable task name (letters, digits, {@code . _ : -}; at most 48 characters)
 * @param maxAttempts default maximum number of attempts of a job
 * @param retryPolicy delay before the next attempt after a failure
 * @param priority default priority of a job
 * @param delayTolerance default delay tolerance of a job, or {@code null} for none
 * @param dedupPolicy what happens to a job whose dedup key an active job already holds
 * @param terminalExceptions exception types that fail a job at once, without retries
 * @param dedupKey derives a job's dedup key from its payload when the enqueue gives none, or {@code null}
 * @param handlerType the handler class, for typed enqueues ({@code enqueue(SendPush.class, payload)}), or {@code null}
 * @param globalConcurrency the most jobs of the task running at once across all nodes, or 0 for no such limit
 * @param rateLimit the most jobs of the task starting per period across all nodes, or {@code null} for no such limit
 * @param groups how claims treat the groups of the task's jobs (fair rounds, limits per group,
 * sequences), or {@code null}: the task's claims ignore groups
 * @param history whether each attempt of the task's jobs is kept with the job (start, end, node,
 * outcome, error, the lines its handler logged through {@link TaskContext#log}), see {@link JobAttempt}
 * @param tags the tags every job of the task gets, before those its enqueue adds ({@link JobTags})
 * @param encrypted whether the task's payloads are encrypted at rest with the queue's
 * {@link PayloadEncryption}: stored encrypted, decrypted for the handler
 */
public record TaskDefinition(String name, int maxAttempts, RetryPolicy retryPolicy, int priority,
        Duration delayTolerance, DedupPolicy dedupPolicy, Set<Class<? extends Throwable>> terminalExceptions,
        Function<Object, String> dedupKey, Class<?> handlerType, int globalConcurrency, RateLimit rateLimit,
        TaskGroups groups, boolean history, List<String> tags, boolean encrypted) {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]*");

    /**
     * Validates the definition.
     */
    public TaskDefinition {
        validateName(name);
        Objects.requireNonNull(retryPolicy, "retryPolicy");
        Objects.requireNonNull(dedupPolicy, "dedupPolicy");
        try {
            InvalidSettingException.require(maxAttempts >= 1, "max-attempts", maxAttempts, "must be at least 1");
            InvalidSettingException.require(priority >= QueueDefaults.MIN_PRIORITY && priority <= QueueDefaults.MAX_PRIORITY,
                    "priority", priority, "must be between " + QueueDefaults.MIN_PRIORITY + " and "
                            + QueueDefaults.MAX_PRIORITY);
            if (delayTolerance != null) {
                InvalidSettingException.notNegative(delayTolerance, "delay-tolerance");
            }
            InvalidSettingException.require(globalConcurrency >= 0, "global-concurrency", globalConcurrency,
                    "must be at least 1, or 0 for no limit");
        }
        catch (InvalidSettingException ex) {
            throw ex.within("tasks." + name);
        }
        terminalExceptions = Set.copyOf(terminalExceptions);
        try {
            tags = JobTags.check(tags == null ? List.of() : tags, "task " + name);
        }
        catch (InvalidJobException ex) {
            throw new InvalidSettingException("tasks." + name + ".tags", tags, ex.getMessage());
        }
    }

    /**
     * Starts a definition with the defaults of {@link QueueDefaults}.
     * @param name the stable task name
     * @return a builder
     */
    public static Builder builder(String name) {
        return new Builder(name);
    }

    /**
     * @return whether the task has a limit across nodes (global concurrency, rate, groups), which its
     * claims take under a lock of the task
     */
    public boolean hasGlobalLimits() {
        return this.globalConcurrency > 0 || this.rateLimit != null || this.groups != null;
    }

    /**
     * Returns whether the given failure ends the job without further attempts: a
     * {@link TerminalTaskException} or one of the task's terminal exception types.
     * @param failure what the handler threw
     * @return {@code true} if no retry may follow
     */
    public boolean isTerminal(Throwable failure) {
        if (failure instanceof TerminalTaskException) {
            return true;
        }
        for (Class<? extends Throwable> type : this.terminalExceptions) {
            if (type.isInstance(failure)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Checks a task name.
     * @param name the name
     * @throws InvalidJobException if it is blank, too long or has characters other than letters, digits and {@code . _ : -}
     */
    public static void validateName(String name) {
        if (name == null || name.isBlank()) {
            throw new InvalidJobException("Task name must not be blank");
        }
        if (name.length() > QueueDefaults.MAX_TASK_NAME_LENGTH || !NAME.matcher(name).matches()) {
            throw new InvalidJobException("Task name '" + name + "' is invalid: use at most "
                    + QueueDefaults.MAX_TASK_NAME_LENGTH + " letters, digits and . _ : - (starting with a letter or digit)");
        }
    }

    /**
     * Checks a priority against the allowed range.
     * @param priority the priority
     * @param what names it in the error
     * @throws InvalidJobException if it is outside {@value QueueDefaults#MIN_PRIORITY} to {@value QueueDefaults#MAX_PRIORITY}
     */
    public static void validatePriority(int priority, String what) {
        if (priority < QueueDefaults.MIN_PRIORITY || priority > QueueDefaults.MAX_PRIORITY) {
            throw new InvalidJobException(what + " must be between " + QueueDefaults.MIN_PRIORITY + " and "
                    + QueueDefaults.MAX_PRIORITY + ", was " + priority);
        }
    }

    /**
     * Builds a {@link TaskDefinition}.
     */
    public static final class Builder {

        private final String name;

        private int maxAttempts = QueueDefaults.MAX_ATTEMPTS;

        private RetryPolicy retryPolicy = QueueDefaults.RETRY_POLICY;

        private int priority = QueueDefaults.PRIORITY;

        private Duration delayTolerance;

        private DedupPolicy dedupPolicy = DedupPolicy.keepExisting();

        private final Set<Class<? extends Throwable>> terminalExceptions = new LinkedHashSet<>();

        private Function<Object, String> dedupKey;

        private Class<?> handlerType;

        private int globalConcurrency;

        private RateLimit rateLimit;

        private TaskGroups groups;

        private boolean history;

        private List<String> tags = List.of();

        private boolean encrypted;

        private Builder(String name) {
            this.name = name;
        }

        /**
         * Sets the default maximum number of attempts.
         * @param maxAttempts at least 1
         * @return this builder
         */
        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        /**
         * Sets the retry policy.
         * @param retryPolicy the policy
         * @return this builder
         */
        public Builder retryPolicy(RetryPolicy retryPolicy) {
            this.retryPolicy = retryPolicy;
            return this;
        }

        /**
         * Sets the default priority.
         * @param priority between {@link QueueDefaults#MIN_PRIORITY} and {@link QueueDefaults#MAX_PRIORITY}
         * @return this builder
         */
        public Builder priority(int priority) {
            this.priority = priority;
            return this;
        }

        /**
         * Sets the default delay tolerance.
         * @param delayTolerance how late a job may start, or {@code null} for no deadline
         * @return this builder
         */
        public Builder delayTolerance(Duration delayTolerance) {
            this.delayTolerance = delayTolerance;
            return this;
        }

        /**
         * Sets the dedup policy.
         * @param dedupPolicy the policy
         * @return this builder
         */
        public Builder dedupPolicy(DedupPolicy dedupPolicy) {
            this.dedupPolicy = dedupPolicy;
            return this;
        }

        /**
         * Adds exception types that fail a job at once.
         * @param types the exception types
         * @return this builder
         */
        @SafeVarargs
        public final Builder terminalExceptions(Class<? extends Throwable>... types) {
            this.terminalExceptions.addAll(Set.of(types));
            return this;
        }

        /**
         * Adds exception types that fail a job at once.
         * @param types the exception types
         * @return this builder
         */
        public Builder terminalExceptions(java.util.Collection<Class<? extends Throwable>> types) {
            this.terminalExceptions.addAll(types);
            return this;
        }

        /**
         * Sets how a job's dedup key is derived from its payload when an enqueue gives none.
         * @param dedupKey the function; it may return {@code null} for "no key"
         * @return this builder
         */
        public Builder dedupKey(Function<Object, String> dedupKey) {
            this.dedupKey = dedupKey;
            return this;
        }

        /**
         * Sets the handler class, so jobs can be enqueued by class instead of by name.
         * @param handlerType the handler class
         * @return this builder
         */
        public Builder handlerType(Class<?> handlerType) {
            this.handlerType = handlerType;
            return this;
        }

        /**
         * Limits how many jobs of the task run at once across all nodes. Every node that runs the
         * task must be given the same limit: a node enforces the limits it is configured with.
         * @param globalConcurrency at least 1, or 0 for no limit
         * @return this builder
         */
        public Builder globalConcurrency(int globalConcurrency) {
            this.globalConcurrency = globalConcurrency;
            return this;
        }

        /**
         * Limits how many jobs of the task start per period across all nodes. Every node that runs
         * the task must be given the same limit.
         * @param rateLimit the limit, or {@code null} for none
         * @return this builder
         */
        public Builder rateLimit(RateLimit rateLimit) {
            this.rateLimit = rateLimit;
            return this;
        }

        /**
         * Sets how claims treat the groups of the task's jobs. Every node that runs the task must be
         * given the same settings.
         * @param groups fair rounds (with a concurrency per group) or sequences, or {@code null} for none
         * @return this builder
         */
        public Builder groups(TaskGroups groups) {
            this.groups = groups;
            return this;
        }

        /**
         * Keeps each attempt of the task's jobs with the job, as {@link JobAttempt}s, written by the
         * statement that writes the attempt's outcome. Off by default.
         * @param history whether to keep the attempts
         * @return this builder
         */
        public Builder history(boolean history) {
            this.history = history;
            return this;
        }

        /**
         * Sets the tags every job of the task gets ({@link JobTags}).
         * @param tags the tags
         * @return this builder
         */
        public Builder tags(List<String> tags) {
            this.tags = List.copyOf(tags);
            return this;
        }

        /**
         * Encrypts the task's payloads at rest with the queue's {@link PayloadEncryption}. Off by
         * default.
         * @param encrypted whether to encrypt
         * @return this builder
         */
        public Builder encrypted(boolean encrypted) {
            this.encrypted = encrypted;
            return this;
        }

        /**
         * Builds the definition.
         * @return the definition
         */
        public TaskDefinition build() {
            return new TaskDefinition(this.name, this.maxAttempts, this.retryPolicy, this.priority,
                    this.delayTolerance, this.dedupPolicy, this.terminalExceptions, this.dedupKey, this.handlerType,
                    this.globalConcurrency, this.rateLimit, this.groups, this.history, this.tags, this.encrypted);
        }
    }
}
