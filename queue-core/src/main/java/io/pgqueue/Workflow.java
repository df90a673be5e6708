package io.pgqueue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A workflow being built: named steps, each a job, some of them after others. Enqueued as a whole
 * in one transaction ({@link #enqueue()}; the caller's transaction when there is one): every job is
 * written, or none. A step runs when the steps it comes after completed; steps without
 * {@link #after(String...)} are due at once. A step names only steps added before it, so a workflow
 * has no cycles.
 * <pre>{@code
 * queue.workflow("publish-upload")
 *     .add("thumbnail", "generate-thumbnail", upload)
 *     .add("scan", "virus-scan", upload)
 *     .add("publish", "publish-file", upload, Workflow.after("thumbnail", "scan"))
 *     .enqueue();
 * }</pre>
 * Not thread-safe; build it on one thread.
 */
public final class Workflow {

    private final QueueClient client;

    private final String name;

    private final Map<String, Step> steps = new LinkedHashMap<>();

    private DependencyFailure onDependencyFailure = DependencyFailure.CANCEL;

    private String partitionKey;

    Workflow(QueueClient client, String name) {
        if (name == null || name.isBlank() || name.length() > QueueDefaults.MAX_WORKFLOW_NAME_LENGTH) {
            throw new InvalidJobException("A workflow name must be non-blank and at most "
                    + QueueDefaults.MAX_WORKFLOW_NAME_LENGTH + " characters, was "
                    + (name == null ? "null" : "'" + name + "'"));
        }
        if (name.indexOf('\u0000') >= 0) {
            throw new InvalidJobException("A workflow name holds the character U+0000, which PostgreSQL cannot store");
        }
        this.client = client;
        this.name = name;
    }

    /**
     * The steps a step comes after.
     * @param steps the names of steps added before
     * @return the dependency, for {@code add}
     */
    public static After after(String... steps) {
        return new After(List.of(steps));
    }

    /**
     * Sets what a step does when a step it comes after fails for good or is cancelled: it is
     * cancelled, and so are the steps after it ({@link DependencyFailure#CANCEL}, the default), or it
     * runs anyway ({@link DependencyFailure#RUN}).
     * @param onDependencyFailure the choice
     * @return this workflow
     */
    public Workflow onDependencyFailure(DependencyFailure onDependencyFailure) {
        this.onDependencyFailure = Objects.requireNonNull(onDependencyFailure, "onDependencyFailure");
        return this;
    }

    /**
     * Places the workflow's jobs by a partition key (all of them stay in one partition, and so on one
     * shard); without it a partition is picked at random.
     * @param partitionKey the key
     * @return this workflow
     */
    public Workflow withPartitionKey(String partitionKey) {
        this.partitionKey = Objects.requireNonNull(partitionKey, "partitionKey");
        return this;
    }

    /**
     * Adds a step due at once.
     * @param step its name, unique in the workflow
     * @param task the task
     * @param payload the payload
     * @return this workflow
     */
    public Workflow add(String step, String task, Object payload) {
        return add(step, JobRequest.of(task, payload), null);
    }

    /**
     * Adds a step that runs after others.
     * @param step its name, unique in the workflow
     * @param task the task
     * @param payload the payload
     * @param after the steps it comes after
     * @return this workflow
     */
    public Workflow add(String step, String task, Object payload, After after) {
        return add(step, JobRequest.of(task, payload), after);
    }

    /**
     * Adds a step with options (priority, delay after its release, headers, group, ...).
     * @param step its name, unique in the workflow
     * @param request the job
     * @param after the steps it comes after, or {@code null} for none
     * @return this workflow
     * @throws InvalidJobException if the name is taken or invalid, or {@code after} names a step not
     * added yet
     */
    public Workflow add(String step, JobRequest request, After after) {
        if (step == null || step.isBlank() || step.length() > QueueDefaults.MAX_WORKFLOW_NAME_LENGTH) {
            throw new InvalidJobException("A step name must be non-blank and at most "
                    + QueueDefaults.MAX_WORKFLOW_NAME_LENGTH + " characters, was " + (step == null ? "null" : "'" + step + "'"));
        }
        if (step.indexOf('\u0000') >= 0) {
            throw new InvalidJobException("A step name of workflow '" + this.name + "' holds the character U+0000, "
                    + "which PostgreSQL cannot store");
        }
        if (this.steps.containsKey(step)) {
            throw new InvalidJobException("Workflow '" + this.name + "' has a step '" + step + "' already");
        }
        if (request == null) {
            throw new InvalidJobException("The job of step '" + step + "' must not be null");
        }
        List<String> before = after == null ? List.of() : after.steps();
        for (String dependency : before) {
            if (!this.steps.containsKey(dependency)) {
                throw new InvalidJobException("Step '" + step + "' of workflow '" + this.name + "' comes after '"
                        + dependency + "', which is not a step added before it");
            }
        }
        if (this.steps.size() == QueueDefaults.MAX_WORKFLOW_JOBS) {
            throw new InvalidJobException("A workflow holds at most " + QueueDefaults.MAX_WORKFLOW_JOBS + " jobs");
        }
        this.steps.put(step, new Step(step, request, List.copyOf(before)));
        return this;
    }

    /**
     * Enqueues every step in one transaction: the caller's when there is one, else its own.
     * @return the workflow's id and its jobs' ids
     * @throws InvalidJobException if the workflow has no step or a job is invalid; nothing was written
     */
    public EnqueuedWorkflow enqueue() {
        if (this.steps.isEmpty()) {
            throw new InvalidJobException("Workflow '" + this.name + "' has no steps");
        }
        return this.client.enqueue(this);
    }

    String name() {
        return this.name;
    }

    DependencyFailure dependencyFailure() {
        return this.onDependencyFailure;
    }

    String partitionKey() {
        return this.partitionKey;
    }

    List<Step> steps() {
        return new ArrayList<>(this.steps.values());
    }

    /**
     * The steps a step comes after.
     *
     * @param steps their names
     */
    public record After(List<String> steps) {

        /**
         * Checks the names.
         */
        public After {
            if (steps == null || steps.isEmpty() || steps.stream().anyMatch(step -> step == null)) {
                throw new InvalidJobException("after(...) needs at least one step name, and no null");
            }
            steps = steps.stream().distinct().toList();
        }
    }

    /** One step as added. */
    record Step(String name, JobRequest request, List<String> after) {
    }
}
