package io.pgqueue;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.pgqueue.internal.enqueue.Enqueuer;
import io.pgqueue.internal.result.JobAwaiter;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import tools.jackson.databind.ObjectMapper;

/**
 * Enqueues, cancels, looks up and awaits jobs.
 * <p>
 * <strong>Enqueue is transactional:</strong> called inside a Spring-managed transaction on the
 * queue's DataSource, the job is written in that transaction, so it exists if and only if the
 * caller's business change commits; workers are notified on commit. Called outside a transaction,
 * the job is committed before the call returns; concurrent calls of this kind share one INSERT
 * (group commit), each returning once its own job is committed.
 * <p>
 * Every job is validated before anything is written: a blank or unknown task, a payload that
 * cannot be serialized or exceeds the size limit, and invalid options throw an
 * {@link InvalidJobException} and leave the database untouched. A batch is all or nothing.
 */
public final class QueueClient implements AutoCloseable {

    private final TaskRegistry tasks;

    private final Enqueuer enqueuer;

    private final JobAwaiter awaiter;

    private final ObjectMapper mapper;

    /**
     * Creates the client of a queue; {@link PgQueue#client()} hands it out.
     * @param tasks the declared task types
     * @param enqueuer the engine's enqueue pipeline
     * @param awaiter what completes the awaits of job ends
     * @param mapper reads results as payloads are read
     */
    QueueClient(TaskRegistry tasks, Enqueuer enqueuer, JobAwaiter awaiter, ObjectMapper mapper) {
        this.tasks = Objects.requireNonNull(tasks, "tasks");
        this.enqueuer = Objects.requireNonNull(enqueuer, "enqueuer");
        this.awaiter = Objects.requireNonNull(awaiter, "awaiter");
        this.mapper = Objects.requireNonNull(mapper, "mapper");
    }

    /**
     * Enqueues a job with the task's default options, in the caller's transaction if there is one.
     * @param task the task name
     * @param payload the payload
     * @return the job id and what happened
     * @throws InvalidJobException if the job is invalid; nothing was written
     */
    public EnqueueResult enqueue(String task, Object payload) {
        return enqueue(JobRequest.of(task, payload));
    }

    /**
     * Enqueues a job, in the caller's transaction if there is one.
     * @param task the task name
     * @param payload the payload
     * @param options the options
     * @return the job id and what happened
     * @throws InvalidJobException if the job is invalid; nothing was written
     */
    public EnqueueResult enqueue(String task, Object payload, EnqueueOptions options) {
        return enqueue(JobRequest.of(task, payload, options));
    }

    /**
     * Enqueues a job for the task a handler class is bound to, with the task's default options, in
     * the caller's transaction if there is one.
     * @param <P> the payload type
     * @param handlerType the handler class
     * @param payload the payload
     * @return the job id and what happened
     * @throws InvalidJobException if the job is invalid; nothing was written
     */
    public <P> EnqueueResult enqueue(Class<? extends TaskHandler<P>> handlerType, P payload) {
        return enqueue(taskOf(handlerType), payload);
    }

    /**
     * Enqueues a job for the task a handler class is bound to, in the caller's transaction if there is one.
     * @param <P> the payload type
     * @param handlerType the handler class
     * @param payload the payload
     * @param options the options
     * @return the job id and what happened
     * @throws InvalidJobException if the job is invalid; nothing was written
     */
    public <P> EnqueueResult enqueue(Class<? extends TaskHandler<P>> handlerType, P payload, EnqueueOptions options) {
        return enqueue(taskOf(handlerType), payload, options);
    }

    private String taskOf(Class<?> handlerType) {
        if (handlerType == null) {
            throw new InvalidJobException("The handler class of an enqueue must not be null");
        }
        return this.tasks.require(handlerType).name();
    }

    /**
     * Enqueues a job, in the caller's transaction if there is one.
     * @param request the job
     * @return the job id and what happened
     * @throws InvalidJobException if the job is invalid; nothing was written
     */
    public EnqueueResult enqueue(JobRequest request) {
        return enqueueAll(List.of(request)).get(0);
    }

    /**
     * Enqueues many jobs in one statement, in the caller's transaction if there is one; all or nothing.
     * @param requests the jobs
     * @return per job, in order, its id and what happened
     * @throws InvalidJobException if any job is invalid; nothing was written
     */
    public List<EnqueueResult> enqueueAll(List<JobRequest> requests) {
        return this.enqueuer.enqueueAll(requests);
    }

