package io.pgqueue;

import java.time.Instant;
import java.util.Map;

/**
 * What a handler knows about the job it executes, and how it talks back to the queue.
 */
public interface TaskContext {

    /** @return the job id */
    long jobId();

    /** @return the task name */
    String task();

    /** @return this attempt's number, starting at 1 */
    int attempt();

    /** @return the job's maximum number of attempts */
    int maxAttempts();

    /** @return the headers stored with the job (e.g. trace context) */
    Map<String, String> headers();

    /**
     * Returns when this attempt times out: the handler is interrupted then and the attempt fails.
     * @return the timeout deadline (wall clock of this node)
     */
    Instant deadline();

    /**
     * Returns when the job should have started at the latest.
     * @return the delay-tolerance deadline, or {@code null} if the job has none
     */
    Instant delayToleranceDeadline();

    /**
     * Returns whether the handler should stop: cancellation was requested, the attempt timed out,
     * the node is shutting down past its grace period, or the lease was lost. A long handler
     * checks it between steps and throws {@link TaskCancelledException} to stop.
     * @return {@code true} if the handler should stop
     */
    boolean isCancellationRequested();

    /**
     * Throws {@link TaskCancelledException} if {@link #isCancellationRequested()}.
     */
    default void throwIfCancellationRequested() {
        if (isCancellationRequested()) {
            throw new TaskCancelledException("Job " + jobId() + " was asked to stop");
        }
    }

    /**
     * Reports progress; it is stored with the next lease heartbeat and shown to operators.
     * Leases of running jobs are renewed automatically; calling this is never required.
     * @param progress a short description, e.g. "1200 of 5000 files copied"
     */
    void progress(String progress);
}
