package io.pgqueue.worker;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

import io.pgqueue.observe.QueueEvents;
import io.pgqueue.store.FencedResult;
import io.pgqueue.store.JobStore;
import io.pgqueue.store.Lease;
import io.pgqueue.store.Outcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Renews the leases of every job the node holds, buffered or running, in batches, so a short
 * lease still allows hour-long handlers while a crashed node's jobs come back within seconds.
 * Passes on what the database says: cancellation requests and lost leases.
 */
final class LeaseKeeper implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

    private final JobStore store;

    private final List<WorkerPool> pools;

    private final WorkerSettings settings;

    private final Completer completer;

    private final QueueEvents events;

    LeaseKeeper(JobStore store, List<WorkerPool> pools, WorkerSettings settings, Completer completer, QueueEvents events) {
        this.events = events;
        this.store = store;
        this.pools = pools;
        this.settings = settings;
        this.completer = completer;
    }

    @Override
    public void run() {
        List<RunningJob> jobs = new ArrayList<>();
        long now = System.nanoTime();
        long writeGrace = this.settings.lease().toNanos() * 2;
        // A timed-out handler that ignores its interrupt keeps no lease: its job comes back by rescue.
        // A finished job keeps its lease while its outcome waits to be written, but not forever.
        this.pools.forEach(pool -> pool.held().stream()
            .filter(job -> !job.timedOut)
            .filter(job -> job.finishedNanos == 0 || now - job.finishedNanos < writeGrace)
            .forEach(jobs::add));
        for (int from = 0; from < jobs.size(); from += this.settings.batchSize()) {
            List<RunningJob> batch = jobs.subList(from, Math.min(jobs.size(), from + this.settings.batchSize()));
            try {
                FencedResult result = this.store.heartbeat(batch.stream().map(RunningJob::lease).toList(),
                        batch.stream().map(job -> job.progress).toList(), this.settings.lease());
                apply(batch, result);
            }
            catch (RuntimeException ex) {
                // The next batches would fail alike; the next round tries them all again.
                log.warn("Could not renew the leases of {} jobs: {}", jobs.size() - from, ex.toString());
                return;
            }
        }
    }

    /** Marks lost leases and cancellation requests; drops buffered jobs that should not start. */
    void apply(List<RunningJob> jobs, FencedResult result) {
        Map<Long, RunningJob> byId = jobs.stream().collect(Collectors.toMap(RunningJob::jobId, Function.identity()));
        Set<Lease> lost = new HashSet<>(result.lost());
        for (RunningJob job : jobs) {
            // A finished job's row may simply have been finished by the completer meanwhile.
            if (lost.contains(job.lease()) && !job.leaseLost && job.finishedNanos == 0) {
                job.leaseLost = true;
                this.events.leaseLost(job.task());
            }
        }
        for (Long id : result.cancelRequested()) {
            RunningJob job = byId.get(id);
            if (job != null) {
                job.cancelRequested = true;
            }
        }
        for (WorkerPool pool : this.pools) {
            for (RunningJob dropped : pool.dropBuffered(job -> job.leaseLost || job.cancelRequested)) {
                if (!dropped.leaseLost) {
                    this.completer.finished(Outcome.cancelled(dropped.lease()), dropped.task());
                }
            }
        }
    }
}
