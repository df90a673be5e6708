package io.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import io.pgqueue.store.JobStore;
import io.pgqueue.store.NewJob;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Group commit for enqueues made outside any transaction: concurrent single-job calls are
 * coalesced into one INSERT statement (one transaction, one NOTIFY per task), like Nagle's
 * algorithm — a lone call is written at once, by the calling thread itself (no hand-off to wait
 * for), and while {@code writers} writes are in flight the calls that arrive meanwhile gather into
 * the next one, written by a writer thread. At most {@code writers} transactions are in flight and
 * at most {@code maxBatch} jobs go into one. Each caller returns only after its own job is committed,
 * and gets its own error: if a group fails, its jobs are retried one by one so that only the
 * offending call fails.
 */
final class GroupCommitter extends BackgroundService implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(GroupCommitter.class);

    private final JobStore store;

    private final int maxBatch;

    private final LinkedBlockingQueue<Pending> queue = new LinkedBlockingQueue<>();

    /** One per transaction in flight, taken by callers writing their own job and by writer threads. */
    private final Semaphore inFlight;

    /** Cleared by {@link #close()}: from then on every job is written by its caller. */
    private volatile boolean open = true;

    private record Pending(NewJob job, CompletableFuture<Long> result) {
    }

    /**
     * Creates a group committer; its writer threads start with the first enqueue.
     * @param writers the most transactions in flight, and the number of writer threads
     * @param maxBatch the most jobs in one transaction
     */
    GroupCommitter(JobStore store, int writers, int maxBatch) {
        super(IntStream.rangeClosed(1, writers).mapToObj(i -> "pgqueue-group-commit-" + i).toList(),
                Duration.ofSeconds(2));
        this.store = store;
        this.maxBatch = maxBatch;
        this.inFlight = new Semaphore(writers);
    }

    /**
     * Inserts one job as part of the next group and waits until it is committed.
     * @return the job id, or {@code null} if an active job holds its dedup key
     */
    Long insert(NewJob job) {
        if (this.open && !isRunning()) {
            start();
        }
        if (!isRunning()) {
            return this.store.insert(List.of(job)).get(0);
        }
        if (this.queue.isEmpty() && this.inFlight.tryAcquire()) {
            // Nothing waits and a write may start: write it now, on this thread.
            try {
                return this.store.insert(List.of(job)).get(0);
            }
            finally {
                this.inFlight.release();
            }
        }
        CompletableFuture<Long> result = new CompletableFuture<>();
        this.queue.add(new Pending(job, result));
        try {
            return result.get();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new QueueException("Interrupted while waiting for the enqueue to commit; the job may or may not "
                    + "have been written", ex);
        }
        catch (ExecutionException ex) {
            if (ex.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new QueueException("Enqueue failed", ex.getCause());
        }
    }

    @Override
    protected void run() {
        List<Pending> group = new ArrayList<>(this.maxBatch);
        while (isRunning() || !this.queue.isEmpty()) {
            try {
                Pending first = this.queue.poll(100, TimeUnit.MILLISECONDS);
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

    private void write(List<Pending> group) {
        try {
            List<Long> ids = this.store.insert(group.stream().map(Pending::job).toList());
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
            log.debug("Group of {} enqueues failed, writing them one by one: {}", group.size(), ex.toString());
            for (Pending pending : group) {
                try {
                    pending.result().complete(this.store.insert(List.of(pending.job())).get(0));
                }
                catch (RuntimeException single) {
                    pending.result().completeExceptionally(single);
                }
            }
        }
    }

    /** Stops the writer threads once the queued jobs are written; later enqueues are written one by one. */
    @Override
    public void close() {
        this.open = false;
        stop();
    }
}
