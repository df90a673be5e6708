package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import io.pgqueue.JobState;
import io.pgqueue.Retention;
import io.pgqueue.internal.lifecycle.BackgroundService;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.NodeStore;
import io.pgqueue.worker.WorkerSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The periodic housekeeping every node runs; each piece is safe to run on many nodes at once.
 * <ul>
 * <li>{@link #rescue()}: claimed jobs past their lease deadline go back to READY (or FAILED /
 * CANCELLED) — the rescuer — and sleeping jobs whose awaited signal came while their attempt ended
 * are made due;</li>
 * <li>{@link #purge()}: finished jobs past their retention are deleted in batches, and nodes that
 * stopped reporting long ago leave the registry — the janitor;</li>
 * <li>{@link #vacuum()}: the active-job table is vacuumed, because its dead rows pile up faster than
 * autovacuum wakes up (measured: 4× the sustained throughput).</li>
 * </ul>
 */
public final class Maintenance extends BackgroundService {

    private static final Logger log = LoggerFactory.getLogger(Maintenance.class);

    /** Nodes silent for this many heartbeat intervals are considered gone. */
    private static final int SILENT_HEARTBEATS = 360;

    private final JobStore jobs;

    private final NodeStore nodes;

    private final WorkerSettings settings;

    private final Retention retention;

    private final Rescuer rescuer;

    Maintenance(JobStore jobs, NodeStore nodes, Retention retention, WorkerSettings settings, Rescuer rescuer,
            String threadSuffix) {
        super("pgqueue-maintenance" + threadSuffix, Duration.ofSeconds(30));
        this.retention = retention;
        this.rescuer = rescuer;
        this.jobs = jobs;
        this.nodes = nodes;
        this.settings = settings;
    }

    /** Runs each piece of housekeeping when its interval has passed since it last ran. */
    @Override
    protected void run() {
        List<Periodic> work = new ArrayList<>(List.of(new Periodic(this.settings.rescueInterval(), this::rescue),
                new Periodic(this.settings.retentionInterval(), this::purge)));
        if (!this.settings.vacuumInterval().isZero()) {
            work.add(new Periodic(this.settings.vacuumInterval(), this::vacuum));
        }
        long now = System.nanoTime();
        work.forEach(periodic -> periodic.next = now + periodic.interval);
        while (isRunning()) {
            Periodic due = work.stream().min(Comparator.comparingLong(periodic -> periodic.next)).orElseThrow();
            if (!pause(Duration.ofNanos(due.next - System.nanoTime()))) {
                return;
            }
            due.work.run();
            due.next = System.nanoTime() + due.interval;
        }
    }

    void rescue() {
        try {
            int woken = this.jobs.steps().wakeSignalled();
            if (woken > 0) {
                log.debug("Made due {} sleeping jobs whose signal came while their attempt ended", woken);
            }
        }
        catch (RuntimeException ex) {
            log.warn("Could not wake jobs whose signal came: {}", ex.toString());
        }
        try {
            this.rescuer.rescueExpired();
        }
        catch (RuntimeException ex) {
            log.warn("Could not rescue expired leases: {}", ex.toString());
        }
    }

    void purge() {
        try {
            for (JobState state : List.of(JobState.COMPLETED, JobState.FAILED, JobState.CANCELLED)) {
                purge(state, this.retention.of(state));
            }
            long workflows = this.jobs.workflows().purgeFinished(this.retention, this.settings.batchSizes().maintenance());
            if (workflows > 0) {
                log.debug("Deleted {} workflows past their retention", workflows);
            }
            this.nodes.removeSilent(this.settings.heartbeatInterval().multipliedBy(SILENT_HEARTBEATS));
        }
        catch (RuntimeException ex) {
            log.warn("Could not delete finished jobs past their retention: {}", ex.toString());
        }
    }

    private void purge(JobState state, Duration retention) {
        long deleted = this.jobs.purgeFinished(state, retention, this.settings.batchSizes().maintenance());
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

    /** One piece of housekeeping, run with a fixed delay between the end of one run and the next. */
    private static final class Periodic {

        final long interval;

        final Runnable work;

        long next;

        Periodic(Duration interval, Runnable work) {
            this.interval = interval.toNanos();
            this.work = work;
        }
    }
}
