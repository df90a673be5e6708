package io.pgqueue.observe;

import java.time.Duration;
import java.util.List;

import io.pgqueue.AttemptResult;
import io.pgqueue.EnqueueOutcome;
import io.pgqueue.JobState;

/**
 * Passes each event to several listeners.
 */
final class CompositeQueueEvents implements QueueEvents {

    private final List<QueueEvents> listeners;

    public CompositeQueueEvents(List<QueueEvents> listeners) {
        this.listeners = listeners;
    }

    @Override
    public void enqueued(String task, EnqueueOutcome outcome) {
        this.listeners.forEach(l -> l.enqueued(task, outcome));
    }

    @Override
    public void claimed(String pool, String task, int count) {
        this.listeners.forEach(l -> l.claimed(pool, task, count));
    }

    @Override
    public void claimRan(String pool, int batchSize, Duration latency) {
        this.listeners.forEach(l -> l.claimRan(pool, batchSize, latency));
    }

    @Override
    public void started(String task, Duration queueWait, Duration startLatency, boolean deadlineMissed) {
        this.listeners.forEach(l -> l.started(task, queueWait, startLatency, deadlineMissed));
    }

    @Override
    public void executed(String task, AttemptResult outcome, Duration duration) {
        this.listeners.forEach(l -> l.executed(task, outcome, duration));
    }

    @Override
    public void recorded(String task, JobState state) {
        this.listeners.forEach(l -> l.recorded(task, state));
    }

    @Override
    public void leaseLost(String task) {
        this.listeners.forEach(l -> l.leaseLost(task));
    }

    @Override
    public void rescued(String task, JobState state) {
        this.listeners.forEach(l -> l.rescued(task, state));
    }

    @Override
    public void cancelled(String task) {
        this.listeners.forEach(l -> l.cancelled(task));
    }

    @Override
    public void workflowStarted(String name) {
        this.listeners.forEach(l -> l.workflowStarted(name));
    }
}
