package io.pgqueue.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import io.pgqueue.JobRequest;
import io.pgqueue.StepBody;
import io.pgqueue.StepRetry;
import io.pgqueue.TaskContext;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.internal.store.WorkflowStore;
import io.pgqueue.worker.WorkerTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;
import tools.jackson.databind.ObjectMapper;

/**
 * A job this node holds, from claim to written outcome: buffered first, then running, then
 * finished while its outcome waits to be written. It is also the handler's {@link TaskContext}.
 * <p>
 * Its state changes only through the methods here; the write results that change it are applied
 * in one place, {@link HeldJobs#apply}. The flags are set by the completer, the lease keeper, the
 * timeout timer and the shutdown, and read by the handler thread, hence volatile.
 */
public final class RunningJob implements TaskContext {

    final ClaimedJob job;

    final WorkerTask task;

    /** The pool slots whose buffer and handler slot the job occupies (a hung handler may give its slot up). */
    final PoolSlots slots;

    /** The shard the job was claimed from, which takes every write about it; {@code null} for a drained job. */
    final ShardWorkers shard;

    /** The job store of a drained job, where results are recorded and read; {@code null}: the shard's. */
    private final JobStore store;

    /** Local clock when the claim returned, to place the start on the database clock. */
    final long claimedNanos = System.nanoTime();

    private volatile Map<String, String> headers = Map.of();

    /** Reads and writes results as the payloads are. */
    private volatile ObjectMapper mapper;

    /** Enqueues the child jobs the handler spawns, or {@code null}. */
    private volatile ChildSpawner spawner;

    private volatile Thread thread;

    private volatile Instant deadline;

    private volatile long startedNanos;

    private volatile boolean cancelRequested;

    private volatile boolean leaseLost;

    private volatile boolean timedOut;

    /** When the attempt ran past its timeout (local clock), 0 before. */
    private volatile long timedOutNanos;

    /** Counted by its slots as a handler that ignored its timeout; guarded by the slots' lock. */
    boolean hung;

    /** A hung handler that gave up its slot and runs outside the slot count; guarded by the slots' lock. */
    boolean outsideSlot;

    private volatile boolean interruptedByShutdown;

    private volatile String progress;

    /** The result the handler recorded last, as JSON: written with the job's completion. */
    private volatile String result;

    /** The attempt's durable steps, read when the handler reaches its first; {@code null} before. */
    private DurableSteps steps;

    /** Guards {@link #steps}: not this object's monitor, which interrupts take while the steps are read. */
    private final Object stepsLock = new Object();

    /** The lines the handler logged, for the attempt's history; {@code null} when the task keeps none. */
    private volatile AttemptLog log;

    /**
     * Until when (local clock) this node knows it holds the lease: when the last claim or renewal
     * that the database confirmed was sent, plus the lease.
     */
    private volatile long leaseKnownUntilNanos;

    /** When the handler finished (local clock), 0 while it runs; the outcome may not be written yet. */
    private volatile long finishedNanos;

    RunningJob(ClaimedJob job, WorkerTask task, PoolSlots slots, ShardWorkers shard) {
        this.job = job;
        this.task = task;
        this.slots = slots;
        this.shard = shard;
        this.store = null;
    }

    /** A job run outside any pool, on the caller's thread ({@link Drainer}). */
    RunningJob(ClaimedJob job, WorkerTask task, JobStore store) {
        this.job = job;
        this.task = task;
        this.slots = null;
        this.shard = null;
        this.store = store;
    }

    Lease lease() {
        return this.job.lease();
    }

    /** @return the characters of the job's payload and headers: what buffering it costs */
    int size() {
        return this.job.payload().length() + (this.job.headers() == null ? 0 : this.job.headers().length());
    }

    /** Attaches the handler thread and sets the attempt's deadline. */
    synchronized void attach(Thread thread, Map<String, String> headers, ObjectMapper mapper, ChildSpawner spawner) {
        this.thread = thread;
        this.headers = headers;
        this.mapper = mapper;
        this.spawner = spawner;
        this.startedNanos = System.nanoTime();
        this.deadline = Instant.now().plus(this.task.timeout());
        this.log = this.task.definition().history() ? new AttemptLog() : null;
    }

    /** Detaches the handler thread, so a late interrupt cannot hit the thread's next job. */
    synchronized void detach() {
        this.thread = null;
    }

    /** @return whether a handler thread runs the job now */
    boolean isRunning() {
        return this.thread != null;
    }

    long startedNanos() {
        return this.startedNanos;
    }

    /** @return when the handler started, on the database clock: the claim's time plus this node's time from claim to start */
    Instant startedAt() {
        return this.job.claimedAt().plusNanos(this.startedNanos - this.claimedNanos);
    }

    /** @return the lines the handler logged, or {@code null} when the task keeps no history */
    AttemptLog attemptLog() {
        return this.log;
    }

    /**
     * The database confirmed the lease: by a claim or a renewal sent at the given moment.
     * @param sentNanos when the claim or renewal was sent (local clock)
     * @param leaseNanos the lease it took
     */
    void leaseConfirmed(long sentNanos, long leaseNanos) {
        long until = sentNanos + leaseNanos;
        if (until - this.leaseKnownUntilNanos > 0) {
            this.leaseKnownUntilNanos = until;
        }
    }

    /**
     * Whether the lease is certainly still held at the given moment: a node whose renewals stopped
     * getting through (cut off from the server, its heartbeats stuck) must not start a job whose
     * lease may have run out and whose job may already run elsewhere.
     */
    boolean leaseKnownAt(long nowNanos) {
        return this.leaseKnownUntilNanos - nowNanos > 0;
    }

