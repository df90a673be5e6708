package io.pgqueue;

import java.util.List;

/**
 * A handler that takes several jobs of its task in one call: a chunk of up to the task's chunk
 * size, gathered for at most its linger time ({@code @QueueTask(chunkSize = 50, chunkLinger = "200ms")}).
 * Each job still runs its own attempt, with its own lease, timeout, limits and retries; the chunk
 * is the attempts that run at the same time, handed over together. Each item's outcome is its own:
 * an item the handler leaves alone completes when the call returns; one it fails is retried by the
 * task's policy (or fails for good, as a handler's exception would); one it snoozes runs later.
 * When the call throws, every item it did not settle fails with that exception.
 *
 * @param <P> the payload type
 */
@FunctionalInterface
public interface ChunkHandler<P> {

    /**
     * Handles a chunk of jobs.
     * @param chunk the jobs, in the order their attempts started; at least one
     * @throws Exception what fails the items not settled
     */
    void handle(List<ChunkItem<P>> chunk) throws Exception;
}
