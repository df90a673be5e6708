package io.pgqueue;

/**
 * Executes the jobs of one task type. Implement it on a bean annotated with {@link QueueTask}; the
 * payload type {@code P} (usually a record) is read from the job's JSON payload with the
 * application's JSON mapper.
 * <p>
 * Delivery is at least once: a job runs again after a crash or an expired lease, so a handler
 * should be idempotent. Returning normally completes the job; throwing fails the attempt (retried
 * per the task's retry policy unless the exception is terminal or attempts are exhausted).
 *
 * @param <P> the payload type
 */
@FunctionalInterface
public interface TaskHandler<P> {

    /**
     * Executes one job.
     * @param payload the job's payload
     * @param context the job's id, attempt, headers, deadline, cancellation flag and progress reporting
     * @throws Exception to fail the attempt
     */
    void handle(P payload, TaskContext context) throws Exception;
}