    /**
     * Starts building a workflow: jobs that run after others, enqueued together.
     * @param name the workflow's name (shown by the endpoint and in metrics' logs)
     * @return the builder
     * @throws InvalidJobException if the name is blank or longer than 128 characters
     */
    public Workflow workflow(String name) {
        return new Workflow(this, name);
    }

    /**
     * Starts building a workflow named "workflow".
     * @return the builder
     */
    public Workflow workflow() {
        return workflow("workflow");
    }

    /**
     * Starts building a batch: jobs and a callback that runs once all of them ended.
     * @param name the batch's name
     * @return the builder
     */
    public Batch batch(String name) {
        return new Batch(this, name);
    }
    /** Enqueues a built workflow; see {@link Workflow#enqueue()}. */
    EnqueuedWorkflow enqueue(Workflow workflow) {
        return this.enqueuer.enqueueWorkflow(new Enqueuer.WorkflowRequest(workflow.name(), workflow.partitionKey(),
                workflow.dependencyFailure(), workflow.steps().stream()
                    .map(step -> new Enqueuer.WorkflowStep(step.name(), step.request(), step.after())).toList()));
    }

    /**
     * Stops the group-commit writers (enqueues after this are written one by one) and the awaits of
     * job ends (callers still waiting are told the queue stopped).
     */
    @Override
    public void close() {
        this.awaiter.stop();
        this.enqueuer.close();
    }

    /**
     * Cancels a job: a READY job is cancelled at once; a claimed job gets a cancellation request
     * that its worker sees at the next heartbeat.
     * @param jobId the job id
     * @return what happened
     */
    public CancelResult cancel(long jobId) {
        return this.enqueuer.cancel(jobId);
    }

    /**
     * Checks a job as {@link #enqueue(JobRequest)} would, without writing it: its task is declared,
     * its options valid and its payload readable as its handler's payload type.
     * @param request the job
     * @throws InvalidJobException (or a subclass) if it could not be enqueued
     */
    public void check(JobRequest request) {
        this.enqueuer.check(request);
    }

    /**
     * Finds a job, active or finished (until retention deletes it).
     * @param jobId the job id
     * @return the job, or empty
     */
    public Optional<JobSnapshot> find(long jobId) {
        return this.enqueuer.find(jobId);
    }

    /**
     * Reads a job's attempts, oldest first, when its task keeps them ({@code @QueueTask(history = true)}):
     * when each ran, where, how it ended, its error and the lines its handler logged. The newest
     * {@value QueueDefaults#MAX_HISTORY_ATTEMPTS} are kept, as long as the job is.
     * @param jobId the job id
     * @return the attempts (none for a job of a task that keeps none, or that has not run), or empty
     * when there is no such job
     */
    public Optional<List<JobAttempt>> attempts(long jobId) {
        return this.enqueuer.attempts(jobId);
    }

    /**
     * Reads the durable steps a job's handler recorded ({@link TaskContext#step}, {@link TaskContext#sleep}),
     * in their order: names, values, the attempt that ran each, when it ran, a sleep's end. They are
     * kept as long as the job is.
     * @param jobId the job id
     * @return the steps (none for a job whose handler recorded none), or empty when there is no such job
     */
    public Optional<List<JobStep>> steps(long jobId) {
        return this.enqueuer.steps(jobId);
    }

    /**
     * Sends a signal to a job whose durable handler waits, or will wait, for it
     * ({@link TaskContext#awaitSignal}), from any node, on whichever shard holds the job: a job
     * sleeping in the wait is due at once. A job keeps one signal per name: a second one is
     * refused as {@link SignalResult#DUPLICATE}. Committed in the caller's transaction when there is
     * one (the signal exists if and only if the caller's change commits), its own otherwise.
     * @param jobId the job
     * @param name the signal's name: 1 to 190 characters
     * @param payload the payload, serialized as payloads are; {@code null} for none
     * @return what became of the signal
     * @throws IllegalArgumentException if the name is empty or too long
     */
    public SignalResult signal(long jobId, String name, Object payload) {
        return this.enqueuer.signal(jobId, name, payload);
    }

