package io.pgqueue;

import java.util.Objects;

/**
 * A batch being built: jobs that run independently, and a callback job that runs once when all of
 * them ended, whether they completed, failed or were cancelled. The callback reads how many
 * succeeded and failed from {@link TaskContext#dependencies()}. Enqueued as one workflow (one
 * transaction, the caller's when there is one), whose steps are named {@code "0"}, {@code "1"}, ...
 * in the order added and {@value #CALLBACK} for the callback.
 * <pre>{@code
 * Batch batch = queue.batch("import-customers");
 * rows.forEach(row -> batch.add("import-row", row));
 * batch.onFinish("import-report", new Report(fileId)).enqueue();
 * }</pre>
 * Not thread-safe; build it on one thread.
 */
public final class Batch {

    /** The step name of the callback. */
    public static final String CALLBACK = "callback";

    private final Workflow workflow;

    private int size;

    private JobRequest callback;

    private boolean enqueued;

    Batch(QueueClient client, String name) {
        this.workflow = new Workflow(client, name).onDependencyFailure(DependencyFailure.RUN);
    }

    /**
     * Adds a job.
     * @param task the task
     * @param payload the payload
     * @return this batch
     */
    public Batch add(String task, Object payload) {
        return add(JobRequest.of(task, payload));
    }

    /**
     * Adds a job with options.
     * @param request the job
     * @return this batch
     * @throws InvalidJobException past {@value QueueDefaults#MAX_WORKFLOW_JOBS} - 1 jobs
     */
    public Batch add(JobRequest request) {
        if (this.size == QueueDefaults.MAX_WORKFLOW_JOBS - 1) {
            throw new InvalidJobException("A batch holds at most " + (QueueDefaults.MAX_WORKFLOW_JOBS - 1)
                    + " jobs and its callback");
        }
        this.workflow.add(Integer.toString(this.size), request, null);
        this.size++;
        return this;
    }

    /**
     * Sets the callback job, run once every job of the batch ended.
     * @param task the task
     * @param payload the payload
     * @return this batch
     */
    public Batch onFinish(String task, Object payload) {
        return onFinish(JobRequest.of(task, payload));
    }

    /**
     * Sets the callback job with options.
     * @param request the job
     * @return this batch
     */
    public Batch onFinish(JobRequest request) {
        this.callback = Objects.requireNonNull(request, "request");
        return this;
    }

    /**
     * Places the batch's jobs by a partition key (see {@link Workflow#withPartitionKey(String)}).
     * @param partitionKey the key
     * @return this batch
     */
    public Batch withPartitionKey(String partitionKey) {
        this.workflow.withPartitionKey(partitionKey);
        return this;
    }

    /**
     * Enqueues the jobs and the callback in one transaction.
     * @return the batch's workflow id and its jobs' ids
     * @throws InvalidJobException if the batch has no job or no callback, or a job is invalid;
     * nothing was written
     * @throws IllegalStateException if it was enqueued before
     */
    public EnqueuedWorkflow enqueue() {
        if (this.size == 0 || this.callback == null) {
            throw new InvalidJobException("A batch needs at least one job and a callback (onFinish)");
        }
        if (this.enqueued) {
            throw new IllegalStateException("This batch was enqueued already; build a new one");
        }
        this.enqueued = true;
        String[] all = new String[this.size];
        for (int i = 0; i < this.size; i++) {
            all[i] = Integer.toString(i);
        }
        this.workflow.add(CALLBACK, this.callback, Workflow.after(all));
        return this.workflow.enqueue();
    }
}
