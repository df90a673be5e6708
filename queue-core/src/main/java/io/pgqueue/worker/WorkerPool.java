package io.pgqueue.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.pgqueue.AttemptOutcomes;
import io.pgqueue.JobState;
import io.pgqueue.TaskTimeoutException;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.observe.QueueMeterNames;
import io.pgqueue.observe.QueueObservations;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.store.ClaimLimit;
import io.pgqueue.store.ClaimedJob;
import io.pgqueue.store.JobStore;
import io.pgqueue.store.Lease;
import io.pgqueue.store.Outcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.ObjectMapper;

/**
 * The worker pool of one node: a fetch loop that claims due jobs for all of the pool's tasks in
 * one statement, a bounded local buffer per task, and the threads that run the handlers.
 * <p>
 * Backpressure: the fetch loop asks for each task exactly its free capacity — concurrency plus
 * the adaptive prefetch depth, minus the jobs running, buffered and finished but not yet written —
 * so the node never holds more than {@code concurrency + maxPrefetch} jobs per task, whatever the
 * backlog, and claiming never runs ahead of the outcome writes.
 */
final class WorkerPool {

    private static final Logger log = LoggerFactory.getLogger(WorkerPool.class);

    private static final TypeReference<Map<String, String>> HEADERS = new TypeReference<>() {
    };

    /**
     * Least time between the starts of two claims that notifications trigger. A lone job is
     * claimed the moment its notification arrives; when notifications come faster, the ones that
     * arrive within this window are served by one claim. At 2,000 jobs/s a claim per notification
     * cost more CPU than the producers could spare (measured with the claim as a statement:
     * 0 ms → 12,600 claims of 1.6 jobs and p99 82 ms; 2 ms → 4,400 claims of 4.6 jobs, p99 25 ms;
     * 4 ms → 2,600 claims, p99 45 ms). Once the claim function made a claim about 0.3 ms, 1 ms
     * took 2,000 jobs/s from p50 1.84–2.01 to 1.27–1.33 ms (about 8,300 claims in 10 s) with the
     * p99 no worse, and the mixed workload's highest sustained rate no lower within the noise
     * (alternating runs: 8,000, 8,000, 4,000, 8,000 against 7,000, 7,000, 6,000, 7,000 jobs/s).
     */
    private static final long CLAIM_SPACING_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final String name;

    private final String owner;

    private final JobStore store;

    private final ObjectMapper mapper;

    private final AttemptOutcomes outcomes;

    private final Completer completer;

    private final Executor executor;

    private final ScheduledExecutorService timers;

    private final WorkerSettings settings;

    private final QueueEvents events;

    private final ObservationRegistry observations;

    private final Map<String, Slot> slots = new LinkedHashMap<>();

    /** Tasks paused by an operator; refreshed by the runtime once per poll interval. */
    private volatile Set<String> paused = Set.of();

    /** Jobs this pool holds, buffered or running, by id. */
    private final Map<Long, RunningJob> held = new ConcurrentHashMap<>();

    private final ReentrantLock lock = new ReentrantLock();

    private final Condition wake = this.lock.newCondition();

    private final Condition idle = this.lock.newCondition();

    private boolean wakeRequested;

    /** A wake-up for freed capacity while jobs wait (not a notification): claim without spacing. */
    private boolean refillRequested;

    /** When the last claim started (local clock); only the fetch thread uses it. */
    private long lastClaimStartedAt = System.nanoTime() - CLAIM_SPACING_NANOS;

    private volatile boolean fetching;

    private Thread fetcher;

    WorkerPool(String name, Collection<WorkerTask> tasks, PoolSettings poolSettings, WorkerSettings settings,
            JobStore store, ObjectMapper mapper, AttemptOutcomes outcomes, Completer completer, Executor executor,
            ScheduledExecutorService timers, QueueTelemetry telemetry) {
        this.name = name;
        this.events = telemetry.events();
        this.observations = telemetry.observations();
        this.owner = settings.nodeId() + "/" + name;
        this.settings = settings;
        this.store = store;
        this.mapper = mapper;
        this.outcomes = outcomes;
        this.completer = completer;
        this.executor = executor;
        this.timers = timers;
        for (WorkerTask task : tasks) {
            this.slots.put(task.name(), new Slot(task, mapper.constructType(task.payloadType()),
                    new AdaptivePrefetch(task.concurrency(), poolSettings)));
        }
    }

    String name() {
        return this.name;
    }

    Collection<String> tasks() {
        return this.slots.keySet();
    }

