package io.pgqueue.internal.worker;

import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.pgqueue.JobState;
import io.pgqueue.QueueAdmin;
import io.pgqueue.internal.store.FencedResult;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.observe.QueueEvents;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Returns claimed jobs whose leases expired to READY — or to FAILED when their attempts are used
 * up, or CANCELLED when their cancellation was requested — in batches until none is left. Every
 * node runs it periodically; operators run it at once through {@link QueueAdmin#rescueNow()}. Both
 * report each rescued job to {@link QueueEvents#rescued}. Safe to run on many nodes at once.
 */
public final class Rescuer {

    private static final Logger log = LoggerFactory.getLogger(Rescuer.class);

    private final JobStore jobs;

    private final int batchSize;

    private final QueueEvents events;

    private final List<String> historyTasks;

    /**
     * Creates a rescuer that keeps no attempt history of the jobs it rescues, unless they have one.
     * @param jobs the job store
     * @param batchSize the most jobs one rescue transaction returns
     * @param events receives each rescued job
     */
    public Rescuer(JobStore jobs, int batchSize, QueueEvents events) {
        this(jobs, batchSize, events, List.of());
    }

    /**
     * Creates a rescuer.
     * @param jobs the job store
     * @param batchSize the most jobs one rescue transaction returns
     * @param events receives each rescued job
     * @param historyTasks the tasks whose jobs keep their attempts ({@link io.pgqueue.TaskDefinition#history()})
     */
    public Rescuer(JobStore jobs, int batchSize, QueueEvents events, Collection<String> historyTasks) {
        if (batchSize < 1) {
            throw new IllegalArgumentException("The rescue batch size must be positive, was " + batchSize);
        }
        this.jobs = jobs;
        this.batchSize = batchSize;
        this.events = events;
        this.historyTasks = List.copyOf(historyTasks);
    }

    /**
     * Returns a rescuer with these settings on another job store (another shard's).
     * @param other the job store
     * @return the rescuer
     */
    public Rescuer on(JobStore other) {
        return new Rescuer(other, this.batchSize, this.events, this.historyTasks);
    }

    /**
     * The rescued jobs held slots of their tasks' limits (global concurrency, groups): nodes that
     * wait for one look again at once rather than at their next poll.
     */
    private void slotsFreed(Set<String> tasks) {
        try {
            this.jobs.notifySlotsFreed(tasks);
        }
        catch (RuntimeException ex) {
            log.debug("Could not announce the rescued jobs of {}; nodes look again at their next poll: {}", tasks,
                    ex.toString());
        }
    }

    /**
     * Rescues every claimed job whose lease has expired by now.
     * @return the number of jobs moved to each state
     */
    public Map<JobState, Long> rescueExpired() {
        Map<JobState, Long> counts = new EnumMap<>(JobState.class);
        FencedResult result;
        do {
            result = this.jobs.rescueExpiredLeases(this.batchSize, this.historyTasks);
            FencedResult rescued = result;
            rescued.applied().forEach((id, state) -> {
                counts.merge(state, 1L, Long::sum);
                this.events.rescued(rescued.tasks().get(id), state);
            });
            if (!result.applied().isEmpty()) {
                log.info("Rescued {} jobs whose leases expired: {} ready again, {} failed, {} cancelled",
                        result.applied().size(), result.count(JobState.READY), result.count(JobState.FAILED),
                        result.count(JobState.CANCELLED));
                slotsFreed(Set.copyOf(result.tasks().values()));
            }
        }
        while (result.applied().size() == this.batchSize);
        return counts;
    }
}
