package io.pgqueue;

/**
 * Sees every job enqueued and every attempt run through this queue, for what cuts across tasks:
 * log context, a tenant or a user carried from the enqueuing request to the handler in the job's
 * headers, auditing. {@link JobInterceptors} holds the built-in ones. With the Spring Boot starter,
 * every bean of this type is used, in {@code @Order}; with {@link PgQueue.Builder#interceptors}, in
 * the order given.
 * <p>
 * The first interceptor sees an enqueue first and wraps an attempt outermost.
 */
public interface JobInterceptor {

    /**
     * Sees a job about to be enqueued, on the enqueuing thread and in its transaction, before the job
     * is checked and written; it returns the job to enqueue in its place, typically the same one with
     * headers added ({@link JobRequest#withHeader}). Every job passes here: those of
     * {@link QueueClient#enqueue}, of batches and workflows (each step) and of recurring schedules
     * (on the scheduler's thread). Jobs enqueued from SQL do not.
     * @param request the job as asked for (or as the interceptors before this one returned it)
     * @return the job to enqueue, not {@code null}
     * @throws RuntimeException to refuse the enqueue: the call fails and none of its jobs is written
     */
    default JobRequest beforeEnqueue(JobRequest request) {
        return request;
    }

    /**
     * Wraps one attempt of a job, on the handler's thread, inside the attempt's observation (the
     * trace the job's headers carry is current) and under its timeout. It calls
     * {@link Attempt#proceed()} to run the interceptors after it and then the handler; one that
     * returns without proceeding ends the attempt as completed without running the handler. What it
     * throws is the attempt's failure, decided as the handler's would be (a retry, a terminal
     * failure, a snooze with {@link TaskSnoozedException}).
     * @param context the job and its attempt, as the handler sees them
     * @param payload the payload, read as the handler's payload type
     * @param attempt the rest of the attempt
     * @throws Exception what the attempt failed with
     */
    default void aroundAttempt(TaskContext context, Object payload, Attempt attempt) throws Exception {
        attempt.proceed();
    }

    /**
     * The rest of an attempt, as an interceptor sees it.
     */
    @FunctionalInterface
    interface Attempt {

        /**
         * Runs the interceptors after the calling one, then the handler.
         * @throws Exception what they or the handler threw
         */
        void proceed() throws Exception;
    }
}
