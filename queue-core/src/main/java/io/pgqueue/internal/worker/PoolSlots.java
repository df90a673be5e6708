package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

import io.pgqueue.TaskDefinition;
import io.pgqueue.internal.shard.LimitShare;
import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimResult;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.worker.PoolSettings;
import io.pgqueue.worker.PoolState;
import io.pgqueue.worker.WorkerTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The task slots of one pool on this node: per task the buffer of claimed (STARTING) jobs and the
 * handler slots they start in, all under one lock. Its producer asks it what to claim and hands it
 * what was claimed; finished handlers free their slot here and ask the producer for a refill.
 * <p>
 * Buffers, slots, demand, hung handlers and the adaptive prefetch are one class because they share
 * the one lock: what may be claimed depends on what is buffered and running at that instant.
 */
public final class PoolSlots {

    private static final Logger log = LoggerFactory.getLogger(PoolSlots.class);

    private final String pool;

    private final Map<String, TaskSlot> slots = new LinkedHashMap<>();

    private final HeldJobs held;

    private final JobExecutor jobExecutor;

    private final Executor executor;

    /** The claims of the pool's producers, one per shard. */
    private final List<ShardClaims> claimers = new CopyOnWriteArrayList<>();

    /** Hands jobs this node will not run back to the queue. */
    private final Consumer<List<RunningJob>> handBack;

    private final ReentrantLock lock = new ReentrantLock();

    private final Condition idle = this.lock.newCondition();

    PoolSlots(String pool, Collection<WorkerTask> tasks, PoolSettings settings, HeldJobs held, JobExecutor jobExecutor,
            Executor executor, Consumer<List<RunningJob>> handBack) {
        this.pool = pool;
        this.handBack = handBack;
        this.held = held;
        this.jobExecutor = jobExecutor;
        this.executor = executor;
        tasks.forEach(task -> this.slots.put(task.name(), new TaskSlot(task, settings)));
    }

    Collection<String> tasks() {
        return this.slots.keySet();
    }

    /** @return the definitions of the pool's tasks */
    List<TaskDefinition> definitions() {
        return this.slots.values().stream().map(slot -> slot.task.definition()).toList();
    }

    /**
     * Adds a producer, which claims for the pool from one shard.
     * @param wakeups wakes the producer
     * @return the producer's claims, to pass to the methods that claim
     */
    ShardClaims register(Wakeups wakeups) {
        ShardClaims claims = new ShardClaims(this.slots.keySet(), wakeups);
        this.claimers.add(claims);
        return claims;
    }

    /** @return the most jobs the pool holds at once: per task its concurrency plus the maximum prefetch */
    int capacity(int maxPrefetch) {
        return this.slots.values().stream().mapToInt(slot -> slot.task.concurrency() + maxPrefetch).sum();
    }

    /**
     * Free capacity per task that is worth a claim. Finished jobs whose outcomes wait to be
     * written count against it beyond one buffer's depth of them: claiming may run ahead of the
     * completer by that much and no more, or a slow outcome write (a huge table, a busy disk) would
     * pile finished jobs up in memory without bound.
     * What is returned is reserved for the claim until {@link #buffer} or {@link #claimFailed}.
     * @param claims the claiming producer's claims
     * @param paused tasks not to claim
     * @param maxClaim the most jobs of one task one claim takes
     * @param pollNanos after how long an exhausted task is looked at again
     * @param share the share of the tasks' global limits the claiming shard enforces
     */
    List<ClaimLimit> demand(ShardClaims claims, Set<String> paused, int maxClaim, long pollNanos, LimitShare share) {
        List<ClaimLimit> limits = new ArrayList<>();
        Map<String, Integer> unwritten = new HashMap<>();
        this.lock.lock();
        try {
            // Counted under the lock that finished() marks a job and leaves its slot under: counted
            // before it, a job finishing in between would be neither running nor unwritten, and
            // the claim would run ahead by one job per handler.
            for (RunningJob job : this.held.all()) {
                if (job.slots == this && job.isFinished()) {
                    unwritten.merge(job.task(), 1, Integer::sum);
                }
            }
            long now = System.nanoTime();
            for (TaskSlot slot : this.slots.values()) {
                int free = slot.demand(claims.task(slot.name()), unwritten.getOrDefault(slot.name(), 0), now, pollNanos);
                if (free > 0 && !paused.contains(slot.name())) {
                    int limit = Math.min(free, maxClaim);
                    slot.claiming += limit;
                    TaskDefinition definition = slot.task.definition();
                    limits.add(new ClaimLimit(slot.name(), limit, share.concurrency(definition.globalConcurrency()),
                            share.rate(definition.rateLimit()), definition.groups()));
                }
            }
        }
        finally {
            this.lock.unlock();
        }
        return limits;
    }

