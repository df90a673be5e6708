package io.pgqueue;

import java.util.Objects;
import java.util.function.Function;

/**
 * How a task's claims treat the groups of its jobs (a tenant, an account, a document: the job's
 * group key, {@link EnqueueOptions#withGroup} or derived by {@link #key()}). Claims of such a task go
 * round-robin across its groups, one job per group and round, so a group with a million jobs
 * cannot starve a group with ten; a group's jobs are claimed in enqueue order.
 *
 * @param mode fair rounds, or sequences (one job of a group at a time, in enqueue order)
 * @param concurrency {@link Mode#FAIR}: the most jobs of one group running at once across all
 * nodes, or 0 for no such limit; {@link Mode#SEQUENCE}: always 1
 * @param onFailure {@link Mode#SEQUENCE}: whether a job that fails for good holds its group
 * ({@link OnFailure#BLOCK}) or lets the next job run ({@link OnFailure#SKIP})
 * @param key derives a job's group key from its payload when the enqueue gives none, or
 * {@code null}; it may return {@code null} for "no group". A job without a group is put in the group
 * {@value QueueDefaults#DEFAULT_GROUP}; jobs queued without the header (before the task had groups,
 * or by a node without these settings) are claimed when no group has a claimable job.
 */
public record TaskGroups(Mode mode, int concurrency, OnFailure onFailure, Function<Object, String> key) {

    /** How claims treat a task's groups. */
    public enum Mode {

        /** Round-robin across groups, optionally with a concurrency per group. */
        FAIR,

        /**
         * One job of a group at a time, in enqueue order: a group's next job is claimed only when
         * the one before it completed, was cancelled or (with {@link OnFailure#SKIP}) failed for
         * good. A job waiting for its retry holds its group.
         */
        SEQUENCE
    }

    /** What a sequence does when one of its jobs fails for good. */
    public enum OnFailure {

        /** The next job of the group runs. */
        SKIP,

        /**
         * The group waits until the failed job is re-run and succeeds (or leaves the history with
         * the retention of failed jobs).
         */
        BLOCK
    }

    /**
     * Validates the settings.
     */
    public TaskGroups {
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(onFailure, "onFailure");
        InvalidSettingException.require(concurrency >= 0, "group-concurrency", concurrency,
                "must be at least 1, or 0 for no limit");
        if (mode == Mode.SEQUENCE) {
            concurrency = 1;
        }
    }

    /**
     * Fair rounds across groups.
     * @param concurrency the most jobs of one group running at once across all nodes, or 0 for no limit
     * @return the settings, without a key function
     */
    public static TaskGroups fair(int concurrency) {
        return new TaskGroups(Mode.FAIR, concurrency, OnFailure.SKIP, null);
    }

    /**
     * Sequences: one job of a group at a time, in enqueue order.
     * @param onFailure whether a job that fails for good holds its group
     * @return the settings, without a key function
     */
    public static TaskGroups sequence(OnFailure onFailure) {
        return new TaskGroups(Mode.SEQUENCE, 1, onFailure, null);
    }

    /**
     * @param key derives a job's group key from its payload when the enqueue gives none
     * @return a copy with the key function
     */
    public TaskGroups withKey(Function<Object, String> key) {
        return new TaskGroups(this.mode, this.concurrency, this.onFailure, key);
    }
}
