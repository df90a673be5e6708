package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.pgqueue.JobState;
import io.pgqueue.internal.lifecycle.BackgroundService;
import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimResult;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.worker.WorkerSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The producer of one worker pool on one shard: a fetch loop that claims due jobs for all of the
 * pool's tasks in one statement and hands them to the pool's {@link PoolSlots}, which buffer them
 * (STARTING) and start them on the pool's handler threads, where a {@link JobExecutor} runs them.
 * A sharded node runs one producer per pool and shard, all feeding the pool's one set of slots,
 * so a slow or unreachable shard holds up only its own producer.
 * <p>
 * Backpressure: the loop asks for each task exactly its free capacity — concurrency plus the
 * adaptive prefetch depth, minus the jobs running, buffered and asked for by the claims of other
 * shards in flight, and minus the finished jobs not yet written beyond one depth of them — so the
 * node never holds more than {@code concurrency + 2 × maxPrefetch} jobs per task, whatever the
 * backlog and the number of shards, and claiming runs ahead of the outcome writes by at most the
 * depth. It waits for {@link Wakeups}:
 * notifications, freed capacity, the poll interval.
 */
public final class Producer extends BackgroundService {

    private static final Logger log = LoggerFactory.getLogger(Producer.class);

    /**
     * Least time between the starts of two claims that notifications trigger. A lone job is
     * claimed the moment its notification arrives; when notifications come faster, the ones that
     * arrive within this window are served by one claim. At 2,000 jobs/s a claim per notification
     * cost more CPU than the producers could spare (0 ms: 12,600 claims of 1.6 jobs in 10 s and
     * p99 82 ms; 2 ms: 4,400 claims of 4.6 jobs, p99 25 ms); with a claim of about 0.3 ms, 1 ms
     * gives 2,000 jobs/s a p50 of about 1.3 ms against 1.9 ms with no spacing, the p99 no worse.
     */
    private static final long CLAIM_SPACING_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final String name;

    private final String owner;

    private final ShardWorkers shard;

    private final JobStore store;

    private final WorkerSettings settings;

    private final QueueEvents events;

    private final HeldJobs held;

    private final Wakeups wakeups = new Wakeups();

    private final PoolSlots slots;

    /** What this producer's claims found, per task. */
    private final ShardClaims claims;

    /** Tasks paused by an operator; refreshed by the runtime once per poll interval. */
    private volatile Set<String> paused = Set.of();

    /** When the last claim started (local clock); only the fetch thread uses it. */
    private long lastClaimStartedAt = System.nanoTime() - CLAIM_SPACING_NANOS;

    /**
     * @param name the pool's name
     * @param slots the pool's slots
     * @param settings the worker settings
     * @param shard the shard this producer claims from
     * @param held the node's held jobs
     * @param events where events go
     * @param threadSuffix appended to the fetch thread's name
     */
    Producer(String name, PoolSlots slots, WorkerSettings settings, ShardWorkers shard, HeldJobs held,
            QueueEvents events, String threadSuffix) {
        super("pgqueue-" + name + "-fetch" + threadSuffix, settings.pollInterval().plusSeconds(5));
        this.name = name;
        this.owner = settings.nodeId() + "/" + name;
        this.settings = settings;
        this.shard = shard;
        this.store = shard.store();
        this.held = held;
        this.events = events;
        this.slots = slots;
        this.claims = slots.register(this.wakeups);
    }

    /** Outcomes were written: the capacity they held is free again; claim at once if jobs wait. */
    void outcomesWritten() {
        if (this.slots.moreWaiting(this.claims)) {
            this.wakeups.request(true);
        }
    }

    /**
     * Sets the paused tasks; a resumed task is looked for at once.
     * @param paused the names of all paused tasks
     */
    void setPaused(Set<String> paused) {
        Set<String> before = this.paused;
        this.paused = paused;
        if (!before.equals(paused)) {
            wake(null);
        }
    }

    /**
     * Wakes the fetch loop: new jobs of the task may be due.
     * @param task the task name, or {@code null} for all tasks of the pool
     */
    void wake(String task) {
        this.slots.woken(this.claims, task);
        this.wakeups.request(false);
    }