    /**
     * @param shard the shard the jobs were claimed from
     * @return the claimed jobs, held by this node
     */
    List<RunningJob> hold(List<ClaimedJob> claimed, long sentNanos, long leaseNanos, ShardWorkers shard) {
        List<RunningJob> jobs = new ArrayList<>(claimed.size());
        for (ClaimedJob job : claimed) {
            RunningJob running = new RunningJob(job, this.slots.get(job.task()).task, this, shard);
            running.leaseConfirmed(sentNanos, leaseNanos);
            this.held.hold(running);
            jobs.add(running);
        }
        return jobs;
    }

    /**
     * Buffers claimed jobs and starts as many as slots allow; the claim's reservation ends.
     * @param claims the claiming producer's claims
     * @param counts the jobs claimed per task
     * @param limits what the claim asked for ({@link #demand})
     * @param limited the tasks whose limits across nodes cut the claim short
     * @return whether some task got all it asked for: more may be waiting, claim again at once
     */
    boolean buffer(ShardClaims claims, List<RunningJob> jobs, Map<String, Integer> counts, List<ClaimLimit> limits,
            List<ClaimResult.LimitWait> limited) {
        boolean full = false;
        this.lock.lock();
        try {
            for (RunningJob job : jobs) {
                TaskSlot slot = this.slots.get(job.task());
                slot.buffer.add(job);
                slot.prefetch.recordSize(job.size());
            }
            long now = System.nanoTime();
            for (ClaimLimit limit : limits) {
                this.slots.get(limit.task()).claiming -= limit.limit();
                full |= claims.task(limit.task()).claimed(counts.getOrDefault(limit.task(), 0), limit.limit(), now);
            }
            limited.forEach(wait -> claims.task(wait.task()).limited(wait.retryAfter(), wait.orNewJobs(), now));
            this.slots.values().forEach(this::dispatch);
            return full;
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * A claim failed or its jobs were not kept (the pool stopped meanwhile): its reservation ends.
     * @param limits what the claim asked for ({@link #demand})
     */
    void claimFailed(List<ClaimLimit> limits) {
        this.lock.lock();
        try {
            limits.forEach(limit -> this.slots.get(limit.task()).claiming -= limit.limit());
        }
        finally {
            this.lock.unlock();
        }
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

    /** @return every buffered job, taken out of the buffers */
    List<RunningJob> drainBuffers() {
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
        return buffered;
    }

    /**
     * Declares hung the handlers that still run this long after their timeout's interrupt (see
     * {@link #hung}). Looks at the handlers themselves, not at the held jobs: a hung handler's job
     * may already be rescued and held again by this node, as a new attempt.
     * @param nowNanos the local clock
     * @param graceNanos how long after the interrupt
     */
    void findHung(long nowNanos, long graceNanos) {
        List<RunningJob> found = new ArrayList<>();
        this.lock.lock();
        try {
            for (TaskSlot slot : this.slots.values()) {
                slot.handlers.stream().filter(job -> !job.hung && job.ignoredTimeoutFor(nowNanos, graceNanos))
                    .forEach(found::add);
            }
        }
        finally {
            this.lock.unlock();
        }
        found.forEach(this::hung);
    }

    /**
     * A handler ignored its timeout's interrupt and still runs. It gives up its slot, and another job
     * of its task starts in its place, unless the task already has as many hung handlers outside its
     * slots as its concurrency: then it keeps its slot until it returns (or until a hung handler
     * outside the slots returns). When every slot of the task is held so, the task claims nothing
     * more here and its buffered jobs go back to the queue, for nodes that can run them.
     * @param job the job whose handler still runs
     */
    void hung(RunningJob job) {
        List<RunningJob> waiting = List.of();
        TaskSlot slot = this.slots.get(job.task());
        boolean freed;
        int outside;
        int inSlots;
        this.lock.lock();
        try {
            if (job.hung || job.isFinished()) {
                return;
            }
            freed = slot.hung(job);
            outside = slot.hungOutside;
            inSlots = slot.hungInSlots.size();
            if (freed) {
                dispatch(slot);
                requestRefill(slot);
            }
            else if (inSlots >= slot.task.concurrency() && !slot.buffer.isEmpty()) {
                waiting = new ArrayList<>(slot.buffer);
                slot.buffer.clear();
            }
        }
        finally {
            this.lock.unlock();
        }
        int concurrency = slot.task.concurrency();
        if (freed) {
            log.warn("The handler of {} ignored its timeout's interrupt and still runs; it gives up its slot in pool "
                    + "'{}' to another job ({} of at most {} hung handlers of '{}' run outside its slots, {} of {} "
                    + "slots held by hung handlers)", job, this.pool, outside, concurrency, job.task(), inSlots,
                    concurrency);
        }
        else {
            log.warn("The handler of {} ignored its timeout's interrupt and still runs; it keeps its slot in pool '{}' "
                    + "until it returns, as '{}' already has {} hung handlers outside its slots, the most it allows "
                    + "({} of {} slots held by hung handlers){}", job, this.pool, job.task(), outside, inSlots,
                    concurrency, waiting.isEmpty() ? "" : "; " + waiting.size() + " buffered jobs go back to the queue");
        }
        if (!waiting.isEmpty()) {
            this.handBack.accept(waiting);
        }
    }

    /**
     * @param claims a producer's claims
     * @return whether its last claim of some task got all it asked for
     */
    boolean moreWaiting(ShardClaims claims) {
        this.lock.lock();
        try {
            return claims.all().stream().anyMatch(task -> task.moreWaiting);
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * New jobs may be due on a producer's shard.
     * @param claims the producer's claims
     * @param task the task, or {@code null} for every task
     */
    void woken(ShardClaims claims, String task) {
        this.lock.lock();
        try {
            this.slots.keySet().stream().filter(name -> task == null || name.equals(task))
                .forEach(name -> claims.task(name).woken());
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * Jobs of a task finished somewhere: a producer whose task waits for a slot of its global
     * concurrency looks again.
     * @param claims the producer's claims
     * @param task the task
     * @return whether the producer should look again: the task waited for a slot, or a claim of it is in flight
     */
    boolean slotFreed(ShardClaims claims, String task) {
        this.lock.lock();
        try {
            ShardClaims.Task claim = claims.task(task);
            if (claim == null) {
                return false;
            }
            boolean waited = claim.waitingForSlot || claim.wakeOnSlot || this.slots.get(task).claiming > 0;
            claim.slotFreed();
            return waited;
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * @param claims a producer's claims
     * @param pollNanos the poll interval
     * @return how long the producer may wait before a task's rate limit gives the next permit, at most the poll interval
     */
    long untilRetry(ShardClaims claims, long pollNanos) {
        this.lock.lock();
        try {
            long now = System.nanoTime();
            long wait = pollNanos;
            for (ShardClaims.Task task : claims.all()) {
                if (task.exhausted && task.retryAt != 0) {
                    wait = Math.min(wait, Math.max(task.retryAt - now, 0));
                }
            }
            return wait;
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * The poll interval passed: a producer looks at every task again.
     * @param claims the producer's claims
     */
    void lookAgain(ShardClaims claims) {
        this.lock.lock();
        try {
            claims.all().forEach(task -> task.exhausted = false);
        }
        finally {
            this.lock.unlock();
        }
    }

    /** Wakes, for an early refill, the producers whose last claim of the task left jobs behind. Under the lock. */
    private void requestRefill(TaskSlot slot) {
        for (ShardClaims claims : this.claimers) {
            if (slot.wantsRefill(claims.task(slot.name()))) {
                claims.wakeups.request(true);
            }
        }
    }

    /**
     * Waits for running handlers to finish, hung ones aside.
     * @return whether all finished within the timeout
     */
    boolean awaitIdle(Duration timeout) throws InterruptedException {
        long nanos = timeout.toNanos();
        this.lock.lock();
        try {
            // Hung handlers ignored their timeout's interrupt and their leases are no longer
            // renewed: waiting for them would only hold up the shutdown.
            while (this.slots.values().stream().anyMatch(slot -> slot.working() > 0)) {
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

    PoolState state(Set<String> paused) {
        Map<String, PoolState.Task> tasks = new LinkedHashMap<>();
        this.lock.lock();
        try {
            this.slots.values().forEach(slot -> tasks.put(slot.name(), slot.state(paused.contains(slot.name()))));
        }
        finally {
            this.lock.unlock();
        }
        return new PoolState(this.pool, tasks.values().stream().mapToInt(PoolState.Task::concurrency).sum(),
                tasks.values().stream().mapToInt(PoolState.Task::running).sum(),
                tasks.values().stream().mapToInt(PoolState.Task::hung).sum(),
                tasks.values().stream().mapToInt(PoolState.Task::buffered).sum(), tasks);
    }

    /** Starts buffered jobs while the task has free slots. Called under the lock. */
    private void dispatch(TaskSlot slot) {
        while (slot.running < slot.task.concurrency() && !slot.buffer.isEmpty()) {
            RunningJob job = slot.buffer.poll();
            if (!job.leaseKnownAt(System.nanoTime())) {
                // No renewal got through for a lease: the job may be rescued and run elsewhere
                // already. It is not started here; it returns to the queue when its lease expires.
                this.held.forget(job);
                log.warn("Pool '{}' did not start {}: its lease was not renewed for a whole lease, so it may run "
                        + "elsewhere; the job returns to the queue when its lease expires", this.pool, job);
                continue;
            }
            slot.start(job);
            try {
                this.executor.execute(() -> finished(slot, job, this.jobExecutor.execute(job)));
            }
            catch (RuntimeException ex) {
                slot.returned(job);
                slot.buffer.addFirst(job);
                log.warn("Pool '{}' could not start {}: {}", this.pool, job, ex.toString());
                return;
            }
        }
    }

    private void finished(TaskSlot slot, RunningJob job, long nanos) {
        // The job stays held (its lease renewed) until the completer has written its outcome: a
        // slow write must not let the lease lapse and the finished job run again.
        RunningJob leftSlot;
        boolean hung;
        this.lock.lock();
        try {
            job.finish();
            hung = job.hung;
            leftSlot = slot.returned(job);
            slot.prefetch.record(nanos);
            dispatch(slot);
            // Refill early if the buffer runs low and the last claim left jobs behind.
            requestRefill(slot);
            this.idle.signalAll();
        }
        finally {
            this.lock.unlock();
        }
        if (hung) {
            log.info("The hung handler of {} returned in pool '{}'{}", job, this.pool, leftSlot == null ? ""
                    : "; the hung handler of " + leftSlot + " gives up its slot to another job");
        }
    }
}
