package io.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.pgqueue.observe.QueueEvents;

/**
 * Counts, per task, the jobs this node started after their delay-tolerance deadline, for the
 * {@code queues} endpoint and the console (metrics count them too, as {@code pgqueue.jobs.deadline.missed}).
 */
public final class LocalDeadlineMisses implements QueueEvents {

    private final Map<String, AtomicLong> misses = new ConcurrentHashMap<>();

    @Override
    public void started(String task, Duration queueWait, Duration startLatency, boolean deadlineMissed) {
        if (deadlineMissed) {
            this.misses.computeIfAbsent(task, t -> new AtomicLong()).incrementAndGet();
        }
    }

    /**
     * @param task the task
     * @return the jobs of the task this node started after their deadline since it started
     */
    public long count(String task) {
        AtomicLong count = this.misses.get(task);
        return count == null ? 0 : count.get();
    }
}