    /**
     * Jobs of a task with a global concurrency finished on some node: the fetch loop looks again,
     * also when a claim is in flight (it may have counted the finished jobs as running).
     * @param task the task name
     */
    void slotFreed(String task) {
        if (this.slots.slotFreed(this.claims, task)) {
            this.wakeups.request(false);
        }
    }

    /** Stops claiming and hands buffered jobs back to READY at once. */
    @Override
    protected void stopped() {
        ShardWorkers.handBack(this.name, this.slots.drainBuffers(), "buffered", this.held);
    }

    @Override
    protected void wakeUp() {
        wake(null);
    }

    @Override
    protected void run() {
        long backoff = 0;
        int failures = 0;
        while (isRunning() && !Thread.currentThread().isInterrupted()) {
            List<ClaimLimit> limits = this.slots.demand(this.claims, this.paused, this.settings.batchSizes().claim(),
                    this.settings.pollInterval().toNanos(), this.shard.limitShare());
            boolean more = false;
            if (!limits.isEmpty()) {
                try {
                    long start = System.nanoTime();
                    this.lastClaimStartedAt = start;
                    ClaimResult claimed = this.store.claimJobs(limits, this.owner, JobState.STARTING,
                            this.settings.lease());
                    this.events.claimRan(this.name, claimed.jobs().size(), Duration.ofNanos(System.nanoTime() - start));
                    more = accept(claimed, limits, start);
                    if (failures > 0) {
                        log.info("Pool '{}' claims jobs{} again after {} failed attempts", this.name, this.shard.describe(), failures);
                    }
                    backoff = 0;
                    failures = 0;
                }
                catch (RuntimeException ex) {
                    this.slots.claimFailed(limits);
                    // Tried again at least every second: work resumes within a second of the
                    // server coming back, however long it was away.
                    backoff = retryPause(backoff);
                    if (failures++ == 0) {
                        log.warn("Pool '{}' could not claim jobs{}, trying again every {} ms until it can: {}", this.name, this.shard.describe(),
                                MAX_RETRY_PAUSE.toMillis(), ex.toString());
                    }
                    else {
                        log.debug("Pool '{}' could not claim jobs{} (attempt {}): {}", this.name, this.shard.describe(), failures,
                                ex.toString());
                    }
                    pause(Duration.ofMillis(backoff));
                    continue;
                }
            }
            if (!more) {
                // Wait for a notification (or a freed slot, or the poll), then give the
                // notifications that follow closely a moment to join the same claim.
                long pollNanos = this.settings.pollInterval().toNanos();
                long timeout = this.slots.untilRetry(this.claims, pollNanos);
                Wakeups.Wake wake = this.wakeups.await(Duration.ofNanos(timeout), this::isRunning);
                if (wake == Wakeups.Wake.TIMED_OUT && timeout == pollNanos) {
                    this.slots.lookAgain(this.claims);
                }
                long spacing = this.lastClaimStartedAt + CLAIM_SPACING_NANOS - System.nanoTime();
                if (wake != Wakeups.Wake.REFILL && spacing > 0 && isRunning()) {
                    LockSupport.parkNanos(spacing);
                }
            }
        }
    }

    /**
     * Holds the claimed jobs and gives them to the slots, unless the pool stopped meanwhile.
     * @return whether some task got all it asked for: more may be waiting, claim again at once
     */
    private boolean accept(ClaimResult claimed, List<ClaimLimit> limits, long sentNanos) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        claimed.jobs().forEach(job -> counts.merge(job.task(), 1, Integer::sum));
        counts.forEach((task, count) -> this.events.claimed(this.name, task, count));
        List<RunningJob> jobs = this.slots.hold(claimed.jobs(), sentNanos, this.settings.lease().toNanos(), this.shard);
        if (isRunning()) {
            return this.slots.buffer(this.claims, jobs, counts, limits, claimed.limited());
        }
        // The pool stopped while this claim ran: hand the jobs straight back.
        this.slots.claimFailed(limits);
        ShardWorkers.handBack(this.name, jobs, "claimed while stopping", this.held);
        return false;
    }
}
