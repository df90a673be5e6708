package io.pgqueue.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import io.pgqueue.ChildJobFailedException;
import io.pgqueue.JobRequest;
import io.pgqueue.JobState;
import io.pgqueue.JobStep;
import io.pgqueue.QueueDefaults;
import io.pgqueue.StepBody;
import io.pgqueue.StepMismatchException;
import io.pgqueue.StepRetry;
import io.pgqueue.TaskCancelledException;
import io.pgqueue.TaskSnoozedException;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.StepStore;
import io.pgqueue.internal.store.WorkflowStore;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * The durable steps of one attempt: the job's recorded steps, read once when the handler reaches
 * its first step, and the steps it runs and records now. Steps are matched by name and place; the
 * handler reaches them in order on its thread.
 */
final class DurableSteps {

    /** Longest step name (the table's check). */
    static final int MAX_NAME_LENGTH = 200;

    /** What the step name of a signal wait starts with. */
    static final String SIGNAL_PREFIX = "signal:";

    /** What the step name of a child job's spawn starts with. */
    static final String SPAWN_PREFIX = "spawn:";

    /** What the signal of a child job's end is named after (its id follows). */
    static final String CHILD_SIGNAL_PREFIX = "child:";

    /** How long a parent waits for a child at most: as good as for ever. */
    static final Duration CHILD_WAIT = Duration.ofDays(3650);

    private final RunningJob job;

    private final StepStore store;

    /** The job store of the job's database: a spawn's child and record share its transaction. */
    private final JobStore jobs;

    /** The child jobs this attempt spawned or found recorded. */
    private final Set<Long> children = new HashSet<>();

    private final ObjectMapper mapper;

    private final Map<String, JobStep> byName = new HashMap<>();

    private final Map<Integer, JobStep> byPlace = new HashMap<>();

    private final Set<String> reached = new HashSet<>();

    /** The database clock when the steps were read, and this node's clock then. */
    private Instant databaseNow;

    private long readNanos;

    /** The place of the next step the handler reaches. */
    private int next;

    DurableSteps(RunningJob job, JobStore jobs, ObjectMapper mapper) {
        this.job = job;
        this.jobs = jobs;
        this.store = jobs.steps();
        this.mapper = mapper;
        // Steps are recorded under a claim: a job claimed for the first time (epoch 1) has none to read
        // (a signal sent before may wait for it, which its wait finds when it records itself).
        if (job.lease().epoch() > 1) {
            StepStore.Recorded recorded = this.store.load(job.jobId());
            recorded.steps().forEach(step -> {
                this.byName.put(step.name(), step);
                if (step.seq() >= 0) {
                    this.byPlace.put(step.seq(), step);
                }
            });
            clock(recorded.databaseNow());
        }
    }

    /** Sets the database clock as a statement just read it. */
    private void clock(Instant databaseNow) {
        this.databaseNow = databaseNow;
        this.readNanos = System.nanoTime();
    }

    synchronized <T> T step(String name, StepRetry retry, Class<T> type, StepBody<T> body) {
        Objects.requireNonNull(retry, "retry");
        Objects.requireNonNull(body, "body");
        int place = reach(requireName(name));
        JobStep recorded = recorded(name, place, JobStep.Kind.STEP);
        if (recorded != null) {
            return read(recorded, type);
        }
        this.job.throwIfCancellationRequested();
        long started = System.nanoTime();
        T value = run(retry, body);
        String json = value == null || type == Void.class ? null : this.mapper.writeValueAsString(value);
        if (json != null) {
            WorkflowStore.requireStorable("The value of step '" + name + "' of job " + this.job.jobId(), json);
        }
        StepStore.Written written = this.store.recordStep(this.job.lease(), name, place, json,
                json == null ? null : value.getClass().getName(), Duration.ofNanos(System.nanoTime() - started));
        if (written == null) {
            throw lost(name);
        }
        clock(written.databaseNow());
        return value;
    }

