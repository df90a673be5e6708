package io.pgqueue.worker;

import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.pgqueue.BackgroundService;
import io.pgqueue.JobState;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.store.ClaimLimit;
import io.pgqueue.store.ClaimedJob;
import io.pgqueue.store.JobStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The producer of one worker pool: a fetch loop that claims due jobs for all of the pool's tasks
 * in one statement and hands them to the pool's {@link PoolSlots}, which buffer them (STARTING)
 * and start them on the pool's handler threads, where a {@link JobExecutor} runs them.
 * <p>
 * Backpressure: the loop asks for each task exactly its free capacity — concurrency plus the
 * adaptive prefetch depth, minus the jobs running, buffered and finished but not yet written — so
 * the node never holds more than {@code concurrency + maxPrefetch} jobs per task, whatever the
 * backlog, and claiming never runs ahead of the outcome writes. It waits for {@link Wakeups}:
 * notifications, freed capacity, the poll interval.
 */
final class Producer extends BackgroundService {

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

    private final JobStore store;

    private final WorkerSettings settings;

    private final QueueEvents events;

    private final HeldJobs held;

    private final Wakeups wakeups = new Wakeups();

    private final PoolSlots slots;

    /** Tasks paused by an operator; refreshed by the runtime once per poll interval. */
    private volatile Set<String> paused = Set.of();

    /** When the last claim started (local clock); only the fetch thread uses it. */
    private long lastClaimStartedAt = System.nanoTime() - CLAIM_SPACING_NANOS;

    Producer(String name, Collection<WorkerTask> tasks, WorkerSettings settings, JobStore store, HeldJobs held,
            JobExecutor jobExecutor, Executor executor, QueueEvents events) {
        super("pgqueue-" + name + "-fetch", settings.pollInterval().plusSeconds(5));
        this.name = name;
        this.owner = settings.nodeId() + "/" + name;
        this.settings = settings;
        this.store = store;
        this.held = held;
        this.events = events;
        this.slots = new PoolSlots(name, tasks, settings.pool(name), held, jobExecutor, executor, this.wakeups,
                jobs -> handBack(jobs, "buffered behind hung handlers"));
    }

    String name() {
        return this.name;
    }

    Collection<String> tasks() {
        return this.slots.tasks();
    }

    /** @return the pool's task slots */
    PoolSlots slots() {
        return this.slots;
    }

    /** @return the most jobs this pool can hold at once: per task its concurrency plus maximum prefetch */
    int capacity() {
        return this.slots.capacity(this.settings.pool(this.name).maxPrefetch());
    }

    /** Outcomes were written: the capacity they held is free again; claim at once if jobs wait. */
    void outcomesWritten() {
        if (this.slots.moreWaiting()) {
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
        this.slots.woken(task);
        this.wakeups.request(false);
    }

    PoolState state() {
        return this.slots.state(this.paused);
    }

    /** Stops claiming and hands buffered jobs back to READY at once. */
    @Override
    protected void stopped() {
        handBack(this.slots.drainBuffers(), "buffered");
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
            List<ClaimLimit> limits = this.slots.demand(this.paused, this.settings.batchSizes().claim(),
                    this.settings.pollInterval().toNanos());
            boolean more = false;
            if (!limits.isEmpty()) {
                try {
                    long start = System.nanoTime();
                    this.lastClaimStartedAt = start;
                    List<ClaimedJob> claimed = this.store.claim(limits, this.owner, JobState.STARTING,
                            this.settings.lease());
                    this.events.claimRan(this.name, claimed.size(), Duration.ofNanos(System.nanoTime() - start));
                    more = accept(claimed, limits, start);
                    if (failures > 0) {
                        log.info("Pool '{}' claims jobs again after {} failed attempts", this.name, failures);
                    }
                    backoff = 0;
                    failures = 0;
                }
                catch (RuntimeException ex) {
                    // Tried again at least every second: work resumes within a second of the
                    // server coming back, however long it was away.
                    backoff = retryPause(backoff);
                    if (failures++ == 0) {
                        log.warn("Pool '{}' could not claim jobs, trying again every {} ms until it can: {}", this.name,
                                MAX_RETRY_PAUSE.toMillis(), ex.toString());
                    }
                    else {
                        log.debug("Pool '{}' could not claim jobs (attempt {}): {}", this.name, failures, ex.toString());
                    }
                    pause(Duration.ofMillis(backoff));
                    continue;
                }
            }
            if (!more) {
                // Wait for a notification (or a freed slot, or the poll), then give the
                // notifications that follow closely a moment to join the same claim.
                Wakeups.Wake wake = this.wakeups.await(this.settings.pollInterval(), this::isRunning);
                if (wake == Wakeups.Wake.TIMED_OUT) {
                    this.slots.lookAgain();
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
    private boolean accept(List<ClaimedJob> claimed, List<ClaimLimit> limits, long sentNanos) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        claimed.forEach(job -> counts.merge(job.task(), 1, Integer::sum));
        counts.forEach((task, count) -> this.events.claimed(this.name, task, count));
        List<RunningJob> jobs = this.slots.hold(claimed, sentNanos, this.settings.lease().toNanos());
        if (isRunning()) {
            return this.slots.buffer(jobs, counts, limits);
        }
        // The pool stopped while this claim ran: hand the jobs straight back.
        handBack(jobs, "claimed while stopping");
        return false;
    }

    /** Hands jobs this node will not run back to READY, keeping their attempt and place. */
    private void handBack(List<RunningJob> jobs, String which) {
        if (jobs.isEmpty()) {
            return;
        }
        jobs.forEach(this.held::forget);
        try {
            this.store.release(jobs.stream().map(RunningJob::lease).toList());
            log.info("Pool '{}' handed {} {} jobs back to the queue", this.name, jobs.size(), which);
        }
        catch (RuntimeException ex) {
            log.warn("Pool '{}' could not hand back {} {} jobs; they return when their leases expire: {}", this.name,
                    jobs.size(), which, ex.toString());
        }
    }
}
