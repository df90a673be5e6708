package io.pgqueue.store;

/**
 * How many jobs of one task a claim may take: the task's free capacity on the claiming node.
 *
 * @param task the task name
 * @param limit the maximum number of jobs, positive
 */
public record ClaimLimit(String task, int limit) {

    /**
     * Validates the limit.
     */
    public ClaimLimit {
        if (limit < 1) {
            throw new IllegalArgumentException("Claim limit of task '" + task + "' must be positive, was " + limit);
        }
    }
}
