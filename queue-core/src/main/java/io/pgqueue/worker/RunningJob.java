package io.pgqueue.worker;

import java.time.Instant;
import java.util.Map;

import io.pgqueue.TaskContext;
import io.pgqueue.store.ClaimedJob;
import io.pgqueue.store.Lease;

/**
 * A job this node holds, from claim to outcome: buffered first, then running. It is also the
 * handler's {@link TaskContext}. Flags are written by the lease keeper, the timeout timer and the
 * shutdown, and read by the handler thread, hence volatile.
 */
final class RunningJob implements TaskContext {

    final ClaimedJob job;

    final WorkerTask task;

    private final Map<String, String> headers;

    volatile Thread thread;

    volatile Instant deadline;

    /** Local clock when the claim returned, to place the start on the database clock. */
    final long claimedNanos = System.nanoTime();

    volatile long startedNanos;

    volatile boolean cancelRequested;

    volatile boolean leaseLost;

    volatile boolean timedOut;

    volatile boolean interruptedByShutdown;

    volatile String progress;

    /** When the handler finished (local clock), 0 while it runs; the outcome may not be written yet. */
    volatile long finishedNanos;

    RunningJob(ClaimedJob job, WorkerTask task, Map<String, String> headers) {
        this.job = job;
        this.task = task;
        this.headers = headers;
    }

    Lease lease() {
        return this.job.lease();
    }

    /** Interrupts the handler thread, if the job is running. */
    synchronized void interrupt() {
        Thread running = this.thread;
        if (running != null) {
            running.interrupt();
        }
    }

    /** Detaches the handler thread, so a late interrupt cannot hit the thread's next job. */
    synchronized void detach() {
        this.thread = null;
    }

    @Override
    public long jobId() {
        return this.job.id();
    }

    @Override
    public String task() {
        return this.job.task();
    }

    @Override
    public int attempt() {
        return this.job.attempt();
    }

    @Override
    public int maxAttempts() {
        return this.job.maxAttempts();
    }

    @Override
    public Map<String, String> headers() {
        return this.headers;
    }

    @Override
    public Instant deadline() {
        return this.deadline;
    }

    @Override
    public Instant delayToleranceDeadline() {
        return this.job.delayToleranceDeadline();
    }

    @Override
    public boolean isCancellationRequested() {
        return this.cancelRequested || this.leaseLost || this.timedOut || this.interruptedByShutdown;
    }

    @Override
    public void progress(String progress) {
        // PostgreSQL text cannot hold NUL characters.
        this.progress = progress == null ? null : progress.replace("\u0000", "");
    }

    @Override
    public String toString() {
        return "job " + this.job.id() + " (" + this.job.task() + ", attempt " + this.job.attempt() + ")";
    }
}
