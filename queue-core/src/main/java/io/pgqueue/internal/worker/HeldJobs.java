package io.pgqueue.internal.worker;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.pgqueue.internal.store.FencedResult;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.observe.QueueEvents;

/**
 * The jobs this node holds, buffered, running or finished with their outcome not yet written, by
 * job id; and the one rule for what a fenced write's result means for them ({@link #apply}).
 */
public final class HeldJobs {

    private final Map<Long, RunningJob> jobs = new ConcurrentHashMap<>();

    private final QueueEvents events;

    HeldJobs(QueueEvents events) {
        this.events = events;
    }

    /**
     * Holds a claimed job. An earlier attempt of the same job may still run here (its lease
     * expired, e.g. a timed-out handler that ignored its interrupt): it no longer holds the job.
     */
    void hold(RunningJob job) {
        RunningJob previous = this.jobs.put(job.jobId(), job);
        if (previous != null) {
            previous.loseLease();
        }
    }

    /** Forgets a job that was handed back or dropped. */
    void forget(RunningJob job) {
        this.jobs.remove(job.jobId(), job);
    }

    /**
     * @param jobId a job id
     * @return the held job of that id, or {@code null}
     */
    RunningJob get(long jobId) {
        return this.jobs.get(jobId);
    }

    /** @return every held job */
    Collection<RunningJob> all() {
        return this.jobs.values();
    }

    /**
     * Applies the result of a fenced write (starts, heartbeats) to the held jobs it names: a lost
     * lease takes the job from this node (counted once per attempt), a cancellation request is
     * passed to the handler, and a buffered job that must no longer start leaves its buffer —
     * with a CANCELLED outcome if it was cancelled rather than lost.
     * @param result the write's result
     * @param completer receives the outcomes of buffered jobs that were cancelled
     */
    void apply(FencedResult result, Completer completer) {
        for (Lease lease : result.lost()) {
            RunningJob job = this.jobs.get(lease.jobId());
            if (job != null && job.lease().equals(lease) && job.loseLease()) {
                this.events.leaseLost(job.task());
                drop(job, completer);
            }
        }
        for (Long id : result.cancelRequested()) {
            RunningJob job = this.jobs.get(id);
            if (job != null) {
                job.requestCancel();
                drop(job, completer);
            }
        }
    }

    /**
     * The outcomes of these jobs were written (or found their leases lost): they are no longer
     * held. A lost lease that no earlier write reported is counted here.
     * @param leases the leases the outcomes were written with
     * @param lost the leases the write found lost
     */
    void written(List<Lease> leases, Collection<Lease> lost) {
        for (Lease lease : lost) {
            RunningJob job = this.jobs.get(lease.jobId());
            if (job != null && job.lease().equals(lease) && !job.isLeaseLost()) {
                this.events.leaseLost(job.task());
            }
        }
        for (Lease lease : leases) {
            this.jobs.computeIfPresent(lease.jobId(), (id, job) -> job.lease().equals(lease) ? null : job);
        }
    }

    private void drop(RunningJob job, Completer completer) {
        if (job.slots.unbuffer(job)) {
            forget(job);
            if (!job.isLeaseLost()) {
                completer.finished(Outcome.cancelled(job.lease()));
            }
        }
    }
}
