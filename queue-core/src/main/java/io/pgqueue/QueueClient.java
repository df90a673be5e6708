package io.pgqueue;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

import io.pgqueue.internal.enqueue.Enqueuer;

/**
 * Enqueues, cancels and looks up jobs.
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

    /**
     * Creates the client of a queue; {@link PgQueue#client()} hands it out.
     * @param tasks the declared task types
     * @param enqueuer the engine's enqueue pipeline
     */
    QueueClient(TaskRegistry tasks, Enqueuer enqueuer) {
        this.tasks = Objects.requireNonNull(tasks, "tasks");
        this.enqueuer = Objects.requireNonNull(enqueuer, "enqueuer");
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
     * Stops the group-commit writers; enqueues after this are written one by one.
     */
    @Override
    public void close() {
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
}
