package io.pgqueue.worker;

import java.time.Duration;

import io.pgqueue.JobState;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.store.FencedResult;
import io.pgqueue.store.JobStore;
import io.pgqueue.store.NodeStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The periodic housekeeping every node runs; each piece is safe to run on many nodes at once.
 * <ul>
 * <li>{@link #rescue()}: claimed jobs past their lease deadline go back to READY (or FAILED /
 * CANCELLED) — the rescuer;</li>
 * <li>{@link #purge()}: finished jobs past their retention are deleted in batches, and nodes that
 * stopped reporting long ago leave the registry — the janitor;</li>
 * <li>{@link #vacuum()}: the active-job table is vacuumed, because its dead rows pile up faster than
 * autovacuum wakes up (measured: 4× the sustained throughput).</li>
 * </ul>
 */
final class Maintenance {

    private static final Logger log = LoggerFactory.getLogger(Maintenance.class);

    /** Nodes silent for this many heartbeat intervals are considered gone. */
    private static final int SILENT_HEARTBEATS = 360;

    private final JobStore jobs;

    private final NodeStore nodes;

    private final WorkerSettings settings;

    /** How long completed jobs are kept: the queue's setting, which also decides whether they are archived. */
    private final Duration completedRetention;

    private final QueueEvents events;

    Maintenance(JobStore jobs, NodeStore nodes, Duration completedRetention, WorkerSettings settings,
            QueueEvents events) {
        this.completedRetention = completedRetention;
        this.events = events;
        this.jobs = jobs;
        this.nodes = nodes;
        this.settings = settings;
    }

    void rescue() {
        try {
            FencedResult result;
            do {
                result = this.jobs.rescueExpiredLeases(this.settings.batchSize());
                FencedResult rescued = result;
                rescued.applied().forEach((id, state) -> this.events.rescued(rescued.tasks().get(id), state));
                if (!result.applied().isEmpty()) {
                    log.info("Rescued {} jobs whose leases expired: {} ready again, {} failed, {} cancelled",
                            result.applied().size(), result.count(JobState.READY), result.count(JobState.FAILED),
                            result.count(JobState.CANCELLED));
                }
            }
            while (result.applied().size() == this.settings.batchSize());
        }
        catch (RuntimeException ex) {
            log.warn("Could not rescue expired leases: {}", ex.toString());
        }
    }

    void purge() {
        try {
            purge(JobState.COMPLETED, this.completedRetention);
            purge(JobState.FAILED, this.settings.failedRetention());
            purge(JobState.CANCELLED, this.settings.cancelledRetention());
            this.nodes.removeSilent(this.settings.heartbeatInterval().multipliedBy(SILENT_HEARTBEATS));
        }
        catch (RuntimeException ex) {
            log.warn("Could not delete finished jobs past their retention: {}", ex.toString());
        }
    }

    private void purge(JobState state, Duration retention) {
        long deleted = this.jobs.purgeFinished(state, retention, this.settings.batchSize());
        if (deleted > 0) {
            log.debug("Deleted {} {} jobs older than {}", deleted, state, retention);
        }
    }

    void vacuum() {
        try {
            this.jobs.vacuumActiveJobs();
        }
        catch (RuntimeException ex) {
            log.debug("Could not vacuum the job table: {}", ex.toString());
        }
    }
}
