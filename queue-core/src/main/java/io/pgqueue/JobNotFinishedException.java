package io.pgqueue;

import java.time.Duration;

/**
 * Thrown by {@link QueueClient#await} when the awaited job has not finished within the timeout. The
 * job goes on; await it again, or read it with {@link QueueClient#find}.
 */
public class JobNotFinishedException extends QueueException {

    private static final long serialVersionUID = 1L;

    private final long jobId;

    /**
     * Creates an exception.
     * @param jobId the job
     * @param timeout how long the caller waited
     */
    public JobNotFinishedException(long jobId, Duration timeout) {
        this("Job", jobId, timeout);
    }

    /**
     * Creates an exception for what was awaited.
     * @param what {@code Job}, or {@code Workflow} ({@link QueueClient#awaitWorkflow})
     * @param id its id
     * @param timeout how long the caller waited
     */
    public JobNotFinishedException(String what, long id, Duration timeout) {
        super(what + " " + id + " has not finished within " + timeout.toMillis() + " ms; it goes on");
        this.jobId = id;
    }

    /** @return the job (or workflow) awaited */
    public long jobId() {
        return this.jobId;
    }
}
