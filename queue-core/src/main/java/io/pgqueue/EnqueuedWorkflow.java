package io.pgqueue;

import java.util.Map;

/**
 * A workflow (or batch) just enqueued.
 *
 * @param id the workflow id ({@link QueueAdmin#workflow(long)}, the endpoint's workflow view)
 * @param jobs the job id of each step, in the order the steps were added
 */
public record EnqueuedWorkflow(long id, Map<String, Long> jobs) {

    /**
     * Returns the job id of a step.
     * @param step the step name
     * @return its job id
     * @throws IllegalArgumentException if the workflow has no such step
     */
    public long jobId(String step) {
        Long id = this.jobs.get(step);
        if (id == null) {
            throw new IllegalArgumentException("The workflow has no step '" + step + "'; it has " + this.jobs.keySet());
        }
        return id;
    }
}
