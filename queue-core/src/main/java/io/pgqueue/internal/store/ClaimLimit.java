package io.pgqueue.internal.store;

import io.pgqueue.RateLimit;
import io.pgqueue.TaskGroups;

/**
 * How many jobs of one task a claim may take: the task's free capacity on the claiming node, and
 * the task's limits across all nodes, which the claim enforces under a lock of the task.
 *
 * @param task the task name
 * @param limit the maximum number of jobs, positive
 * @param globalConcurrency the most jobs of the task claimed at once across all nodes, or 0 for no such limit
 * @param rate the most jobs of the task claimed per period across all nodes, or {@code null} for no such limit
 * @param groups how the claim treats the groups of the task's jobs, or {@code null} to ignore them
 */
public record ClaimLimit(String task, int limit, int globalConcurrency, RateLimit rate, TaskGroups groups) {

    /**
     * Validates the limit.
     */
    public ClaimLimit {
        if (limit < 1) {
            throw new IllegalArgumentException("Claim limit of task '" + task + "' must be positive, was " + limit);
        }
        if (globalConcurrency < 0) {
            throw new IllegalArgumentException("Global concurrency of task '" + task + "' must not be negative, was "
                    + globalConcurrency);
        }
    }

    /**
     * A claim limit of a task without limits across nodes.
     * @param task the task name
     * @param limit the maximum number of jobs, positive
     */
    public ClaimLimit(String task, int limit) {
        this(task, limit, 0, null, null);
    }

    /**
     * A claim limit of a task with a global concurrency or a rate limit, without groups.
     * @param task the task name
     * @param limit the maximum number of jobs, positive
     * @param globalConcurrency the most jobs of the task claimed at once across all nodes, or 0
     * @param rate the most jobs of the task claimed per period across all nodes, or {@code null}
     */
    public ClaimLimit(String task, int limit, int globalConcurrency, RateLimit rate) {
        this(task, limit, globalConcurrency, rate, null);
    }

    /** @return whether the task has limits across nodes or groups: claimed on its own, under its lock */
    boolean global() {
        return this.globalConcurrency > 0 || this.rate != null || this.groups != null;
    }
}
