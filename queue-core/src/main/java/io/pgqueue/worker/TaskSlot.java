package io.pgqueue.worker;

import java.util.ArrayDeque;

/**
 * One task's share of a producer: its handler slots, its buffer of claimed jobs and what the last
 * claim found. Not thread-safe: guarded by its producer's lock.
 */
final class TaskSlot {

    final WorkerTask task;

    final AdaptivePrefetch prefetch;

    final ArrayDeque<RunningJob> buffer = new ArrayDeque<>();

    /** Handlers running. */
    int running;

    /** Running handlers that ignored their timeout's interrupt (counted in {@link #running}). */
    int hung;

    /** The last claim found fewer due jobs than it asked for; wait for a notification or the poll. */
    boolean exhausted;

    /** When {@link #exhausted} was set (local clock). */
    long exhaustedAt;

    /** The last claim got all it asked for: more jobs are probably waiting. */
    boolean moreWaiting;

    /** Wake-ups received; compared across a claim to spot notifications the claim may have missed. */
    long wakes;

    long wakesAtClaim;

    TaskSlot(WorkerTask task, PoolSettings settings) {
        this.task = task;
        this.prefetch = new AdaptivePrefetch(task.concurrency(), settings);
    }

    String name() {
        return this.task.name();
    }

    /**
     * Returns how many jobs a claim may ask for now and remembers the wake-ups seen, so that
     * {@link #claimed} can tell whether a notification arrived during the claim.
     * @param unwritten finished jobs of the task whose outcomes are not written yet
     * @param now the local clock
     * @param pollNanos the poll interval: however busy the other tasks keep the producer, an
     * exhausted task is looked at again after it (scheduled, retried and rescued jobs come without
     * a notification)
     */
    int demand(int unwritten, long now, long pollNanos) {
        if (this.exhausted && now - this.exhaustedAt >= pollNanos) {
            this.exhausted = false;
        }
        this.wakesAtClaim = this.wakes;
        if (this.hung >= this.task.concurrency()) {
            // Every handler slot is held by a handler that ignored its timeout: claimed jobs would
            // only wait behind them, while other nodes could run them.
            return 0;
        }
        int free = this.task.concurrency() + this.prefetch.depth() - this.running - this.buffer.size() - unwritten;
        return this.exhausted ? 0 : Math.max(free, 0);
    }

    /**
     * Takes note of what a claim returned.
     * @return whether the claim got all it asked for, so more jobs are probably waiting
     */
    boolean claimed(int got, int asked, long now) {
        // Found fewer than asked: wait for a notification or the poll — unless one arrived during
        // the claim, announcing a job the claim may have missed.
        if (got < asked && this.wakes == this.wakesAtClaim) {
            this.exhausted = true;
            this.exhaustedAt = now;
        }
        this.moreWaiting = got >= asked;
        return this.moreWaiting;
    }

    /** New jobs may be due: look for them at the next claim. */
    void woken() {
        this.exhausted = false;
        this.wakes++;
    }

    /** @return whether the buffer runs low while the last claim left jobs behind: refill early */
    boolean wantsRefill() {
        return this.moreWaiting && this.buffer.size() <= this.prefetch.depth() / 2;
    }

    PoolState.Task state(boolean paused) {
        return new PoolState.Task(this.task.concurrency(), this.running, this.buffer.size(), this.prefetch.depth(),
                this.prefetch.averageExecutionTime(), paused);
    }
}
