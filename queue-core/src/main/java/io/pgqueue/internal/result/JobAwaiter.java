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

import io.pgqueue.JobSnapshot;
import io.pgqueue.internal.lifecycle.PeriodicTasks;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.QueueStores;
import io.pgqueue.internal.worker.NotificationListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Completes the futures of callers awaiting jobs' ends. A caller's await marks the job (its end
 * then notifies {@link JobStore#endedChannel()} in its database at the ending transaction's commit,
 * whichever node ends it) and reads it once, in case it ended before; a notification, a reconnect
 * of a listener and a poll every poll interval (the fallback when a notification is lost) read the
 * awaited jobs that finished, in one statement per database. Listening (one connection per
 * database: the main one and each shard) and polling start with the first await and stop with the
 * queue. An internal type of the queue.
 */
public final class JobAwaiter {

    private static final Logger log = LoggerFactory.getLogger(JobAwaiter.class);

    private static final String CHECK = "check awaited jobs";

    private final Supplier<List<QueueStores>> databases;

    private final Function<Long, List<JobStore>> storesOf;

    private final Duration pollInterval;

    /** Per awaited job, the futures of its callers. */
    private final Map<Long, Set<CompletableFuture<JobSnapshot>>> waiting = new ConcurrentHashMap<>();

    private List<NotificationListener> listeners;

    private PeriodicTasks poller;

    private boolean stopped;

    /**
     * @param databases the stores of every database jobs live in, the main one first (one per shard)
     * @param storesOf the stores that may hold a job, the likeliest first
     * @param pollInterval how often it reads the awaited jobs without a notification
     */
    public JobAwaiter(Supplier<List<QueueStores>> databases, Function<Long, List<JobStore>> storesOf,
            Duration pollInterval) {
        this.databases = databases;
        this.storesOf = storesOf;
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
        List<NotificationListener> stoppedListeners;
        PeriodicTasks stoppedPoller;
        synchronized (this) {
            this.stopped = true;
            stoppedListeners = this.listeners;
            stoppedPoller = this.poller;
            this.listeners = null;
            this.poller = null;
        }
        if (stoppedListeners != null) {
            stoppedListeners.forEach(NotificationListener::stop);
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

    private synchronized boolean startIfStopped() {
        if (this.stopped) {
            return false;
        }
        if (this.listeners == null) {
            PeriodicTasks poll = new PeriodicTasks("pgqueue-awaiter", Duration.ofSeconds(5), List.of(
                    new PeriodicTasks.Task(CHECK, this.pollInterval, this.pollInterval, this::checkAll)));
            poll.start();
            this.poller = poll;
            List<NotificationListener> started = new ArrayList<>();
            List<QueueStores> all = this.databases.get();
            for (int i = 0; i < all.size(); i++) {
                NotificationListener listener = new NotificationListener(all.get(i).dataSource(),
                        List.of(all.get(i).jobs().endedChannel()), (channel, payload) -> poll.runSoon(CHECK),
                        () -> poll.runSoon(CHECK), i == 0 ? "-awaiter" : "-awaiter-" + i);
                listener.start();
                started.add(listener);
            }
            this.listeners = List.copyOf(started);
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
        for (QueueStores database : this.databases.get()) {
            for (JobSnapshot job : database.jobs().findFinished(jobIds)) {
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
