package io.pgqueue.observe;

import java.time.Duration;
import java.util.List;

import io.pgqueue.AttemptResult;
import io.pgqueue.EnqueueOutcome;
import io.pgqueue.JobState;

/**
 * What happens in the queue, reported from one place each: the client reports enqueues, the
 * worker runtime claims, starts, executions, written outcomes, lost leases and rescues. Metrics
 * (see {@link MicrometerQueueEvents}) and any other telemetry listen here. Methods are called on
 * the queue's own threads and must return quickly; the defaults do nothing.
 */
public interface QueueEvents {

    /** Listens to nothing. */
    QueueEvents NONE = new QueueEvents() {
    };

    /**
     * A job was enqueued (or met an active duplicate).
     * @param task the task
     * @param outcome what the enqueue did
     */
    default void enqueued(String task, EnqueueOutcome outcome) {
    }

    /**
     * A pool claimed jobs in one statement.
     * @param pool the pool
     * @param task the task
     * @param count jobs of that task claimed
     */
    default void claimed(String pool, String task, int count) {
    }

    /**
     * A claim statement ran.
     * @param pool the pool
     * @param batchSize jobs claimed
     * @param latency how long the statement took
     */
    default void claimRan(String pool, int batchSize, Duration latency) {
    }

    /**
     * A handler started.
     * @param task the task
     * @param queueWait time since the job became due
     * @param startLatency time since enqueue for jobs that were due at once, else {@code null}
     * @param deadlineMissed whether it started after its delay-tolerance deadline
     */
    default void started(String task, Duration queueWait, Duration startLatency, boolean deadlineMissed) {
    }

    /**
     * A handler finished.
     * @param task the task
     * @param outcome what its attempt amounts to
     * @param duration how long it ran
     */
    default void executed(String task, AttemptResult outcome, Duration duration) {
    }

    /**
     * Outcomes were written: each job moved to its new state.
     * @param task the task
     * @param state COMPLETED, FAILED, CANCELLED, or READY (retry or re-run)
     */
    default void recorded(String task, JobState state) {
    }

    /**
     * A fenced write changed nothing: the job was no longer held by this node.
     * @param task the task
     */
    default void leaseLost(String task) {
    }

    /**
     * The rescuer took back a job whose lease expired.
     * @param task the task
     * @param state READY, FAILED or CANCELLED
     */
    default void rescued(String task, JobState state) {
    }

    /**
     * A waiting job was cancelled.
     * @param task the task
     */
    default void cancelled(String task) {
    }

    /**
     * Combines listeners.
     * @param listeners the listeners
     * @return one listener that calls each in turn
     */
    static QueueEvents of(List<QueueEvents> listeners) {
        if (listeners.isEmpty()) {
            return NONE;
        }
        if (listeners.size() == 1) {
            return listeners.get(0);
        }
        return new CompositeQueueEvents(List.copyOf(listeners));
    }

    /**
     * A workflow (or batch) was enqueued and committed.
     * @param name the workflow's name
     */
    default void workflowStarted(String name) {
    }
}
