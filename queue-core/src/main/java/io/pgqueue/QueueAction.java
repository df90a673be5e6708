package io.pgqueue;

import java.time.Instant;

/**
 * An action an operator took through {@link QueueAdmin} (the console, the {@code queues}
 * endpoint, or code): who, what, when and how many jobs, and for a bulk action
 * ({@link QueueAdmin#startBulk}) how far it got. Every node records its actions in the queue's
 * database, so the record is the installation's audit trail.
 *
 * @param id the action's id, increasing
 * @param actor who took it ({@link QueueAdmin#as}), or {@code null} when the admin was used without a name
 * @param action what was done: {@code pause}, {@code resume}, {@code rerun}, {@code rerun-failed},
 * {@code cancel}, {@code rescue}, {@code schedule-put}, {@code schedule-remove}, {@code move-partition}, {@code redrive},
 * or a bulk action's {@link BulkAction#name()}
 * @param target what it was done to: a task, a job, a schedule, or the jobs a filter matched ({@link JobQuery#describe()})
 * @param state whether it runs or how it ended
 * @param matched how many jobs the filter matched when a bulk action started, or {@code null}
 * @param acted how many jobs the action changed so far
 * @param skipped how many matched jobs it left as they were, because they had changed meanwhile
 * (claimed, finished, re-run), an active job held their dedup key, or their partition was moving
 * @param node the node that took (or runs) it
 * @param message what it did, or why it failed or stopped, or {@code null}
 * @param startedAt when it started
 * @param updatedAt when its progress last changed
 * @param finishedAt when it ended, or {@code null} while it runs
 */
public record QueueAction(long id, String actor, String action, String target, State state, Long matched, long acted,
        long skipped, String node, String message, Instant startedAt, Instant updatedAt, Instant finishedAt) {

    /** Where an action stands. */
    public enum State {
        /** A bulk action still at work, batch after batch. */
        RUNNING,
        /** Done: every matching job was acted on or skipped. */
        DONE,
        /** Ended by a failure; the jobs acted on so far stay changed, and running it again acts on the rest. */
        FAILED,
        /** Stopped before it was done: its node shut down. Running it again acts on the rest. */
        STOPPED
    }
}
