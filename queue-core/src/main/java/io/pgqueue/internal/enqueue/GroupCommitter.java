package io.pgqueue.internal.enqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.IntStream;

import io.pgqueue.QueueException;
import io.pgqueue.internal.lifecycle.BackgroundService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Group commit for writes made outside any transaction (enqueues, message sends and deletes):
 * concurrent single-item calls are coalesced into one statement (one transaction, one NOTIFY), like Nagle's
 * algorithm — a lone call is written at once, by the calling thread itself (no hand-off to wait
 * for), and while {@code writers} writes are in flight the calls that arrive meanwhile gather into
 * the next one, written by a writer thread. At most {@code writers} transactions are in flight and
 * at most {@code maxBatch} items go into one. Each caller returns only after its own item is committed,
 * and gets its own error: if a group fails, its items are retried one by one so that only the
 * offending call fails. The writer must write a list in one transaction, all or nothing, and return
 * one result per item, in order. An internal type of the queue.
 *
 * @param <T> what is written
 * @param <R> the result of writing one item
 */
public final class GroupCommitter<T, R> extends BackgroundService implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GroupCommitter.class);

    private final Function<List<T>, List<R>> writer;

    private final int maxBatch;

    private final LinkedBlockingQueue<Pending<T, R>> queue = new LinkedBlockingQueue<>();

    /** One per transaction in flight, taken by callers writing their own job and by writer threads. */
    private final Semaphore inFlight;

    /** Cleared by {@link #close()}: from then on every job is written by its caller. */
    private volatile boolean open = true;

    private record Pending<T, R>(T item, CompletableFuture<R> result) {
    }

    /**
     * Creates a group committer; its writer threads start with the first write.
     * @param name names the writer threads ({@code pgqueue-<name>-<n>})
     * @param writer writes a list of items in one transaction
     * @param writers the most transactions in flight, and the number of writer threads
     * @param maxBatch the most items in one transaction
     */
    public GroupCommitter(String name, Function<List<T>, List<R>> writer, int writers, int maxBatch) {
        super(IntStream.rangeClosed(1, writers).mapToObj(i -> "pgqueue-" + name + "-" + i).toList(),
                Duration.ofSeconds(2));
        this.writer = writer;
        this.maxBatch = maxBatch;
        this.inFlight = new Semaphore(writers);
    }

    /**
     * Writes one item as part of the next group and waits until it is committed.
     * @param item the item
     * @return its result
     */
    public R write(T item) {
        if (this.open && !isRunning()) {
            start();
        }
        if (!isRunning()) {
            return this.writer.apply(List.of(item)).get(0);
        }
        if (this.queue.isEmpty() && this.inFlight.tryAcquire()) {
            // Nothing waits and a write may start: write it now, on this thread.
            try {
                return this.writer.apply(List.of(item)).get(0);
            }
            finally {
                this.inFlight.release();
            }
        }
        CompletableFuture<R> result = new CompletableFuture<>();
        this.queue.add(new Pending<>(item, result));
        try {
            return result.get();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new QueueException("Interrupted while waiting for the write to commit; it may or may not "
                    + "have been made", ex);
        }
        catch (ExecutionException ex) {
            if (ex.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new QueueException("Write failed", ex.getCause());
        }
    }

    @Override
    protected void run() {
        List<Pending<T, R>> group = new ArrayList<>(this.maxBatch);
        while (isRunning() || !this.queue.isEmpty()) {
            try {
                Pending<T, R> first = this.queue.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                group.add(first);
                this.inFlight.acquireUninterruptibly();
                try {
                    // Everything that arrived while the writes in flight ran goes into this one.
                    this.queue.drainTo(group, this.maxBatch - 1);
                    write(group);
                }
                finally {
                    this.inFlight.release();
                }
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
            finally {
                group.clear();
            }
        }
    }

    private void write(List<Pending<T, R>> group) {
        try {
            List<R> ids = this.writer.apply(group.stream().map(Pending::item).toList());
            for (int i = 0; i < group.size(); i++) {
                group.get(i).result().complete(ids.get(i));
            }
        }
        catch (RuntimeException ex) {
            if (group.size() == 1) {
                group.get(0).result().completeExceptionally(ex);
                return;
            }
            // Nothing of the group was written (one statement): find the offender by writing each alone.
            log.debug("Group of {} writes failed, writing them one by one: {}", group.size(), ex.toString());
            for (Pending<T, R> pending : group) {
                try {
                    pending.result().complete(this.writer.apply(List.of(pending.item())).get(0));
                }
                catch (RuntimeException single) {
                    pending.result().completeExceptionally(single);
                }
            }
        }
    }

    /** Stops the writer threads once the queued items are written; later writes are made one by one. */
    @Override
    public void close() {
        this.open = false;
        stop();
    }
}