    /**
     * The database no longer gives this node the job (rescued, re-claimed or cancelled). A finished
     * job is left alone: its row may simply have been finished by its own outcome meanwhile.
     * @return whether this call took the lease away
     */
    boolean loseLease() {
        if (this.leaseLost || this.finishedNanos != 0) {
            return false;
        }
        this.leaseLost = true;
        return true;
    }

    boolean isLeaseLost() {
        return this.leaseLost;
    }

    /** An operator asked to cancel the job. */
    void requestCancel() {
        this.cancelRequested = true;
    }

    /** @return whether a buffered job must not start: its lease is lost or its cancellation requested */
    boolean mustNotStart() {
        return this.leaseLost || this.cancelRequested;
    }

    /** The attempt ran past its timeout: the handler is interrupted and keeps no lease. */
    void timeOut() {
        this.timedOutNanos = System.nanoTime();
        this.timedOut = true;
        interrupt();
    }

    /**
     * Whether the handler still runs this long after its timeout interrupted it.
     * @param nowNanos the local clock
     * @param graceNanos how long after the interrupt
     */
    boolean ignoredTimeoutFor(long nowNanos, long graceNanos) {
        return this.timedOut && isRunning() && nowNanos - this.timedOutNanos >= graceNanos;
    }

    boolean isTimedOut() {
        return this.timedOut;
    }

    /** The node stops and the shutdown timeout passed: the handler is interrupted, the job released. */
    void interruptForShutdown() {
        this.interruptedByShutdown = true;
        interrupt();
    }

    boolean isInterruptedByShutdown() {
        return this.interruptedByShutdown;
    }

    /** The handler returned; the job stays held until its outcome is written. */
    void finish() {
        this.finishedNanos = System.nanoTime();
    }

    boolean isFinished() {
        return this.finishedNanos != 0;
    }

    /**
     * Whether the lease keeper renews the job's lease: not after a timeout (a handler that ignores
     * its interrupt keeps no lease, its job comes back by rescue), nor for a finished job whose
     * outcome could not be written within the grace.
     */
    boolean keepsLease(long nowNanos, long writeGraceNanos) {
        return !this.timedOut && (this.finishedNanos == 0 || nowNanos - this.finishedNanos < writeGraceNanos);
    }

    String progress() {
        return this.progress;
    }

    String result() {
        return this.result;
    }

    private synchronized void interrupt() {
        Thread running = this.thread;
        if (running != null) {
            running.interrupt();
        }
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
    public void log(String message) {
        AttemptLog attemptLog = this.log;
        if (attemptLog != null) {
            attemptLog.add(Level.INFO, message);
        }
    }

    @Override
    public Logger logger() {
        Class<?> handler = this.task.definition().handlerType();
        Logger delegate = handler != null ? LoggerFactory.getLogger(handler) : TaskContext.super.logger();
        AttemptLog attemptLog = this.log;
        return attemptLog == null ? delegate : attemptLog.logger(delegate);
    }

    @Override
    public String toString() {
        return "job " + this.job.id() + " (" + this.job.task() + ", attempt " + this.job.attempt() + ")";
    }

    private JobStore store() {
        return this.store != null ? this.store : this.shard.store();
    }

    /**
     * Keeps the result for the completion, which writes it under this attempt's lease in the same
     * transaction (one statement for the batch of completions it is written with); an attempt that
     * does not complete writes none, as no one would read it.
     */
    @Override
    public void recordResult(Object result) {
        String json = this.mapper.writeValueAsString(result);
        WorkflowStore.requireStorableResult(jobId(), json);
        this.result = json;
    }

    /** @return whether the handler reached a durable step or sleep in this attempt */
    boolean reachedSteps() {
        synchronized (this.stepsLock) {
            return this.steps != null;
        }
    }

    private DurableSteps steps() {
        synchronized (this.stepsLock) {
            if (this.steps == null) {
                this.steps = new DurableSteps(this, store(), this.mapper);
            }
            return this.steps;
        }
    }

    @Override
    public <T> T step(String name, StepRetry retry, Class<T> type, StepBody<T> body) {
        return steps().step(name, retry, type, body);
    }

    @Override
    public <T> Optional<T> awaitSignal(String name, Class<T> type, Duration timeout) {
        if (name != null && name.startsWith(DurableSteps.CHILD_SIGNAL_PREFIX)) {
            throw new IllegalArgumentException("Signal names starting with '" + DurableSteps.CHILD_SIGNAL_PREFIX
                    + "' are child jobs' ends (awaitChild); give signal '" + name + "' another name");
        }
        return steps().awaitSignal(name, type, timeout);
    }

    @Override
    public long spawn(String name, JobRequest request) {
        return steps().spawn(name, request, this.spawner, false);
    }

    @Override
    public long spawnDetached(String name, JobRequest request) {
        return steps().spawn(name, request, this.spawner, true);
    }

    @Override
    public <T> T awaitChild(long childId, Class<T> type) {
        return steps().awaitChild(childId, type);
    }

    @Override
    public void sleep(String name, Duration duration) {
        steps().sleep(name, null, Objects.requireNonNull(duration, "duration"));
    }

    @Override
    public void sleepUntil(String name, Instant until) {
        steps().sleep(name, Objects.requireNonNull(until, "until"), null);
    }

    @Override
    public <T> Optional<T> dependencyResult(String dependency, Class<T> type) {
        return store().workflows().dependencyResult(jobId(), dependency,
                json -> this.mapper.readValue(json, type));
    }

    @Override
    public <T> Map<String, T> dependencyResults(Class<T> type) {
        return store().workflows().dependencyResults(jobId(), json -> this.mapper.readValue(json, type));
    }
}
