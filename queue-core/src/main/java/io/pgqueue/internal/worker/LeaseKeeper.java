package io.pgqueue.internal.worker;

import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

import io.pgqueue.internal.lifecycle.BackgroundService;
import io.pgqueue.internal.store.FencedResult;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.worker.WorkerSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renews the leases of every job the node holds, buffered or running, in batches once per
 * heartbeat interval, so a short lease still allows hour-long handlers while a crashed node's jobs
 * come back within seconds. What the database answers (lost leases, cancellation requests) is
 * applied to the held jobs by {@link HeldJobs#apply}. Each round it also declares hung the handlers
 * still running a lease after their timeout's interrupt ({@link PoolSlots#findHung}).
 */
public final class LeaseKeeper extends BackgroundService {

    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

    private final JobStore store;

    private final HeldJobs held;

    private final WorkerSettings settings;

    private final Completer completer;

    private final List<PoolSlots> pools;

    /** Which of the held jobs are this keeper's: those of its shard. */
    private final Predicate<RunningJob> mine;

    /**
     * @param store the shard's job store
     * @param held the node's held jobs
     * @param settings the worker settings
     * @param completer the shard's completer
     * @param pools the pools to look for hung handlers in (one keeper per node does)
     * @param mine which held jobs' leases this keeper renews
     * @param threadSuffix appended to the thread's name
     */
    LeaseKeeper(JobStore store, HeldJobs held, WorkerSettings settings, Completer completer, List<PoolSlots> pools,
            Predicate<RunningJob> mine, String threadSuffix) {
        super("pgqueue-lease-keeper" + threadSuffix, settings.heartbeatInterval().plusSeconds(5));
        this.mine = mine;
        this.store = store;
        this.held = held;
        this.settings = settings;
        this.completer = completer;
        this.pools = List.copyOf(pools);
    }

    @Override
    protected void run() {
        while (pause(this.settings.heartbeatInterval())) {
            renew();
        }
    }

    /** Renews the leases of the held jobs once. */
    void renew() {
        long now = System.nanoTime();
        long writeGrace = this.settings.lease().toNanos() * 2;
        // A handler still running a lease after its timeout's interrupt ignores it: its job is
        // (being) rescued, and the handler is declared hung.
        this.pools.forEach(pool -> pool.findHung(now, this.settings.lease().toNanos()));
        List<RunningJob> jobs = this.held.all().stream().filter(job -> this.mine.test(job) && job.keepsLease(now, writeGrace))
            .toList();
        for (int from = 0; from < jobs.size(); from += this.settings.batchSizes().heartbeat()) {
            List<RunningJob> batch = jobs.subList(from, Math.min(jobs.size(), from + this.settings.batchSizes().heartbeat()));
            try {
                long sent = System.nanoTime();
                FencedResult result = this.store.heartbeat(batch.stream().map(RunningJob::lease).toList(),
                        batch.stream().map(RunningJob::progress).toList(), this.settings.lease());
                Set<Lease> lost = Set.copyOf(result.lost());
                batch.stream().filter(job -> !lost.contains(job.lease()))
                    .forEach(job -> job.leaseConfirmed(sent, this.settings.lease().toNanos()));
                this.held.apply(result, this.completer);
            }
            catch (RuntimeException ex) {
                // The next batches would fail alike; the next heartbeat tries them all again.
                log.warn("Could not renew the leases of {} jobs: {}", jobs.size() - from, ex.toString());
                return;
            }
        }
    }
}