    synchronized void sleep(String name, Instant until, Duration delay) {
        if (delay != null && delay.isNegative()) {
            throw new IllegalArgumentException("A durable sleep lasts zero or more, not " + delay);
        }
        String named = name == null ? "sleep-" + this.next : requireName(name);
        int place = reach(named);
        JobStep recorded = recorded(named, place, JobStep.Kind.SLEEP);
        Instant wake;
        Duration left;
        if (recorded != null) {
            wake = recorded.wakeAt();
            left = Duration.between(databaseNow(), wake);
        }
        else {
            this.job.throwIfCancellationRequested();
            StepStore.Written written = this.store.recordSleep(this.job.lease(), named, place, until, delay);
            if (written == null) {
                throw lost(named);
            }
            clock(written.databaseNow());
            wake = written.wakeAt();
            left = until == null ? delay : Duration.between(databaseNow(), wake);
        }
        if (left.compareTo(Duration.ofMillis(1)) >= 0) {
            throw new TaskSnoozedException(left);
        }
    }

    /**
     * Waits for a signal: its payload when the job has it, empty once the wait timed out; otherwise
     * the wait is recorded (once) and the attempt snoozes until its end.
     */
    synchronized <T> Optional<T> awaitSignal(String name, Class<T> type, Duration timeout) {
        if (name == null || name.isEmpty() || name.length() > QueueDefaults.MAX_SIGNAL_NAME_LENGTH) {
            throw new IllegalArgumentException("A signal needs a name of 1 to " + QueueDefaults.MAX_SIGNAL_NAME_LENGTH
                    + " characters, not " + (name == null ? "null" : "'" + name + "'"));
        }
        Objects.requireNonNull(type, "type");
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("A signal wait lasts zero or more, not " + timeout);
        }
        String named = SIGNAL_PREFIX + name;
        int place = reach(named);
        JobStep wait = recorded(named, place, JobStep.Kind.SIGNAL);
        if (wait == null) {
            this.job.throwIfCancellationRequested();
            StepStore.Written written = this.store.awaitSignal(this.job.lease(), named, place, timeout);
            if (written != null) {
                clock(written.databaseNow());
                wait = new JobStep(named, place, JobStep.Kind.SIGNAL, null, null, written.wakeAt(), this.job.attempt(),
                        written.databaseNow(), written.databaseNow(), JobStep.SignalState.WAITING);
            }
            else {
                // The signal came first (or the lease is gone, which placing it finds).
                wait = this.store.step(this.job.jobId(), named).orElseThrow(() -> lost(named));
            }
        }
        if (wait.seq() < 0) {
            if (!this.store.placeSignal(this.job.lease(), named, place)) {
                throw lost(named);
            }
            return Optional.ofNullable(read(wait, type));
        }
        if (wait.signal() == JobStep.SignalState.RECEIVED) {
            return Optional.ofNullable(read(wait, type));
        }
        if (wait.signal() == JobStep.SignalState.TIMED_OUT) {
            return Optional.empty();
        }
        Duration left = Duration.between(databaseNow(), wait.wakeAt());
        if (left.compareTo(Duration.ofMillis(1)) >= 0) {
            throw new TaskSnoozedException(left);
        }
        if (this.store.timeOutSignal(this.job.lease(), named)) {
            return Optional.empty();
        }
        JobStep now = this.store.step(this.job.jobId(), named).orElseThrow(() -> lost(named));
        if (now.signal() != JobStep.SignalState.RECEIVED) {
            throw lost(named);
        }
        return Optional.ofNullable(read(now, type));
    }

    /**
     * Spawns a child job as a step: the child's enqueue and the step's record commit together, under
     * the lease, so a child is spawned once; a recorded spawn returns the child's id.
     */
    synchronized long spawn(String name, JobRequest request, ChildSpawner spawner, boolean detached) {
        Objects.requireNonNull(request, "request");
        if (spawner == null) {
            throw new UnsupportedOperationException("Child jobs are spawned by handlers that a PgQueue node with an "
                    + "enqueuer runs");
        }
        String named = SPAWN_PREFIX + requireName(name);
        if (named.length() > MAX_NAME_LENGTH) {
            throw new IllegalArgumentException("A spawn needs a name of 1 to " + (MAX_NAME_LENGTH - SPAWN_PREFIX.length())
                    + " characters, not '" + name + "'");
        }
        int place = reach(named);
        JobStep recorded = recorded(named, place, JobStep.Kind.STEP);
        if (recorded != null) {
            long child = read(recorded, Long.class);
            this.children.add(child);
            return child;
        }
        this.job.throwIfCancellationRequested();
        long started = System.nanoTime();
        long child = this.jobs.inTransaction(() -> {
            long id = spawner.spawn(name, request, this.job.jobId(), detached);
            StepStore.Written written = this.store.recordStep(this.job.lease(), named, place, Long.toString(id),
                    Long.class.getName(), Duration.ofNanos(System.nanoTime() - started));
            if (written == null) {
                // Rolls the child back with the record.
                throw lost(named);
            }
            clock(written.databaseNow());
            return id;
        });
        this.children.add(child);
        return child;
    }

    /**
     * Waits for a child job this job spawned to end: its result when it completed (the signal its end
     * sends carries both), {@link ChildJobFailedException} when it failed or was cancelled.
     */
    <T> T awaitChild(long childId, Class<T> type) {
        Objects.requireNonNull(type, "type");
        synchronized (this) {
            if (!this.children.contains(childId)) {
                throw new IllegalArgumentException("Job " + this.job.jobId() + " did not spawn job " + childId
                        + " (in a step it reached before): a job awaits the children it spawned");
            }
        }
        ChildEnd end = awaitSignal(CHILD_SIGNAL_PREFIX + childId, ChildEnd.class, CHILD_WAIT)
            .orElseThrow(() -> new ChildJobFailedException(childId, null, "Child job " + childId + " of job "
                    + this.job.jobId() + " did not end within " + CHILD_WAIT.toDays() + " days"));
        if (!"COMPLETED".equals(end.state())) {
            throw new ChildJobFailedException(childId, JobState.valueOf(end.state()), "Child job " + childId + " of job "
                    + this.job.jobId() + " ended " + end.state());
        }
        if (end.result() == null || end.result().isNull() || type == Void.class) {
            return null;
        }
        try {
            return this.mapper.treeToValue(end.result(), type);
        }
        catch (JacksonException ex) {
            throw new StepMismatchException(CHILD_SIGNAL_PREFIX + childId, "The result of child job " + childId
                    + " of job " + this.job.jobId() + " cannot be read as " + type.getName() + ": " + ex.getMessage(), ex);
        }
    }

    /**
     * How a child job ended, as end_jobs signals it to its parent.
     *
     * @param state its final state
     * @param result its result when it completed and recorded one
     */
    record ChildEnd(String state, JsonNode result) {
    }

    private String requireName(String name) {
        if (name == null || name.isEmpty() || name.length() > MAX_NAME_LENGTH) {
            throw new IllegalArgumentException("A step needs a name of 1 to " + MAX_NAME_LENGTH + " characters, not "
                    + (name == null ? "null" : "'" + name + "'"));
        }
        if (name.startsWith(SIGNAL_PREFIX) || name.startsWith(SPAWN_PREFIX)) {
            throw new IllegalArgumentException("Step names starting with '" + SIGNAL_PREFIX + "' or '" + SPAWN_PREFIX
                    + "' are signal waits' and spawns' (TaskContext.awaitSignal, spawn); give step '" + name
                    + "' another name");
        }
        return name;
    }

    /** The handler reaches a step: returns its place, refusing a name reached before. */
    private int reach(String name) {
        if (!this.reached.add(name)) {
            throw new IllegalArgumentException("Job " + this.job.jobId() + " reached step '" + name
                    + "' twice; give each step of a job a name of its own");
        }
        return this.next++;
    }

    /** The record of a step at its place, or {@code null} if it has none; a record that does not fit throws. */
    private JobStep recorded(String name, int place, JobStep.Kind kind) {
        JobStep byName = this.byName.get(name);
        if (byName != null && (byName.seq() == place || byName.seq() < 0) && byName.kind() == kind) {
            return byName;
        }
        if (byName != null) {
            throw new StepMismatchException(name, "Job " + this.job.jobId() + " reached " + describe(kind, name)
                    + " as step " + place + ", but recorded it as " + describe(byName.kind(), name) + " at step "
                    + byName.seq() + ": the handler's steps changed since the job recorded them", null);
        }
        JobStep atPlace = this.byPlace.get(place);
        if (atPlace != null) {
            throw new StepMismatchException(name, "Job " + this.job.jobId() + " reached " + describe(kind, name)
                    + " as step " + place + ", where it recorded " + describe(atPlace.kind(), atPlace.name())
                    + ": the handler's steps changed since the job recorded them", null);
        }
        return null;
    }

    private static String describe(JobStep.Kind kind, String name) {
        return switch (kind) {
            case SLEEP -> "sleep '" + name + "'";
            case SIGNAL -> "the wait for signal '" + name.substring(SIGNAL_PREFIX.length()) + "'";
            case STEP -> "step '" + name + "'";
        };
    }

    private <T> T read(JobStep recorded, Class<T> type) {
        if (recorded.result() == null || type == Void.class) {
            return null;
        }
        try {
            if (type != null) {
                return this.mapper.readValue(recorded.result(), type);
            }
            @SuppressWarnings("unchecked")
            Class<T> recordedType = (Class<T>) Class.forName(recorded.resultType(), false, classLoader());
            return this.mapper.readValue(recorded.result(), recordedType);
        }
        catch (JacksonException | ClassNotFoundException | LinkageError ex) {
            throw new StepMismatchException(recorded.name(), "Job " + this.job.jobId() + " recorded a value for step '"
                    + recorded.name() + "' that cannot be read as "
                    + (type != null ? type.getName() : recorded.resultType()) + " (" + ex.getMessage()
                    + "): the step's type changed since the job recorded it", ex);
        }
    }

    private ClassLoader classLoader() {
        Class<?> handler = this.job.task.definition().handlerType();
        return handler != null ? handler.getClassLoader() : Thread.currentThread().getContextClassLoader();
    }

    /**
     * Runs a step's body, trying again per its retry while the attempt may go on. A failure leaves
     * as it was thrown (a checked one too: handlers declare {@code throws Exception}), so that the
     * task's terminal exceptions see it.
     */
    private <T> T run(StepRetry retry, StepBody<T> body) {
        for (int tried = 1;; tried++) {
            try {
                return body.run();
            }
            catch (Exception ex) {
                if (tried >= retry.maxTries() || !await(retry.backoff().delayAfter(tried))) {
                    throw DurableSteps.<RuntimeException>rethrow(ex);
                }
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static <E extends Exception> E rethrow(Exception failure) throws E {
        throw (E) failure;
    }

    /** Waits before the next try: {@code false} if the attempt must stop or would time out meanwhile. */
    private boolean await(Duration delay) {
        if (this.job.isCancellationRequested()
                || (delay != null && Instant.now().plus(delay).isAfter(this.job.deadline()))) {
            return false;
        }
        if (delay == null || delay.isZero() || delay.isNegative()) {
            return true;
        }
        try {
            Thread.sleep(delay.toMillis(), (int) (delay.toNanos() % 1_000_000));
            return !this.job.isCancellationRequested();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private TaskCancelledException lost(String name) {
        return new TaskCancelledException("Job " + this.job.jobId() + " no longer holds its lease: step '" + name
                + "' is not recorded");
    }

    /** The database clock, as the last statement read it plus this node's time since; this node's before any. */
    private Instant databaseNow() {
        return this.databaseNow == null ? Instant.now() : this.databaseNow.plusNanos(System.nanoTime() - this.readNanos);
    }
}
