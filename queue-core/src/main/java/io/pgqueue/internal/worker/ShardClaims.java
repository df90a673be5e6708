package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one producer's claims found, per task of its pool. A pool claims from each shard with a
 * producer of its own; one shard may have run out of a task's jobs while another has plenty, so
 * this is kept per producer, while the slots and buffers are the pool's. Guarded by the pool
 * slots' lock.
 */
public final class ShardClaims {

    /** One task, as this producer's claims found it. */
    static final class Task {

        /** The last claim found fewer due jobs than it asked for; wait for a notification or the poll. */
        boolean exhausted;

        /** When {@link #exhausted} was set (local clock). */
        long exhaustedAt;

        /** The last claim got all it asked for: more jobs are probably waiting. */
        boolean moreWaiting;

        /** Wake-ups received; compared across a claim to spot notifications the claim may have missed. */
        long wakes;

        long wakesAtClaim;

        /**
         * A limit across nodes cut the last claim short and its rate gives the next permit at this
         * time (local clock): look again then, not at notifications of new jobs. 0 when not waiting.
         */
        long retryAt;

        /**
         * A limit across nodes cut the last claim short and the task's global concurrency is taken:
         * look again when a job of the task finishes anywhere, not at notifications of new jobs.
         */
        boolean waitingForSlot;

        /** The task's groups held jobs back at the last claim: a freed slot wakes it, as new jobs do. */
        boolean wakeOnSlot;

        /** Slots freed (jobs of the task finished); compared across a claim like {@link #wakes}. */
        long slotsFreed;

        long slotsFreedAtClaim;

        /** A claim is about to ask: an exhausted task is looked at again after the poll interval. */
        void lookedAt(long now, long pollNanos) {
            if (this.exhausted && (now - this.exhaustedAt >= pollNanos || this.retryAt != 0 && now - this.retryAt >= 0)) {
                this.exhausted = false;
            }
            if (!this.exhausted) {
                this.retryAt = 0;
                this.waitingForSlot = false;
                this.wakeOnSlot = false;
            }
            this.wakesAtClaim = this.wakes;
            this.slotsFreedAtClaim = this.slotsFreed;
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

        /**
         * A limit across nodes cut the last claim short: wait for the next permit or a freed slot —
         * unless a slot was freed during the claim. With {@code orNewJobs} (groups held jobs back), a
         * freed slot wakes the task and so do new jobs, as when the claim found too few.
         * @param retryAfter when the rate gives the next permit, or {@code null} to wait for a slot
         */
        void limited(Duration retryAfter, boolean orNewJobs, long now) {
            if (retryAfter == null && this.slotsFreed != this.slotsFreedAtClaim) {
                this.exhausted = false;
                return;
            }
            if (orNewJobs) {
                // Whether more jobs wait was decided as for any claim (claimed).
                this.wakeOnSlot = true;
                return;
            }
            this.moreWaiting = false;
            this.exhausted = true;
            this.exhaustedAt = now;
            if (retryAfter == null) {
                this.waitingForSlot = true;
            }
            else {
                this.retryAt = now + Math.max(retryAfter.toNanos(), 1);
            }
        }

        /** New jobs may be due: look for them at the next claim, unless the task waits on its limit. */
        void woken() {
            if (this.retryAt == 0 && !this.waitingForSlot) {
                this.exhausted = false;
            }
            this.wakes++;
        }

        /** A job of the task finished somewhere: a task waiting for a slot looks again. */
        void slotFreed() {
            this.slotsFreed++;
            if (this.waitingForSlot || this.wakeOnSlot) {
                this.waitingForSlot = false;
                this.wakeOnSlot = false;
                this.exhausted = false;
            }
        }
    }

    /** Wakes the producer these claims belong to. */
    final Wakeups wakeups;

    private final Map<String, Task> tasks = new LinkedHashMap<>();

    ShardClaims(Collection<String> tasks, Wakeups wakeups) {
        this.wakeups = wakeups;
        tasks.forEach(task -> this.tasks.put(task, new Task()));
    }

    Task task(String name) {
        return this.tasks.get(name);
    }

    Collection<Task> all() {
        return this.tasks.values();
    }
}
