package io.pgqueue.internal.worker;

import io.pgqueue.JobRequest;

/**
 * Enqueues a durable handler's child job ({@link io.pgqueue.TaskContext#spawn}) in its parent's
 * partition, in the transaction the caller has open on the parent's database, marked so that its
 * end is signalled to the parent.
 */
@FunctionalInterface
public interface ChildSpawner {

    /**
     * Enqueues a child job.
     * @param name the spawn's name
     * @param request the child
     * @param parentId the job that spawns it
     * @param detached whether the child stays when its parent is cancelled
     * @return the child's job id
     */
    long spawn(String name, JobRequest request, long parentId, boolean detached);
}
