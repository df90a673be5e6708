package io.pgqueue;

/**
 * Thrown by {@link QueueClient#await} when the awaited job ended without completing: it failed for
 * good, or was cancelled. The job, with its last error, is {@link #job()}.
 */
public class JobFailedException extends QueueException {

    private static final long serialVersionUID = 1L;

    private final transient JobSnapshot job;

    /**
     * Creates an exception.
     * @param job the job as it ended
     */
    public JobFailedException(JobSnapshot job) {
        super("Job " + job.id() + " (" + job.task() + ") ended " + job.state() + " after " + job.attempt() + " attempt"
                + (job.attempt() == 1 ? "" : "s") + (job.lastError() == null ? "" : ": " + firstLine(job.lastError())));
        this.job = job;
    }

    /** @return the job as it ended: its state, attempts and last error */
    public JobSnapshot job() {
        return this.job;
    }

    private static String firstLine(String error) {
        int end = error.indexOf('\n');
        return end < 0 ? error : error.substring(0, end);
    }
}
