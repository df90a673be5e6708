package io.pgqueue.internal.result;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

import javax.sql.DataSource;

import io.pgqueue.JobSnapshot;
import io.pgqueue.internal.lifecycle.PeriodicTasks;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.worker.NotificationListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Completes the futures of callers awaiting jobs' ends. A caller's await marks the job (its end
 * then notifies {@link JobStore#endedChannel()} at the ending transaction's commit, whichever node
 * ends it) and reads it once, in case it ended before; a notification, a reconnect of the listener
 * and a poll every poll interval (the fallback when a notification is lost) read the awaited jobs
 * that finished, in one statement per database. Listening and polling start with the first await
 * and stop with the queue. An internal type of the queue.
 */
public final class JobAwaiter {

    private static final Logger log = LoggerFactory.getLogger(JobAwaiter.class);

    private static final String CHECK = "check awaited jobs";

    private final DataSource dataSource;

    private final JobStore main;

    private final Function<Long, List<JobStore>> storesOf;

    private final Supplier<List<JobStore>> allStores;

    private final Duration pollInterval;

    /** Per awaited job, the futures of its callers. */
    private final Map<Long, Set<CompletableFuture<JobSnapshot>>> waiting = new ConcurrentHashMap<>();

    private NotificationListener listener;

    private PeriodicTasks poller;

    private boolean stopped;

    /**
     * @param dataSource the main database, whose notifications it listens to
     * @param main the main database's job store
     * @param storesOf the stores that may hold a job, the likeliest first
     * @param allStores every store (one per shard)
     * @param pollInterval how often it reads the awaited jobs without a notification
     */
    public JobAwaiter(DataSource dataSource, JobStore main, Function<Long, List<JobStore>> storesOf,
            Supplier<List<JobStore>> allStores, Duration pollInterval) {
        this.dataSource = dataSource;
        this.main = main;
        this.storesOf = storesOf;
        this.allStores = allStores;
        this.pollInterval = pollInterval;
    }

    /**
     * Returns a future that completes with the job once it has finished.
     * @param jobId the job
     * @return the future; it completes exceptionally with {@link IllegalArgumentException} when no
     * job has the id (or retention removed it), and with {@link IllegalStateException} when the queue
     * stops first
     */
    public CompletableFuture<JobSnapshot> whenFinished(long jobId) {
        CompletableFuture<JobSnapshot> future = new CompletableFuture<>();
        if (!startIfStopped()) {
            future.completeExceptionally(stoppedBefore(jobId));
            return future;
        }
        this.waiting.compute(jobId, (id, futures) -> {
            Set<CompletableFuture<JobSnapshot>> added = futures != null ? futures : ConcurrentHashMap.newKeySet();
            added.add(future);
            return added;
        });
        boolean present = false;
        try {
            for (JobStore store : this.storesOf.apply(jobId)) {
                present |= store.await(jobId);
            }
            // Read after the mark: a job that ended before it is found here, one that ends after it notifies.
            check(List.of(jobId));
        }
        catch (RuntimeException ex) {
            forget(jobId, future);
            throw ex;
        }
        if (!present && !future.isDone()) {
            forget(jobId, future);
            future.completeExceptionally(new IllegalArgumentException("No job has id " + jobId
                    + " (or retention removed it)"));
        }
        return future;
    }

    /**
     * Stops waiting for one caller (its wait timed out).
     * @param jobId the job
     * @param future the caller's future
     */
    public void forget(long jobId, CompletableFuture<JobSnapshot> future) {
        this.waiting.computeIfPresent(jobId, (id, futures) -> {
            futures.remove(future);
            return futures.isEmpty() ? null : futures;
        });
    }

    /** Stops listening and polling; callers still waiting are told the queue stopped. */
    public void stop() {
        NotificationListener stoppedListener;
        PeriodicTasks stoppedPoller;
        synchronized (this) {
            this.stopped = true;
            stoppedListener = this.listener;
            stoppedPoller = this.poller;
            this.listener = null;
            this.poller = null;
        }
        if (stoppedListener != null) {
            stoppedListener.stop();
        }
        if (stoppedPoller != null) {
            stoppedPoller.stop();
        }
        this.waiting.forEach((id, futures) -> futures.forEach(future -> future.completeExceptionally(stoppedBefore(id))));
        this.waiting.clear();
    }

    /** Lets the next await start listening again (the queue started again). */
    public synchronized void allowStart() {
        this.stopped = false;
    }

    /** @return whether it listens (an await has started it and the queue has not stopped since) */
    public synchronized boolean isListening() {
        return this.listener != null;
    }

    private synchronized boolean startIfStopped() {
        if (this.stopped) {
            return false;
        }
        if (this.listener == null) {
            PeriodicTasks poll = new PeriodicTasks("pgqueue-awaiter", Duration.ofSeconds(5), List.of(
                    new PeriodicTasks.Task(CHECK, this.pollInterval, this.pollInterval, this::checkAll)));
            poll.start();
            this.poller = poll;
            this.listener = new NotificationListener(this.dataSource, List.of(this.main.endedChannel()),
                    (channel, payload) -> poll.runSoon(CHECK), () -> poll.runSoon(CHECK), "-awaiter");
            this.listener.start();
        }
        return true;
    }

    private void checkAll() {
        // Callers that stopped waiting (timed out, cancelled) are let go, each job's set changed atomically.
        for (Long jobId : List.copyOf(this.waiting.keySet())) {
            this.waiting.computeIfPresent(jobId, (id, futures) -> {
                futures.removeIf(CompletableFuture::isDone);
                return futures.isEmpty() ? null : futures;
            });
        }
        if (!this.waiting.isEmpty()) {
            try {
                check(new ArrayList<>(this.waiting.keySet()));
            }
            catch (RuntimeException ex) {
                log.warn("Could not read the awaited jobs; trying again in {} ms: {}", this.pollInterval.toMillis(),
                        ex.toString());
            }
        }
    }

    /** Completes the futures of the jobs among some that have finished. */
    private void check(List<Long> jobIds) {
        for (JobStore store : this.allStores.get()) {
            for (JobSnapshot job : store.findFinished(jobIds)) {
                Set<CompletableFuture<JobSnapshot>> futures = this.waiting.remove(job.id());
                if (futures != null) {
                    futures.forEach(future -> future.complete(job));
                }
            }
        }
    }

    private static IllegalStateException stoppedBefore(long jobId) {
        return new IllegalStateException("The queue stopped before job " + jobId + " finished");
    }
}
