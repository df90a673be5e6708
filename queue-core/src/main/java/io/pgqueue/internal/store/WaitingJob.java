package io.pgqueue.internal.store;

import java.util.List;

import io.pgqueue.DependencyFailure;

/**
 * A job to be written as waiting for others.
 *
 * @param id its id, taken ahead ({@link WorkflowStore#nextIds(int)})
 * @param job the job
 * @param workflow its workflow, or {@code null}
 * @param onFailure what it does when a dependency fails
 * @param dependsOn the ids it waits for
 */
public record WaitingJob(long id, NewJob job, Long workflow, DependencyFailure onFailure, List<Long> dependsOn) {
}
