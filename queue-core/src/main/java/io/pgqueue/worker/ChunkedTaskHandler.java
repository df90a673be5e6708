package io.pgqueue.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.pgqueue.ChunkHandler;
import io.pgqueue.ChunkItem;
import io.pgqueue.InvalidSettingException;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import io.pgqueue.TaskSnoozedException;

/**
 * Runs a {@link ChunkHandler} as a task's handler: the attempts of the task that run at the same
 * time gather into chunks. The first attempt of a chunk waits up to the linger time for others to
 * join (or until the chunk is full), then calls the chunk handler on its own thread with all of
 * them; the others wait for that call and end as their items say. Every job keeps its own attempt
 * (lease, timeout, outcome, limits), so a chunk holds at most as many jobs as the task runs at once:
 * the chunk size must not exceed the task's concurrency. A waiting attempt that is interrupted (its
 * timeout, the node's shutdown) ends so at once; the chunk handler may still be working on its item.
 *
 * @param <P> the payload type
 */
public final class ChunkedTaskHandler<P> implements TaskHandler<P> {

    private final ChunkHandler<P> handler;

    private final int size;

    private final long lingerNanos;

    private final ReentrantLock lock = new ReentrantLock();

    /** The chunk new attempts join, or {@code null} when none gathers. */
    private Chunk<P> open;

    /**
     * @param handler the chunk handler
     * @param size the most jobs per call, at least 1
     * @param linger how long the first job of a chunk waits for more, zero or more
     * @throws InvalidSettingException if the size is below 1 or the linger negative
     */
    public ChunkedTaskHandler(ChunkHandler<P> handler, int size, Duration linger) {
        this.handler = Objects.requireNonNull(handler, "handler");
        InvalidSettingException.require(size >= 1, "chunk-size", size, "must be at least 1");
        InvalidSettingException.notNegative(linger, "chunk-linger");
        this.size = size;
        this.lingerNanos = linger.toNanos();
    }

    @Override
    public void handle(P payload, TaskContext context) throws Exception {
        Item<P> item = new Item<>(payload, context);
        Chunk<P> chunk;
        boolean first;
        this.lock.lock();
        try {
            first = this.open == null;
            if (first) {
                this.open = new Chunk<>(this.lock);
            }
            chunk = this.open;
            chunk.items.add(item);
            if (chunk.items.size() == this.size) {
                this.open = null;
                chunk.full.signalAll();
            }
        }
        finally {
            this.lock.unlock();
        }
        if (first) {
            run(chunk);
        }
        else {
            chunk.ended.await();
        }
        item.end();
    }

    /**
     * Waits for the chunk to fill or the linger to pass, closes it, and calls the handler. Interrupted
     * while it waits (its attempt's timeout, the node's shutdown), it ends the chunk with the
     * interruption: the others' attempts fail with it and are tried again.
     */
    private void run(Chunk<P> chunk) {
        List<ChunkItem<P>> items;
        this.lock.lock();
        try {
            long left = this.lingerNanos;
            while (chunk.items.size() < this.size && left > 0) {
                left = chunk.full.awaitNanos(left);
            }
            items = List.copyOf(chunk.items);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            items = null;
        }
        finally {
            if (this.open == chunk) {
                this.open = null;
            }
            this.lock.unlock();
        }
        if (items == null) {
            chunk.done(new InterruptedException("The chunk's first job was interrupted while it gathered the chunk"));
            return;
        }
        Throwable failure = null;
        try {
            this.handler.handle(items);
        }
        catch (Throwable ex) {
            failure = ex;
        }
        chunk.done(failure);
    }

    /** The attempts gathered for one call, and how the call ended. */
    private static final class Chunk<P> {

        /** Guarded by the handler's lock until the chunk closes; read only after. */
        final List<Item<P>> items = new ArrayList<>();

        /** Signalled when the chunk is full. */
        final Condition full;

        final CountDownLatch ended = new CountDownLatch(1);

        Chunk(ReentrantLock lock) {
            this.full = lock.newCondition();
        }

        /** Settles the items the call left, then lets their attempts end. */
        void done(Throwable failure) {
            for (Item<P> item : this.items) {
                item.callEnded(failure);
            }
            this.ended.countDown();
        }
    }

    /** One attempt in a chunk: its outcome as the handler set it, or as the call ended. */
    private static final class Item<P> implements ChunkItem<P> {

        private final P payload;

        private final TaskContext context;

        /** {@code null}: not settled; {@link #COMPLETED}: completed; else the failure to end with. */
        private Throwable outcome;

        private static final Throwable COMPLETED = new Throwable("completed", null, false, false) {
            private static final long serialVersionUID = 1L;
        };

        Item(P payload, TaskContext context) {
            this.payload = payload;
            this.context = context;
        }

        @Override
        public P payload() {
            return this.payload;
        }

        @Override
        public TaskContext context() {
            return this.context;
        }

        @Override
        public synchronized void complete() {
            settle(COMPLETED);
        }

        @Override
        public synchronized void fail(Throwable failure) {
            settle(Objects.requireNonNull(failure, "failure"));
        }

        @Override
        public synchronized void snooze(Duration delay) {
            settle(new TaskSnoozedException(delay));
        }

        private void settle(Throwable how) {
            if (this.outcome == null) {
                this.outcome = how;
            }
        }

        /** The call returned (failure {@code null}) or threw: an item it did not settle ends so. */
        synchronized void callEnded(Throwable failure) {
            settle(failure == null ? COMPLETED : failure);
        }

        /** Ends this attempt as its item says. */
        synchronized void end() throws Exception {
            Throwable how = this.outcome;
            if (how == COMPLETED || how == null) {
                return;
            }
            if (how instanceof Exception exception) {
                throw exception;
            }
            if (how instanceof Error error) {
                throw error;
            }
            throw new IllegalStateException(how);
        }
    }
}
