package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * What wakes a producer's fetch loop: a notification, freed capacity while jobs wait (a refill,
 * claimed without spacing), a resumed task, the stop. A request made while the loop is busy is
 * kept, so none is lost. Its lock is taken inside the producer's, never the other way round.
 */
public final class Wakeups {

    /** How a wait ended. */
    enum Wake {
        /** A request that is not a refill (a notification, a resumed task). */
        REQUESTED,
        /** Freed capacity while jobs wait: claim at once. */
        REFILL,
        /** The poll interval passed without a request. */
        TIMED_OUT
    }

    private final ReentrantLock lock = new ReentrantLock();

    private final Condition wake = this.lock.newCondition();

    private boolean requested;

    private boolean refill;

    /**
     * Wakes the loop, or makes its next wait return at once.
     * @param refill whether the request is for freed capacity
     */
    void request(boolean refill) {
        this.lock.lock();
        try {
            this.requested = true;
            this.refill |= refill;
            this.wake.signal();
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * Waits for a request, at most the timeout, and takes it.
     * @param timeout the poll interval
     * @param running whether the loop should still wait
     * @return how the wait ended
     */
    Wake await(Duration timeout, BooleanSupplier running) {
        this.lock.lock();
        try {
            boolean timedOut = false;
            if (!this.requested && running.getAsBoolean()) {
                timedOut = !this.wake.await(timeout.toNanos(), TimeUnit.NANOSECONDS) || !this.requested;
            }
            boolean wasRefill = this.refill;
            this.requested = false;
            this.refill = false;
            return wasRefill ? Wake.REFILL : timedOut ? Wake.TIMED_OUT : Wake.REQUESTED;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return Wake.REQUESTED;
        }
        finally {
            this.lock.unlock();
        }
    }
}
