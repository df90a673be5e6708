package io.pgqueue;

import java.time.Instant;
import java.util.List;

/**
 * A workflow as operators see it: how far it got and, when asked for one workflow, each of its jobs.
 *
 * @param id the workflow id
 * @param name its name
 * @param state RUNNING until every job ended; then COMPLETED (all completed), FAILED (one failed) or
 * CANCELLED (one was cancelled, none failed)
 * @param onDependencyFailure what a job whose dependency failed does
 * @param jobs the number of jobs
 * @param completed jobs that completed
 * @param failed jobs that failed for good
 * @param cancelled jobs cancelled (by an operator, or because a dependency failed)
 * @param createdAt when it was enqueued
 * @param finishedAt when its last job ended, or {@code null}
 * @param steps its jobs, in id order (empty in lists of workflows)
 */
public record WorkflowInfo(long id, String name, String state, DependencyFailure onDependencyFailure, int jobs,
        int completed, int failed, int cancelled, Instant createdAt, Instant finishedAt, List<Step> steps) {

    /**
     * One job of a workflow.
     *
     * @param step its step name in the workflow
     * @param jobId its job id
     * @param task its task
     * @param state its state: WAITING, READY, STARTING, RUNNING, COMPLETED, FAILED or CANCELLED, or
     * {@code null} once retention removed it
     * @param attempt the attempts it made
     * @param lastError its last error, or {@code null}
     * @param waitsFor the ids of the jobs it waits (or waited) for, until it ends
     * @param result the result it recorded as JSON text, once it completed in the attempt that recorded
     * it; else {@code null}
     * @param after the steps it comes after, as the workflow declared them (kept after it ended);
     * empty for a step without any
     * @param createdAt when it was enqueued
     * @param startedAt when its last attempt started, or {@code null}
     * @param finishedAt when it ended, or {@code null}
     */
    public record Step(String step, long jobId, String task, JobState state, int attempt, String lastError,
            List<Long> waitsFor, String result, List<String> after, Instant createdAt, Instant startedAt,
            Instant finishedAt) {

        /**
         * Copies the lists.
         */
        public Step {
            waitsFor = waitsFor == null ? List.of() : List.copyOf(waitsFor);
            after = after == null ? List.of() : List.copyOf(after);
        }
    }
}
