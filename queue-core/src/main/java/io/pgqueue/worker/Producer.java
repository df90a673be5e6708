package io.pgqueue.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

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
 * in one statement, a bounded buffer of claimed (STARTING) jobs per task, and the dispatch of
 * buffered jobs to the pool's handler threads, where a {@link JobExecutor} runs them.
 * <p>
 * Backpressure: the loop asks for each task exactly its free capacity — concurrency plus the
 * adaptive prefetch depth, minus the jobs running, buffered and finished but not yet written — so
 * the node never holds more than {@code concurrency + maxPrefetch} jobs per task, whatever the
 * backlog, and claiming never runs ahead of the outcome writes.
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

    private final JobExecutor jobExecutor;

    private final Executor executor;

    private final Map<String, TaskSlot> slots = new LinkedHashMap<>();

    /** Tasks paused by an operator; refreshed by the runtime once per poll interval. */
    private volatile Set<String> paused = Set.of();

    private final ReentrantLock lock = new ReentrantLock();

    private final Condition wake = this.lock.newCondition();

    private final Condition idle = this.lock.newCondition();

    private boolean wakeRequested;

    /** A wake-up for freed capacity while jobs wait (not a notification): claim without spacing. */
    private boolean refillRequested;

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
        this.jobExecutor = jobExecutor;
        this.executor = executor;
        this.events = events;
        tasks.forEach(task -> this.slots.put(task.name(), new TaskSlot(task, settings.pool(name))));
    }

    String name() {
        return this.name;
    }

    Collection<String> tasks() {
        return this.slots.keySet();
    }

    /** @return the most jobs this pool can hold at once: per task its concurrency plus maximum prefetch */
    int capacity() {
        int maxPrefetch = this.settings.pool(this.name).maxPrefetch();
        return this.slots.values().stream().mapToInt(slot -> slot.task.concurrency() + maxPrefetch).sum();
    }

    /** Outcomes were written: the capacity they held is free again; claim at once if jobs wait. */
    void outcomesWritten() {
        signal(() -> this.slots.values().stream().anyMatch(slot -> slot.moreWaiting), true);
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
        signal(() -> {
            this.slots.values().stream().filter(slot -> task == null || slot.name().equals(task)).forEach(TaskSlot::woken);
            return true;
        }, false);
    }

    PoolState state() {
        Map<String, PoolState.Task> tasks = new LinkedHashMap<>();
        this.lock.lock();
        try {
            this.slots.values().forEach(slot -> tasks.put(slot.name(), slot.state(this.paused.contains(slot.name()))));
        }
        finally {
            this.lock.unlock();
        }
        return new PoolState(this.name, tasks.values().stream().mapToInt(PoolState.Task::concurrency).sum(),
                tasks.values().stream().mapToInt(PoolState.Task::running).sum(),
                tasks.values().stream().mapToInt(PoolState.Task::buffered).sum(), tasks);
    }

    /**
     * Takes a job out of its buffer, e.g. because its lease was lost or its cancellation requested.
     * @return whether the job was buffered (it will not start)
     */
    boolean unbuffer(RunningJob job) {
        this.lock.lock();
        try {
            return this.slots.get(job.task()).buffer.remove(job);
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * Waits for running handlers to finish.
     * @return whether all finished within the timeout
     */
    boolean awaitIdle(Duration timeout) throws InterruptedException {
        long nanos = timeout.toNanos();
        this.lock.lock();
        try {
            while (this.slots.values().stream().anyMatch(slot -> slot.running > 0)) {
                if (nanos <= 0) {
                    return false;
                }
                nanos = this.idle.awaitNanos(nanos);
            }
            return true;
        }
        finally {
            this.lock.unlock();
        }
    }

    /** Stops claiming and hands buffered jobs back to READY at once. */
    @Override
    protected void stopped() {
        List<RunningJob> buffered = new ArrayList<>();
        this.lock.lock();
        try {
            this.slots.values().forEach(slot -> {
                buffered.addAll(slot.buffer);
                slot.buffer.clear();
            });
        }
        finally {
            this.lock.unlock();
        }
        handBack(buffered, "buffered");
    }

    @Override
    protected void wakeUp() {
        wake(null);
    }

    @Override
    protected void run() {
        long backoff = 0;
        while (isRunning() && !Thread.currentThread().isInterrupted()) {
            List<ClaimLimit> limits = demand();
            boolean more = false;
            if (!limits.isEmpty()) {
                try {
                    long start = System.nanoTime();
                    this.lastClaimStartedAt = start;
                    List<ClaimedJob> claimed = this.store.claim(limits, this.owner, JobState.STARTING,
                            this.settings.lease());
                    this.events.claimRan(this.name, claimed.size(), Duration.ofNanos(System.nanoTime() - start));
                    more = accept(claimed, limits);
                    backoff = 0;
                }
                catch (RuntimeException ex) {
                    backoff = Math.min(Math.max(backoff * 2, 500), 30_000);
                    log.warn("Pool '{}' could not claim jobs, retrying in {} ms: {}", this.name, backoff, ex.toString());
                    pause(Duration.ofMillis(backoff));
                    continue;
                }
            }
            if (!more) {
                // Wait for a notification (or a freed slot, or the poll), then give the
                // notifications that follow closely a moment to join the same claim.
                boolean refill = awaitWake(this.settings.pollInterval());
                long spacing = this.lastClaimStartedAt + CLAIM_SPACING_NANOS - System.nanoTime();
                if (!refill && spacing > 0 && isRunning()) {
                    LockSupport.parkNanos(spacing);
                }
            }
        }
    }

    /**
     * Free capacity per task that is worth a claim. Finished jobs whose outcomes wait to be
     * written still count against it: claiming must not run ahead of the completer, or a slow
     * outcome write (a huge table, a busy disk) would pile finished jobs up in memory without bound.
     */
    private List<ClaimLimit> demand() {
        List<ClaimLimit> limits = new ArrayList<>();
        Map<String, Integer> unwritten = new HashMap<>();
        this.lock.lock();
        try {
            // Counted under the lock that finished() marks a job and leaves its slot under: counted
            // before it, a job finishing in between would be neither running nor unwritten, and
            // the claim would run ahead by one job per handler.
            for (RunningJob job : this.held.all()) {
                if (job.producer == this && job.isFinished()) {
                    unwritten.merge(job.task(), 1, Integer::sum);
                }
            }
            long now = System.nanoTime();
            for (TaskSlot slot : this.slots.values()) {
                int free = slot.demand(unwritten.getOrDefault(slot.name(), 0), now, this.settings.pollInterval().toNanos());
                if (free > 0 && !this.paused.contains(slot.name())) {
                    limits.add(new ClaimLimit(slot.name(), Math.min(free, this.settings.batchSizes().claim())));
                }
            }
        }
        finally {
            this.lock.unlock();
        }
        return limits;
    }

    /**
     * Buffers claimed jobs and starts as many as slots allow.
     * @return whether some task got all it asked for: more may be waiting, claim again at once
     */
    private boolean accept(List<ClaimedJob> claimed, List<ClaimLimit> limits) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        List<RunningJob> jobs = new ArrayList<>(claimed.size());
        for (ClaimedJob job : claimed) {
            counts.merge(job.task(), 1, Integer::sum);
            RunningJob running = new RunningJob(job, this.slots.get(job.task()).task, this);
            this.held.hold(running);
            jobs.add(running);
        }
        counts.forEach((task, count) -> this.events.claimed(this.name, task, count));
        boolean full = false;
        this.lock.lock();
        try {
            if (isRunning()) {
                jobs.forEach(job -> this.slots.get(job.task()).buffer.add(job));
                long now = System.nanoTime();
                for (ClaimLimit limit : limits) {
                    full |= this.slots.get(limit.task()).claimed(counts.getOrDefault(limit.task(), 0), limit.limit(), now);
                }
                this.slots.values().forEach(this::dispatch);
                return full;
            }
        }
        finally {
            this.lock.unlock();
        }
        // The pool stopped while this claim ran: hand the jobs straight back.
        handBack(jobs, "claimed while stopping");
        return false;
    }

    /** Starts buffered jobs while the task has free slots. Called under the lock. */
    private void dispatch(TaskSlot slot) {
        while (slot.running < slot.task.concurrency() && !slot.buffer.isEmpty()) {
            RunningJob job = slot.buffer.poll();
            slot.running++;
            try {
                this.executor.execute(() -> finished(slot, job, this.jobExecutor.execute(job)));
            }
            catch (RuntimeException ex) {
                slot.running--;
                slot.buffer.addFirst(job);
                log.warn("Pool '{}' could not start {}: {}", this.name, job, ex.toString());
                return;
            }
        }
    }

    private void finished(TaskSlot slot, RunningJob job, long nanos) {
        // The job stays held (its lease renewed) until the completer has written its outcome: a
        // slow write must not let the lease lapse and the finished job run again.
        this.lock.lock();
        try {
            job.finish();
            slot.running--;
            slot.prefetch.record(nanos);
            dispatch(slot);
            if (slot.wantsRefill()) {
                this.wakeRequested = true;
                this.refillRequested = true;
                this.wake.signal();
            }
            this.idle.signalAll();
        }
        finally {
            this.lock.unlock();
        }
    }

    /** Signals the fetch loop if the condition, evaluated under the lock, holds. */
    private void signal(BooleanSupplier condition, boolean refill) {
        this.lock.lock();
        try {
            if (condition.getAsBoolean()) {
                this.wakeRequested = true;
                this.refillRequested |= refill;
                this.wake.signal();
            }
        }
        finally {
            this.lock.unlock();
        }
    }

    /** @return whether the wake-up asked for a refill of freed capacity */
    private boolean awaitWake(Duration timeout) {
        this.lock.lock();
        try {
            if (!this.wakeRequested && isRunning()) {
                boolean signalled = this.wake.await(timeout.toNanos(), TimeUnit.NANOSECONDS) && this.wakeRequested;
                if (!signalled) {
                    // The poll interval passed: look at every task again.
                    this.slots.values().forEach(slot -> slot.exhausted = false);
                }
            }
            this.wakeRequested = false;
            boolean refill = this.refillRequested;
            this.refillRequested = false;
            return refill;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return false;
        }
        finally {
            this.lock.unlock();
        }
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
