package io.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
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
     * Runs a durable step, or returns its recorded value when the job recorded the step before.
     * <p>
     * A step's value is recorded (as JSON, as results are) when the step returns, in its own
     * transaction on the job's database and under the attempt's lease: only while this attempt still
     * holds the job. When the job runs again (a retry, a rescue after a crash, a job handed back at
     * shutdown, a durable {@link #sleep}), a recorded step does not run: this call returns the
     * recorded value. Steps are matched by name and place: the handler must reach its steps in the
     * same order every time, with names unique within the job; a run that reaches another name at a
     * recorded place fails the job with a {@link StepMismatchException} that names the step.
     * <p>
     * A step runs at least once, and exactly once where its record committed: a crash after the
     * step's work and before its record runs the work again on the next attempt. Make such work
     * idempotent with {@link #stepKey(String)}.
     * @param <T> the value's type
     * @param name the step's name, unique within the job: 1 to 200 characters
     * @param type the type to read a recorded value as
     * @param body the step's work
     * @return the step's value, from its run or its record
     * @throws TaskCancelledException if the attempt lost its lease before the record was written
     * @throws StepMismatchException if the record does not fit the step
     * @throws UnsupportedOperationException outside a job run by the queue's workers (the default)
     */
    default <T> T step(String name, Class<T> type, StepBody<T> body) {
        return step(name, StepRetry.NONE, type, body);
    }

    /**
     * Runs a durable step, or returns its recorded value, as {@link #step(String, Class, StepBody)},
     * reading a recorded value as the class the step returned when it ran; a value of a generic type
     * (a list of records, say) is read back as that type's raw class, so give such steps their type.
     * @param <T> the value's type
     * @param name the step's name, unique within the job
     * @param body the step's work
     * @return the step's value, from its run or its record
     */
    default <T> T step(String name, StepBody<T> body) {
        return step(name, StepRetry.NONE, null, body);
    }

    /**
     * Runs a durable step that is tried again within the attempt when it fails, or returns its
     * recorded value, as {@link #step(String, Class, StepBody)}.
     * @param <T> the value's type
     * @param name the step's name, unique within the job
     * @param retry how often to try it in this attempt
     * @param type the type to read a recorded value as; {@code null}: the class the step returned
     * @param body the step's work
     * @return the step's value, from its run or its record
     * @throws UnsupportedOperationException outside a job run by the queue's workers (the default)
     */
    default <T> T step(String name, StepRetry retry, Class<T> type, StepBody<T> body) {
        throw new UnsupportedOperationException("Steps are run by jobs the queue's workers run");
    }

    /**
     * Runs a durable step that returns nothing, unless the job recorded it before; see
     * {@link #step(String, Class, StepBody)}.
     * @param name the step's name, unique within the job
     * @param action the step's work
     */
    default void step(String name, StepAction action) {
        step(name, StepRetry.NONE, action);
    }

    /**
     * Runs a durable step that returns nothing and is tried again within the attempt when it fails,
     * unless the job recorded it before; see {@link #step(String, Class, StepBody)}.
     * @param name the step's name, unique within the job
     * @param retry how often to try it in this attempt
     * @param action the step's work
     */
    default void step(String name, StepRetry retry, StepAction action) {
        step(name, retry, Void.class, () -> {
            action.run();
            return null;
        });
    }

    /**
     * Returns a key that names one step of this job everywhere and for good: the same on every
     * attempt, and different for every job and step. Give it to the system a step calls as its
     * idempotency key (a payment provider's, an {@code INSERT ... ON CONFLICT} key), so that the
     * work of a step whose record was lost in a crash is not done twice.
     * @param name the step's name
     * @return the key: {@code pgqueue-<job id>-<name>}
     */
    default String stepKey(String name) {
        return "pgqueue-" + jobId() + "-" + name;
    }

    /**
     * Sleeps durably: ends this attempt and runs the job again after the delay, holding no thread
     * and no connection meanwhile, and without spending an attempt. The sleep is a step: its end is
     * recorded (on the database clock) the first time the handler reaches it, and when the job runs
     * again the handler passes it once the end is reached (running the steps before it from their
     * records). It works by throwing {@link TaskSnoozedException}: let it leave the handler.
     * <p>
     * The sleep is named after its place among the job's steps ({@code sleep-<place>}).
     * @param duration how long, zero or more
     * @throws TaskSnoozedException always, until the sleep is over
     * @throws UnsupportedOperationException outside a job run by the queue's workers (the default)
     */
    default void sleep(Duration duration) {
        sleep(null, duration);
    }

    /**
     * Sleeps durably under a name; see {@link #sleep(Duration)}.
     * @param name the sleep's step name, unique within the job; {@code null}: {@code sleep-<place>}
     * @param duration how long, zero or more
     * @throws UnsupportedOperationException outside a job run by the queue's workers (the default)
     */
    default void sleep(String name, Duration duration) {
        throw new UnsupportedOperationException("Durable sleeps are taken by jobs the queue's workers run");
    }

    /**
     * Sleeps durably until a moment; see {@link #sleep(Duration)}. A moment in the past does not sleep
     * (the sleep is still recorded as a step).
     * @param until when to run again (compared with the database clock)
     */
    default void sleepUntil(Instant until) {
        sleepUntil(null, until);
    }

    /**
     * Sleeps durably until a moment, under a name; see {@link #sleep(Duration)}.
     * @param name the sleep's step name, unique within the job; {@code null}: {@code sleep-<place>}
     * @param until when to run again (compared with the database clock)
     * @throws UnsupportedOperationException outside a job run by the queue's workers (the default)
     */
    default void sleepUntil(String name, Instant until) {
        throw new UnsupportedOperationException("Durable sleeps are taken by jobs the queue's workers run");
    }

    /**
     * Waits durably for a signal ({@link QueueClient#signal}, or {@code pgqueue.signal_job} in SQL),
     * holding no thread and no connection: when the job has the signal already, returns its
     * payload at once; otherwise records the wait as a step (named {@code signal:<name>}, its end the
     * database clock plus the timeout) and ends the attempt as a {@link #sleep} does, without spending
     * it. The signal makes the sleeping job due at once; the handler runs again, passes its recorded
     * steps, and this call returns the payload. Once the timeout passed without the signal, it
     * returns empty (and a signal sent later is refused as {@link SignalResult#TOO_LATE}). A job
     * keeps one signal per name, and the wait is a step: its result is recorded, and a later run of
     * the job returns the same.
     * @param <T> the payload's type
     * @param name the signal's name: 1 to 190 characters
     * @param type the type to read the payload as
     * @param timeout how long to wait at most, zero or more
     * @return the payload (a signal sent without one gives {@code null}, hence empty), or empty when
     * the wait timed out
     * @throws TaskSnoozedException while the job waits: let it leave the handler
     * @throws UnsupportedOperationException outside a job run by the queue's workers (the default)
     */
    default <T> Optional<T> awaitSignal(String name, Class<T> type, Duration timeout) {
        throw new UnsupportedOperationException("Signals are awaited by jobs the queue's workers run");
    }

    /**
     * Spawns a child job, as a durable step named {@code spawn:<name>}: the child is enqueued in the
     * same transaction as the step's record, under the attempt's lease, in this job's partition (so
     * on this job's shard), and a later run of the job returns the child's id instead of spawning
     * again. Await it with {@link #awaitChild}; spawn several and await each for a fan-out.
     * @param name the spawn's name, unique among the job's steps
     * @param task the child's task
     * @param payload the child's payload
     * @return the child's job id
     * @throws InvalidJobException if the child is invalid; nothing is written
     * @throws UnsupportedOperationException outside a job run by the queue's workers (the default)
     */
    default long spawn(String name, String task, Object payload) {
        return spawn(name, JobRequest.of(task, payload));
    }

    /**
     * Spawns a child job with options (priority, delay, headers, max attempts); see
     * {@link #spawn(String, String, Object)}. A child has no dedup key and no dependencies. It is
     * cancelled when its parent is cancelled ({@link #spawnDetached} spawns one that is not).
     * @param name the spawn's name, unique among the job's steps
     * @param request the child
     * @return the child's job id
     * @throws UnsupportedOperationException outside a job run by the queue's workers (the default)
     */
    default long spawn(String name, JobRequest request) {
        throw new UnsupportedOperationException("Child jobs are spawned by jobs the queue's workers run");
    }

    /**
     * Spawns a child job that is not cancelled with its parent; see {@link #spawn(String, JobRequest)}.
     * A child spawned with {@code spawn} is cancelled when its parent is (a READY child at once, a
     * running one asked to stop), in the transaction that cancels the parent; a detached child runs on.
     * @param name the spawn's name, unique among the job's steps
     * @param request the child
     * @return the child's job id
     * @throws UnsupportedOperationException outside a job run by the queue's workers (the default)
     */
    default long spawnDetached(String name, JobRequest request) {
        throw new UnsupportedOperationException("Child jobs are spawned by jobs the queue's workers run");
    }

    /**
     * Waits durably for a child job this job spawned to end, holding no thread: returns its result
     * once it completed ({@link #recordResult}, read as the type; {@code null} when it recorded none),
     * or throws {@link ChildJobFailedException} when it failed for good or was cancelled. While the
     * child runs, the attempt ends as a {@link #sleep} does, without spending it; the child's end
     * wakes this job, which passes its recorded steps and gets here again. The wait is a step
     * ({@code signal:child:<id>}): a later run returns the same.
     * @param <T> the result's type
     * @param childId the id {@link #spawn} returned
     * @param type the type to read the result as
     * @return the child's result, or {@code null}
     * @throws TaskSnoozedException while the child runs: let it leave the handler
     * @throws IllegalArgumentException if this job did not spawn that child
     * @throws UnsupportedOperationException outside a job run by the queue's workers (the default)
     */
    default <T> T awaitChild(long childId, Class<T> type) {
        throw new UnsupportedOperationException("Child jobs are awaited by jobs the queue's workers run");
    }

    /**
     * Waits durably for several child jobs to end, in order, and returns their results in that
     * order; see {@link #awaitChild}. The job runs again as each awaited child ends; children that
     * ended while it waited for an earlier one are passed at once.
     * @param <T> the results' type
     * @param childIds the ids {@link #spawn} returned
     * @param type the type to read each result as
     * @return the results, {@code null} for a child that recorded none
     */
    default <T> List<T> awaitChildren(List<Long> childIds, Class<T> type) {
        List<T> results = new ArrayList<>(childIds.size());
        for (long childId : childIds) {
            results.add(awaitChild(childId, type));
        }
        return results;
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
