package io.pgqueue;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
     * @throws TaskCancelledException if the job was asked to stop
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

    /**
     * Adds a line at INFO to this attempt's log, which the job's history keeps with the attempt when
     * the task keeps one ({@code @QueueTask(history = true)}; see {@link JobAttempt}): at most
     * {@value QueueDefaults#MAX_LOG_LINES} lines of {@value QueueDefaults#MAX_LOG_LINE_LENGTH}
     * characters per attempt, further lines counted. The line is not written to the application's
     * log; {@link #logger()} writes to both. Without a history, and by default, it does nothing.
     * @param message the line
     */
    default void log(String message) {
    }

    /**
     * Returns a logger named after the handler's class that writes to the application's log as any
     * SLF4J logger does and, when the task keeps a history, adds each line it writes (at the levels the
     * logger has enabled) to this attempt's log, as {@link #log(String)} does. Use it on the handler's
     * thread or threads of its own while the attempt runs.
     * @return the logger; by default the handler's logger alone
     */
    default Logger logger() {
        return LoggerFactory.getLogger("io.pgqueue.task." + task());
    }

    /**
     * Returns the id of the job's workflow (or batch).
     * @return the workflow id, or empty for a job outside workflows
     */
    default Optional<Long> workflowId() {
        String id = headers().get(QueueDefaults.WORKFLOW_HEADER);
        return id == null ? Optional.empty() : Optional.of(Long.valueOf(id));
    }

    /**
     * Returns how the jobs this job ran after ended: all completed, unless it runs despite failures
     * ({@link DependencyFailure#RUN}, a batch's callback).
     * @return the counts; zero for a job without dependencies
     */
    default Dependencies dependencies() {
        Map<String, String> headers = headers();
        return new Dependencies(Integer.parseInt(headers.getOrDefault(QueueDefaults.DEPENDENCIES_SUCCEEDED_HEADER, "0")),
                Integer.parseInt(headers.getOrDefault(QueueDefaults.DEPENDENCIES_FAILED_HEADER, "0")));
    }

    /**
     * Records this job's result, for the jobs that run after it ({@link #dependencyResult}) and for
     * its callers ({@link QueueClient#await}, {@link QueueClient#find}): a small value kept as JSON,
     * replacing one recorded before in this attempt. It is written with the attempt's completion, in
     * the same transaction and under the attempt's lease: an attempt that fails (retried or for good),
     * loses its lease or is cancelled writes none, and a call after the handler returned is not
     * written. It is kept while the workflow is kept; outside a workflow, while a job that depends on
     * it waits or runs, and at least for the retention of completed jobs.
     * @param result the value, serialized as the payloads are
     * @throws IllegalArgumentException if its JSON is larger than {@value QueueDefaults#MAX_RESULT_BYTES} bytes
     * or holds the character U+0000, which PostgreSQL cannot store
     * @throws UnsupportedOperationException outside a job run by the queue's workers (the default)
     */
    default void recordResult(Object result) {
        throw new UnsupportedOperationException("Results are recorded by jobs the queue's workers run");
    }

    /**
     * Reads the result a dependency recorded.
     * @param <T> the result type
     * @param dependency the dependency's step name when it is a workflow step, else its job id as text
     * @param type the type to read the result as
     * @return the result, or empty if it recorded none, did not complete (a job that runs despite
     * failures, {@link DependencyFailure#RUN}, finds no result of a dependency that failed or was
     * cancelled), or is not a dependency of this job
     * @throws UnsupportedOperationException outside a job run by the queue's workers (the default)
     */
    default <T> Optional<T> dependencyResult(String dependency, Class<T> type) {
        throw new UnsupportedOperationException("Results are read by jobs the queue's workers run");
    }

    /**
     * Reads the results of all dependencies that completed and recorded one.
     * @param <T> the result type
     * @param type the type to read each result as
     * @return the results by step name (job id as text for a dependency outside workflows), in
     * dependency id order
     * @throws UnsupportedOperationException outside a job run by the queue's workers (the default)
     */
    default <T> Map<String, T> dependencyResults(Class<T> type) {
        throw new UnsupportedOperationException("Results are read by jobs the queue's workers run");
    }

    /**
     * How the dependencies of a job ended.
     *
     * @param succeeded how many completed
     * @param failed how many failed for good or were cancelled
     */
    record Dependencies(int succeeded, int failed) {

        /** @return all dependencies */
        public int total() {
            return this.succeeded + this.failed;
        }
    }
}