    /** @return the most jobs this pool can hold at once: per task its concurrency plus maximum prefetch */
    int capacity(PoolSettings poolSettings) {
        return this.slots.values().stream().mapToInt(slot -> slot.task.concurrency() + poolSettings.maxPrefetch()).sum();
    }

    Collection<RunningJob> held() {
        return this.held.values();
    }

    /**
     * Forgets a job whose outcome has been written (or could not be, and never will be).
     * @param lease the lease the outcome was written with
     */
    void written(Lease lease) {
        this.held.computeIfPresent(lease.jobId(), (id, job) -> job.lease().equals(lease) ? null : job);
    }

    /** Outcomes were written: the capacity they held is free again; claim at once if jobs wait. */
    void outcomesWritten() {
        this.lock.lock();
        try {
            if (this.slots.values().stream().anyMatch(slot -> slot.moreWaiting)) {
                this.wakeRequested = true;
                this.refillRequested = true;
                this.wake.signal();
            }
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * Sets the paused tasks; a resumed task is looked for at once.
     * @param paused the names of all paused tasks
     */
    void setPaused(Set<String> paused) {
        Set<String> before = this.paused;
        this.paused = paused;
        if (!before.equals(paused)) {
            wake(null);
        }
    }

    PoolState state() {
        Map<String, PoolState.Task> tasks = new LinkedHashMap<>();
        int capacity = 0;
        int busy = 0;
        int buffered = 0;
        this.lock.lock();
        try {
            for (Slot slot : this.slots.values()) {
                tasks.put(slot.task.name(), new PoolState.Task(slot.task.concurrency(), slot.running, slot.buffer.size(),
                        slot.prefetch.depth(), slot.prefetch.averageExecutionTime(), this.paused.contains(slot.task.name())));
                capacity += slot.task.concurrency();
                busy += slot.running;
                buffered += slot.buffer.size();
            }
        }
        finally {
            this.lock.unlock();
        }
        return new PoolState(this.name, capacity, busy, buffered, tasks);
    }

    synchronized void start() {
        if (this.fetcher != null) {
            return;
        }
        this.fetching = true;
        this.fetcher = new Thread(this::fetchLoop, "pgqueue-" + this.name + "-fetch");
        this.fetcher.setDaemon(true);
        this.fetcher.start();
    }

    /**
     * Wakes the fetch loop: new jobs of the task may be due.
     * @param task the task name, or {@code null} for all tasks of the pool
     */
    void wake(String task) {
        this.lock.lock();
        try {
            for (Slot slot : this.slots.values()) {
                if (task == null || slot.task.name().equals(task)) {
                    slot.exhausted = false;
                    slot.wakes++;
                }
            }
            this.wakeRequested = true;
            this.wake.signal();
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * Stops claiming and hands buffered jobs back to READY at once.
     */
    void stopFetching() throws InterruptedException {
        Thread thread;
        synchronized (this) {
            thread = this.fetcher;
            this.fetching = false;
            this.fetcher = null;
        }
        if (thread == null) {
            return;
        }
        wake(null);
        thread.join(this.settings.pollInterval().toMillis() + 5000);
        List<RunningJob> buffered = new ArrayList<>();
        this.lock.lock();
        try {
            for (Slot slot : this.slots.values()) {
                buffered.addAll(slot.buffer);
                slot.buffer.clear();
            }
        }
        finally {
            this.lock.unlock();
        }
        if (!buffered.isEmpty()) {
            try {
                this.store.release(buffered.stream().map(RunningJob::lease).toList());
                log.info("Pool '{}' handed {} buffered jobs back to the queue", this.name, buffered.size());
            }
            catch (RuntimeException ex) {
                log.warn("Pool '{}' could not hand back {} buffered jobs; they return when their leases expire: {}",
                        this.name, buffered.size(), ex.toString());
            }
            buffered.forEach(job -> this.held.remove(job.jobId(), job));
        }
    }

    /**
     * Waits for running handlers to finish.
     * @return whether all finished within the timeout
     */
    boolean awaitIdle(Duration timeout) throws InterruptedException {
        long nanos = timeout.toNanos();
        this.lock.lock();
        try {
            while (this.slots.values().stream().anyMatch(slot -> slot.running > 0)) {
                if (nanos <= 0) {
                    return false;
                }
                nanos = this.idle.awaitNanos(nanos);
            }
            return true;
        }
        finally {
            this.lock.unlock();
        }
    }

    /** Interrupts handlers still running after the shutdown grace period. */
    void interruptRunning() {
        for (RunningJob job : this.held.values()) {
            if (job.thread != null) {
                log.warn("Interrupting {} at shutdown", job);
                job.interruptedByShutdown = true;
                job.interrupt();
            }
        }
    }

    /**
     * Drops buffered jobs that match, e.g. whose lease was lost or whose cancellation was requested.
     * @return the dropped jobs
     */
    List<RunningJob> dropBuffered(Predicate<RunningJob> which) {
        List<RunningJob> dropped = new ArrayList<>();
        this.lock.lock();
        try {
            for (Slot slot : this.slots.values()) {
                slot.buffer.removeIf(job -> {
                    if (which.test(job)) {
                        dropped.add(job);
                        return true;
                    }
                    return false;
                });
            }
        }
        finally {
            this.lock.unlock();
        }
        dropped.forEach(job -> this.held.remove(job.jobId(), job));
        return dropped;
    }

    private void fetchLoop() {
        long backoff = 0;
        while (this.fetching) {
            List<ClaimLimit> limits = demand();
            boolean more = false;
            if (!limits.isEmpty()) {
                try {
                    long start = System.nanoTime();
                    this.lastClaimStartedAt = start;
                    List<ClaimedJob> claimed = this.store.claim(limits, this.owner, JobState.STARTING,
                            this.settings.lease());
                    this.events.claimRan(this.name, claimed.size(), Duration.ofNanos(System.nanoTime() - start));
                    more = accept(claimed, limits);
                    backoff = 0;
                }
                catch (RuntimeException ex) {
                    backoff = Math.min(Math.max(backoff * 2, 500), 30_000);
                    log.warn("Pool '{}' could not claim jobs, retrying in {} ms: {}", this.name, backoff, ex.toString());
                    sleep(backoff);
                    continue;
                }
            }
            if (!more) {
                // Wait for a notification (or a freed slot, or the poll), then give the
                // notifications that follow closely a moment to join the same claim.
                boolean refill = awaitWake(this.settings.pollInterval());
                long spacing = this.lastClaimStartedAt + CLAIM_SPACING_NANOS - System.nanoTime();
                if (!refill && spacing > 0 && this.fetching) {
                    LockSupport.parkNanos(spacing);
                }
            }
        }
    }

    /**
     * Free capacity per task that is worth a claim. Finished jobs whose outcomes wait to be
     * written still count against it: claiming must not run ahead of the completer, or a slow
     * outcome write (a huge table, a busy disk) would pile finished jobs up in memory without bound.
     */
    private List<ClaimLimit> demand() {
        List<ClaimLimit> limits = new ArrayList<>();
        Map<String, Integer> unwritten = new HashMap<>();
        this.lock.lock();
        try {
            // Counted under the lock that finished() marks a job and leaves its slot under: counted
            // before it, a job finishing in between was neither running nor unwritten, and the
            // claim ran ahead by one job per handler.
            for (RunningJob job : this.held.values()) {
                if (job.finishedNanos != 0) {
                    unwritten.merge(job.task(), 1, Integer::sum);
                }
            }
            long now = System.nanoTime();
            for (Slot slot : this.slots.values()) {
                // However busy the other tasks keep the loop, an exhausted task is looked at again
                // after a poll interval (scheduled, retried and rescued jobs come without a notification).
                if (slot.exhausted && now - slot.exhaustedAt >= this.settings.pollInterval().toNanos()) {
                    slot.exhausted = false;
                }
                slot.wakesAtClaim = slot.wakes;
                int free = slot.task.concurrency() + slot.prefetch.depth() - slot.running - slot.buffer.size()
                        - unwritten.getOrDefault(slot.task.name(), 0);
                if (free > 0 && !slot.exhausted && !this.paused.contains(slot.task.name())) {
                    limits.add(new ClaimLimit(slot.task.name(), Math.min(free, this.settings.batchSize())));
                }
            }
        }
        finally {
            this.lock.unlock();
        }
        return limits;
    }

    /**
     * Buffers claimed jobs and starts as many as slots allow.
     * @return whether some task got all it asked for: more may be waiting, claim again at once
     */
    private boolean accept(List<ClaimedJob> claimed, List<ClaimLimit> limits) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        List<RunningJob> jobs = new ArrayList<>(claimed.size());
        for (ClaimedJob job : claimed) {
            counts.merge(job.task(), 1, Integer::sum);
            Slot slot = this.slots.get(job.task());
            RunningJob running = new RunningJob(job, slot.task, headers(job));
            RunningJob previous = this.held.put(job.id(), running);
            if (previous != null) {
                // An earlier attempt of this job still runs here (its lease expired, e.g. a timed-out
                // handler that ignored its interrupt): it no longer holds the job.
                previous.leaseLost = true;
            }
            jobs.add(running);
        }
        counts.forEach((task, count) -> this.events.claimed(this.name, task, count));
        boolean full = false;
        boolean stopped;
        this.lock.lock();
        try {
            stopped = !this.fetching;
            if (!stopped) {
                for (RunningJob job : jobs) {
                    this.slots.get(job.task()).buffer.add(job);
                }
                long now = System.nanoTime();
                for (ClaimLimit limit : limits) {
                    Slot slot = this.slots.get(limit.task());
                    int got = counts.getOrDefault(limit.task(), 0);
                    // Found fewer than asked: wait for a notification or the poll — unless one
                    // arrived during the claim, announcing a job the claim may have missed.
                    if (got < limit.limit() && slot.wakes == slot.wakesAtClaim) {
                        slot.exhausted = true;
                        slot.exhaustedAt = now;
                    }
                    slot.moreWaiting = got >= limit.limit();
                    full |= slot.moreWaiting;
                }
                this.slots.values().forEach(this::dispatch);
            }
        }
        finally {
            this.lock.unlock();
        }
        if (stopped && !jobs.isEmpty()) {
            // The pool stopped while this claim ran: hand the jobs straight back.
            jobs.forEach(job -> this.held.remove(job.jobId(), job));
            try {
                this.store.release(jobs.stream().map(RunningJob::lease).toList());
            }
            catch (RuntimeException ex) {
                log.warn("Pool '{}' could not hand back {} jobs claimed while stopping; they return when their leases "
                        + "expire: {}", this.name, jobs.size(), ex.toString());
            }
        }
        return !stopped && full;
    }

    /** Starts buffered jobs while the task has free slots. Called under the lock. */
    private void dispatch(Slot slot) {
        while (slot.running < slot.task.concurrency() && !slot.buffer.isEmpty()) {
            RunningJob job = slot.buffer.poll();
            slot.running++;
            try {
                this.executor.execute(() -> execute(slot, job));
            }
            catch (RuntimeException ex) {
                slot.running--;
                slot.buffer.addFirst(job);
                log.warn("Pool '{}' could not start {}: {}", this.name, job, ex.toString());
                return;
            }
        }
    }

    private void execute(Slot slot, RunningJob job) {
        synchronized (job) {
            job.thread = Thread.currentThread();
        }
        job.startedNanos = System.nanoTime();
        job.deadline = Instant.now().plus(slot.task.timeout());
        Outcome outcome = null;
        ScheduledFuture<?> timeout = null;
        try {
            this.completer.started(job.lease());
            timeout = this.timers.schedule(() -> {
                job.timedOut = true;
                job.interrupt();
            }, slot.task.timeout().toNanos(), TimeUnit.NANOSECONDS);
            reportStart(job);
            outcome = run(slot, job);
        }
        catch (RuntimeException | Error ex) {
            // Never lose the slot or the job to a failure around the handler (a retry policy or a
            // listener that throws): the attempt fails and the slot is freed.
            log.error("Unexpected failure while running {}", job, ex);
            outcome = Outcome.failed(job.lease(), AttemptOutcomes.describe(ex));
        }
        finally {
            if (timeout != null) {
                timeout.cancel(false);
            }
            job.detach();
            // A timeout or shutdown interrupt that arrived after the handler returned must not
            // leak into the next job on this thread.
            Thread.interrupted();
            long nanos = System.nanoTime() - job.startedNanos;
            Outcome written = (outcome != null ? outcome : Outcome.failed(job.lease(), "Handler did not finish"))
                .withProgress(job.progress);
            try {
                this.events.executed(job.task(), written.kind(), Duration.ofNanos(nanos));
            }
            catch (RuntimeException ex) {
                log.warn("Queue event listener failed: {}", ex.toString());
            }
            this.completer.finished(written, job.task());
            finished(slot, job, nanos);
        }
    }

    private Outcome run(Slot slot, RunningJob job) {
        Object payload;
        try {
            payload = this.mapper.readValue(job.job.payload(), slot.payloadType);
        }
        catch (JacksonException ex) {
            // A payload the handler cannot read will never become readable: fail without retries.
            return Outcome.failed(job.lease(), "Payload cannot be read as " + slot.payloadType.toCanonical() + ": "
                    + ex.getOriginalMessage());
        }
        Observation observation = QueueObservations.execute(this.observations, job.task(), job.headers()).start();
        try (Observation.Scope scope = observation.openScope()) {
            slot.task.handler().handle(payload, job);
            observation.lowCardinalityKeyValue(QueueMeterNames.TAG_OUTCOME, "completed");
            return this.outcomes.succeeded(job.job);
        }
        catch (Throwable failure) {
            observation.error(failure);
            observation.lowCardinalityKeyValue(QueueMeterNames.TAG_OUTCOME, "failed");
            if (failure instanceof Error && !(failure instanceof AssertionError) && !(failure instanceof StackOverflowError)) {
                log.error("Handler of {} threw an Error", job, failure);
            }
            if (job.interruptedByShutdown) {
                return Outcome.released(job.lease(), "Interrupted by the shutdown of node " + this.settings.nodeId());
            }
            if (job.timedOut) {
                return this.outcomes.failed(job.job, new TaskTimeoutException(job.task(), slot.task.timeout()));
            }
            log.debug("Handler of {} failed", job, failure);
            return this.outcomes.failed(job.job, failure);
        }
        finally {
            observation.stop();
        }
    }

    /**
     * Reports the start: queue wait (due → start) and, for jobs due at enqueue, enqueue → start.
     * Database times (creation, schedule, claim) plus this node's time from claim to start.
     */
    private void reportStart(RunningJob job) {
        ClaimedJob claimed = job.job;
        Instant startedAt = claimed.claimedAt().plusNanos(job.startedNanos - job.claimedNanos);
        Duration queueWait = Duration.between(claimed.scheduleTime(), startedAt);
        boolean dueAtEnqueue = !claimed.scheduleTime().isAfter(claimed.createdAt().plusMillis(1));
        Duration startLatency = dueAtEnqueue ? Duration.between(claimed.createdAt(), startedAt) : null;
        boolean missed = claimed.delayToleranceDeadline() != null && startedAt.isAfter(claimed.delayToleranceDeadline());
        this.events.started(job.task(), queueWait, startLatency, missed);
    }

    private void finished(Slot slot, RunningJob job, long nanos) {
        // The job stays held (its lease renewed) until the completer has written its outcome: a
        // slow write must not let the lease lapse and the finished job run again.
        this.lock.lock();
        try {
            job.finishedNanos = System.nanoTime();
            slot.running--;
            slot.prefetch.record(nanos);
            dispatch(slot);
            // Refill early if the buffer runs low and the last claim left jobs behind.
            if (slot.moreWaiting && slot.buffer.size() <= slot.prefetch.depth() / 2) {
                this.wakeRequested = true;
                this.refillRequested = true;
                this.wake.signal();
            }
            this.idle.signalAll();
        }
        finally {
            this.lock.unlock();
        }
    }

    /** @return whether the wake-up asked for a refill of freed capacity */
    private boolean awaitWake(Duration timeout) {
        this.lock.lock();
        try {
            if (!this.wakeRequested && this.fetching) {
                boolean signalled = this.wake.await(timeout.toNanos(), TimeUnit.NANOSECONDS) && this.wakeRequested;
                if (!signalled) {
                    // The poll interval passed: look at every task again.
                    this.slots.values().forEach(slot -> slot.exhausted = false);
                }
            }
            this.wakeRequested = false;
            boolean refill = this.refillRequested;
            this.refillRequested = false;
            return refill;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            this.fetching = false;
            return false;
        }
        finally {
            this.lock.unlock();
        }
    }

    private Map<String, String> headers(ClaimedJob job) {
        if (job.headers() == null || job.headers().equals("{}")) {
            return Map.of();
        }
        try {
            return Map.copyOf(this.mapper.readValue(job.headers(), HEADERS));
        }
        catch (JacksonException ex) {
            return Map.of();
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** Per task state, guarded by the pool's lock. */
    private static final class Slot {

        final WorkerTask task;

        final JavaType payloadType;

        final AdaptivePrefetch prefetch;

        final ArrayDeque<RunningJob> buffer = new ArrayDeque<>();

        int running;

        /** The last claim found fewer due jobs than it asked for; wait for a notification or the poll. */
        boolean exhausted;

        /** When {@link #exhausted} was set (local clock). */
        long exhaustedAt;

        /** The last claim got all it asked for: more jobs are probably waiting. */
        boolean moreWaiting;

        /** Wake-ups received; compared across a claim to spot notifications the claim may have missed. */
        long wakes;

        long wakesAtClaim;

        Slot(WorkerTask task, JavaType payloadType, AdaptivePrefetch prefetch) {
            this.task = task;
            this.payloadType = payloadType;
            this.prefetch = prefetch;
        }
    }
}