    /**
     * Waits until a job has finished and returns the result its handler recorded
     * ({@link TaskContext#recordResult}), read as the given type. Any node may run the job: its end
     * wakes the caller through a PostgreSQL notification, and the caller also reads the job every
     * poll interval in case a notification was lost. Call it after the transaction that enqueued the
     * job has committed, never inside a transaction.
     * @param <T> the result type
     * @param jobId the job
     * @param resultType the type to read the result as, as payloads are read
     * @param timeout how long to wait at most
     * @return the result, or {@code null} when the job completed without recording one
     * @throws JobFailedException if the job failed for good or was cancelled
     * @throws JobNotFinishedException if it has not finished within the timeout
     * @throws IllegalArgumentException if no job has the id (or retention removed it)
     * @throws IllegalStateException if called inside a transaction, or the queue stops first
     */
    public <T> T await(long jobId, Class<T> resultType, Duration timeout) {
        Objects.requireNonNull(resultType, "resultType");
        requireTimeout(timeout);
        JobSnapshot job = awaitJob(jobId, timeout);
        if (job.state() != JobState.COMPLETED) {
            throw new JobFailedException(job);
        }
        return job.result() == null ? null : this.mapper.readValue(job.result(), resultType);
    }

    /**
     * Returns a future that completes with the job once it has finished (COMPLETED, FAILED or
     * CANCELLED; its {@link JobSnapshot#result()} holds the result of a completed job), woken as
     * {@link #await} is. It completes exceptionally with {@link IllegalArgumentException} when no job
     * has the id, and with {@link IllegalStateException} when the queue stops first. Cancel it to stop
     * waiting.
     * @param jobId the job
     * @return the future
     * @throws IllegalStateException if called inside a transaction
     */
    public CompletableFuture<JobSnapshot> whenFinished(long jobId) {
        requireNoTransaction(jobId);
        return this.awaiter.whenFinished(jobId);
    }

    /**
     * Waits until a workflow (or batch) has finished — every one of its jobs ended — and returns it
     * with each step's state and result ({@link WorkflowInfo.Step#result()}): what the workflow
     * returned is its last steps' results. Woken as {@link #await} is.
     * @param workflowId the workflow ({@link EnqueuedWorkflow#id()})
     * @param timeout how long to wait at most
     * @return the workflow as it ended: COMPLETED, FAILED or CANCELLED
     * @throws JobNotFinishedException if it has not finished within the timeout (its id is the workflow's)
     * @throws IllegalArgumentException if no workflow has the id (or retention removed it)
     * @throws IllegalStateException if called inside a transaction, or the queue stops first
     */
    public WorkflowInfo awaitWorkflow(long workflowId, Duration timeout) {
        requireTimeout(timeout);
        requireNoTransaction(workflowId);
        WorkflowInfo workflow = this.enqueuer.findWorkflow(workflowId).orElseThrow(() -> new IllegalArgumentException(
                "No workflow has id " + workflowId + " (or retention removed it)"));
        long deadline = System.nanoTime() + timeout.toNanos();
        for (WorkflowInfo.Step step : workflow.steps()) {
            if (!"RUNNING".equals(workflow.state())) {
                break;
            }
            long left = Math.max(0, deadline - System.nanoTime());
            try {
                awaitJob(step.jobId(), Duration.ofNanos(left));
            }
            catch (JobNotFinishedException ex) {
                throw new JobNotFinishedException("Workflow", workflowId, timeout);
            }
        }
        return this.enqueuer.findWorkflow(workflowId).orElseThrow(() -> new IllegalArgumentException(
                "Workflow " + workflowId + " was removed by retention while it was awaited"));
    }

    private JobSnapshot awaitJob(long jobId, Duration timeout) {
        CompletableFuture<JobSnapshot> future = whenFinished(jobId);
        try {
            return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        }
        catch (TimeoutException ex) {
            this.awaiter.forget(jobId, future);
            throw new JobNotFinishedException(jobId, timeout);
        }
        catch (InterruptedException ex) {
            this.awaiter.forget(jobId, future);
            Thread.currentThread().interrupt();
            throw new QueueException("Interrupted while awaiting job " + jobId, ex);
        }
        catch (ExecutionException ex) {
            if (ex.getCause() instanceof RuntimeException failure) {
                throw failure;
            }
            throw new QueueException("Awaiting job " + jobId + " failed: " + ex.getCause(), ex.getCause());
        }
    }

    private static void requireTimeout(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("The timeout of an await must be zero or positive, not " + timeout);
        }
    }

    private static void requireNoTransaction(long jobId) {
        if (TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new IllegalStateException("Awaiting job " + jobId + " inside a transaction: the job's end is written "
                    + "by other transactions, and an uncommitted enqueue is not visible to them. Await after the "
                    + "enqueuing transaction commits, outside any transaction");
        }
    }
}
