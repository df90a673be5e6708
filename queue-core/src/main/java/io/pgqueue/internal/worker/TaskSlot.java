package io.pgqueue.internal.worker;

import java.util.ArrayDeque;
import java.util.LinkedHashSet;
import java.util.Set;

import io.pgqueue.worker.PoolSettings;
import io.pgqueue.worker.PoolState;
import io.pgqueue.worker.WorkerTask;

/**
 * One task's share of a producer: its handler slots, its buffer of claimed jobs and what the last
 * claim found. Not thread-safe: guarded by its producer's lock.
 * <p>
 * A handler that ignored its timeout's interrupt for a lease is <em>hung</em>. It gives up its slot,
 * so another job of the task starts in its place, while fewer than {@code concurrency} hung handlers
 * run outside the slots; past that bound it keeps its slot until it returns or, when a hung handler
 * outside the slots returns, gives it up then. So the task never runs more than twice its
 * concurrency of threads.
 */
public final class TaskSlot {

    final WorkerTask task;

    final AdaptivePrefetch prefetch;

    final ArrayDeque<RunningJob> buffer = new ArrayDeque<>();

    /** Handlers started and not returned, hung ones included: where the lease keeper looks for hung ones. */
    final Set<RunningJob> handlers = new LinkedHashSet<>();

    /** Handlers holding a slot, hung ones that kept theirs included. */
    int running;

    /** Hung handlers that kept their slot (counted in {@link #running}), oldest first. */
    final ArrayDeque<RunningJob> hungInSlots = new ArrayDeque<>();

    /** Hung handlers that gave up their slot (not counted in {@link #running}); at most the concurrency. */
    int hungOutside;

    /** Jobs asked for by claims in flight (one per shard at most), not yet buffered. */
    int claiming;

    TaskSlot(WorkerTask task, PoolSettings settings) {
        this.task = task;
        this.prefetch = new AdaptivePrefetch(task.concurrency(), settings);
    }

    String name() {
        return this.task.name();
    }

    /**
     * Returns how many jobs a claim of one shard may ask for now, and remembers the wake-ups seen,
     * so that {@link ShardClaims.Task#claimed} can tell whether a notification arrived during the
     * claim. Claims of other shards in flight count against the free capacity, so the shards of a
     * pool together never claim more than it can hold.
     * @param claims what this shard's claims found for the task
     * @param unwritten finished jobs of the task whose outcomes are not written yet; up to the
     * buffer's depth of them do not count against the free capacity
     * @param now the local clock
     * @param pollNanos the poll interval: however busy the other tasks keep the producer, an
     * exhausted task is looked at again after it (scheduled, retried and rescued jobs come without
     * a notification)
     */
    int demand(ShardClaims.Task claims, int unwritten, long now, long pollNanos) {
        claims.lookedAt(now, pollNanos);
        if (this.hungInSlots.size() >= this.task.concurrency()) {
            // Every handler slot is held by a handler that ignored its timeout: claimed jobs would
            // only wait behind them, while other nodes could run them.
            return 0;
        }
        // A task with limits across nodes prefetches nothing: a claimed job holds a slot of its global
        // concurrency and has spent a permit of its rate, so it is claimed only when it can start.
        int prefetch = this.task.definition().hasGlobalLimits() ? 0 : this.prefetch.depth();
        // Outcomes waiting for the writer hold claims back only beyond one buffer's depth of them:
        // the writer takes them in batches, and a batch in flight counted in full would shrink the
        // claims behind every write. Bounded all the same: a writer that cannot write stops the claims.
        int waiting = Math.max(unwritten - prefetch, 0);
        int free = this.task.concurrency() + prefetch - this.running - this.buffer.size() - waiting - this.claiming;
        return claims.exhausted ? 0 : Math.max(free, 0);
    }

    /** A buffered job starts in a free slot. */
    void start(RunningJob job) {
        this.running++;
        this.handlers.add(job);
    }

    /**
     * A handler is hung: it gives up its slot if the bound on hung handlers outside the slots
     * allows, else it keeps it.
     * @return whether it gave up its slot
     */
    boolean hung(RunningJob job) {
        job.hung = true;
        if (this.hungOutside < this.task.concurrency()) {
            leaveSlot(job);
            return true;
        }
        this.hungInSlots.add(job);
        return false;
    }

    /**
     * A handler returned (or could not start): its slot, or its place among the hung handlers
     * outside the slots, is free. In the latter case the oldest hung handler that kept its slot
     * gives it up now.
     * @return the hung handler that gave up its slot, or {@code null}
     */
    RunningJob returned(RunningJob job) {
        this.handlers.remove(job);
        if (!job.outsideSlot) {
            this.running--;
            this.hungInSlots.remove(job);
            return null;
        }
        this.hungOutside--;
        RunningJob kept = this.hungInSlots.poll();
        if (kept != null) {
            leaveSlot(kept);
        }
        return kept;
    }

    /** @return handlers still running past their timeout, in a slot or outside */
    int hung() {
        return this.hungInSlots.size() + this.hungOutside;
    }

    /** @return handlers holding a slot that are not hung: those a graceful shutdown waits for */
    int working() {
        return this.running - this.hungInSlots.size();
    }

    private void leaveSlot(RunningJob job) {
        job.outsideSlot = true;
        this.hungOutside++;
        this.running--;
    }

    /**
     * @param claims what a shard's claims found for the task
     * @return whether the buffer runs low while that shard's last claim left jobs behind: refill early
     */
    boolean wantsRefill(ShardClaims.Task claims) {
        return claims.moreWaiting && this.buffer.size() <= this.prefetch.depth() / 2;
    }

    PoolState.Task state(boolean paused) {
        return new PoolState.Task(this.task.concurrency(), this.running, hung(), this.buffer.size(),
                this.prefetch.depth(), this.prefetch.averageExecutionTime(), paused);
    }
}
