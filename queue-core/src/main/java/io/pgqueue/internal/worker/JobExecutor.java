package io.pgqueue.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.pgqueue.AttemptResult;
import io.pgqueue.JobAttempt;
import io.pgqueue.JobInterceptor;
import io.pgqueue.PayloadEncryption;
import io.pgqueue.TaskSnoozedException;
import io.pgqueue.TaskTimeoutException;
import io.pgqueue.internal.store.AttemptHistory;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.observe.QueueMeterNames;
import io.pgqueue.observe.QueueObservations;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.worker.WorkerTask;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.ObjectMapper;

/**
 * Runs one attempt of a job on the calling thread, as a sequence of named steps: record the start,
 * start the timeout, resolve the payload, perform the handler under an observation, turn what
 * happened into an outcome, record the outcome. Whatever goes wrong, exactly one outcome is
 * recorded and the thread is left clean for its next job.
 */
public final class JobExecutor {

    /** Where the executor records starts and outcomes (the completer, which writes them in batches). */
    interface Recorder {

        /**
         * The handler is about to run.
         * @param lease the job's lease
         */
        void started(Lease lease);

        /**
         * The attempt ended.
         * @param outcome what to write
         */
        void finished(Outcome outcome);
    }

    private static final Logger log = LoggerFactory.getLogger(JobExecutor.class);

    private static final TypeReference<Map<String, String>> HEADERS = new TypeReference<>() {
    };

    private final ObjectMapper mapper;

    private final PayloadEncryption encryption;

    private final Map<String, JavaType> payloadTypes = new HashMap<>();

    private final AttemptOutcomes outcomes;

    private final Recorder recorder;

    private final ScheduledExecutorService timers;

    private final QueueEvents events;

    private final ObservationRegistry observations;

    private final String nodeId;

    /**
     * The tasks whose handlers reached durable steps on this node: their outcomes drop the steps of
     * the jobs they end, also of an attempt that reached none (an earlier one may have).
     */
    private final Set<String> tasksWithSteps = ConcurrentHashMap.newKeySet();

    /** Enqueues the child jobs durable handlers spawn; {@code null} where the node enqueues none. */
    private volatile ChildSpawner spawner;

    /** What wraps each attempt, outermost first. */
    private final List<JobInterceptor> interceptors;

    JobExecutor(Collection<WorkerTask> tasks, ObjectMapper mapper, AttemptOutcomes outcomes, Recorder recorder,
            ScheduledExecutorService timers, QueueTelemetry telemetry, String nodeId, List<JobInterceptor> interceptors,
            PayloadEncryption encryption) {
        this.mapper = mapper;
        this.encryption = encryption;
        tasks.forEach(task -> this.payloadTypes.put(task.name(), mapper.constructType(task.payloadType())));
        this.outcomes = outcomes;
        this.recorder = recorder;
        this.timers = timers;
        this.events = telemetry.events();
        this.observations = telemetry.observations();
        this.nodeId = nodeId;
        this.interceptors = List.copyOf(interceptors);
    }

    /**
     * Lets durable handlers spawn child jobs through an enqueuer.
     * @param spawner enqueues a child in its parent's partition
     */
    void spawnChildrenWith(ChildSpawner spawner) {
        this.spawner = spawner;
    }

    /**
     * Runs one attempt of the job and records its outcome.
     * @param job the job, taken from its producer's buffer
     * @return how long the attempt took, in nanoseconds
     */
    long execute(RunningJob job) {
        job.attach(Thread.currentThread(), headers(job.job), this.mapper, this.spawner);
        Outcome outcome = null;
        ScheduledFuture<?> timeout = null;
        try {
            recordStarted(job);
            timeout = startTimeout(job);
            outcome = perform(job);
        }
        catch (Throwable ex) {
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
        }
        long nanos = System.nanoTime() - job.startedNanos();
        recordFinished(job, outcome, nanos);
        return nanos;
    }

    /** Hands the start to the recorder and reports queue wait, start latency and deadline misses. */
    private void recordStarted(RunningJob job) {
        this.recorder.started(job.lease());
        // Database times (creation, schedule, claim) plus this node's time from claim to start.
        ClaimedJob claimed = job.job;
        Instant startedAt = job.startedAt();
        Duration queueWait = Duration.between(claimed.scheduleTime(), startedAt);
        boolean dueAtEnqueue = !claimed.scheduleTime().isAfter(claimed.createdAt().plusMillis(1));
        Duration startLatency = dueAtEnqueue ? Duration.between(claimed.createdAt(), startedAt) : null;
        boolean missed = claimed.delayToleranceDeadline() != null && startedAt.isAfter(claimed.delayToleranceDeadline());
        this.events.started(job.task(), queueWait, startLatency, missed);
    }

    private ScheduledFuture<?> startTimeout(RunningJob job) {
        return this.timers.schedule(job::timeOut, job.task.timeout().toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * Resolves the payload (decrypted if it is encrypted) and runs the handler; a payload the
     * handler cannot read, or this node cannot decrypt, fails the attempt.
     */
    private Outcome perform(RunningJob job) {
        JavaType payloadType = this.payloadTypes.get(job.task());
        Object payload;
        try {
            payload = this.mapper.readValue(this.encryption.decrypt(job.task(), job.job.payload()), payloadType);
        }
        catch (PayloadEncryption.PayloadDecryptionException ex) {
            return Outcome.failed(job.lease(), ex.getMessage());
        }
        catch (JacksonException ex) {
            return Outcome.failed(job.lease(), "Payload cannot be read as " + payloadType.toCanonical() + ": "
                    + ex.getOriginalMessage());
        }
        if (payload == null) {
            return Outcome.failed(job.lease(), "Payload is null; the handler takes " + payloadType.toCanonical());
        }
        Observation observation = QueueObservations.execute(this.observations, job.task(), job.headers()).start();
        try (Observation.Scope scope = observation.openScope()) {
            run(job, payload, 0);
            observation.lowCardinalityKeyValue(QueueMeterNames.TAG_OUTCOME, "completed");
            return this.outcomes.succeeded(job.job);
        }
        catch (TaskSnoozedException snooze) {
            observation.lowCardinalityKeyValue(QueueMeterNames.TAG_OUTCOME, "snoozed");
            return job.isInterruptedByShutdown() ? Outcome.released(job.lease(), "Interrupted by the shutdown of node "
                    + this.nodeId) : Outcome.snoozed(job.lease(), snooze.delay());
        }
        catch (Throwable failure) {
            observation.error(failure);
            observation.lowCardinalityKeyValue(QueueMeterNames.TAG_OUTCOME, "failed");
            return failed(job, failure);
        }
        finally {
            observation.stop();
        }
    }

    /** Runs the interceptors from the given one on, then the handler. */
    private void run(RunningJob job, Object payload, int interceptor) throws Exception {
        if (interceptor == this.interceptors.size()) {
            job.task.handler().handle(payload, job);
            return;
        }
        this.interceptors.get(interceptor).aroundAttempt(job, payload, new Proceed(job, payload, interceptor));
    }

    /** The rest of an attempt after one interceptor: proceeds once. */
    private final class Proceed implements JobInterceptor.Attempt {

        private final RunningJob job;

        private final Object payload;

        private final int interceptor;

        private boolean proceeded;

        Proceed(RunningJob job, Object payload, int interceptor) {
            this.job = job;
            this.payload = payload;
            this.interceptor = interceptor;
        }

        @Override
        public void proceed() throws Exception {
            synchronized (this) {
                if (this.proceeded) {
                    throw new IllegalStateException("Interceptor " + JobExecutor.this.interceptors.get(this.interceptor)
                            + " proceeded twice with " + this.job + "; an attempt runs its handler once");
                }
                this.proceeded = true;
            }
            run(this.job, this.payload, this.interceptor + 1);
        }
    }

    /** The outcome of a handler that threw: why it ended decides whether the attempt counts. */
    private Outcome failed(RunningJob job, Throwable failure) {
        if (failure instanceof Error && !(failure instanceof AssertionError) && !(failure instanceof StackOverflowError)) {
            log.error("Handler of {} threw an Error", job, failure);
        }
        if (job.isInterruptedByShutdown()) {
            return Outcome.released(job.lease(), "Interrupted by the shutdown of node " + this.nodeId);
        }
        if (job.isTimedOut()) {
            return this.outcomes.failed(job.job, new TaskTimeoutException(job.task(), job.task.timeout()));
        }
        log.debug("Handler of {} failed", job, failure);
        return this.outcomes.failed(job.job, failure);
    }

    private void recordFinished(RunningJob job, Outcome outcome, long nanos) {
        Outcome written = (outcome != null ? outcome : Outcome.failed(job.lease(), "Handler did not finish"))
            .withProgress(job.progress());
        if (job.result() != null) {
            written = written.withResult(job.result());
        }
        if (job.reachedSteps()) {
            this.tasksWithSteps.add(job.task());
        }
        if (!this.tasksWithSteps.isEmpty() && this.tasksWithSteps.contains(job.task())) {
            written = written.withSteps();
        }
        AttemptLog attemptLog = job.attemptLog();
        if (attemptLog != null) {
            Instant startedAt = job.startedAt();
            written = written.withHistory(AttemptHistory.entry(new JobAttempt(job.attempt(), written.kind(), this.nodeId,
                    startedAt, startedAt.plusNanos(nanos), written.error(), attemptLog.lines(), attemptLog.dropped())));
        }
        try {
            this.events.executed(job.task(), written.kind(), Duration.ofNanos(nanos));
        }
        catch (RuntimeException ex) {
            log.warn("Queue event listener failed: {}", ex.toString());
        }
        if (written.kind() == AttemptResult.FAILED) {
            log.warn("{} failed for good: {}", job, firstLine(written.error()));
        }
        else if (written.kind() == AttemptResult.SNOOZED) {
            log.debug("{} snoozed for {} ms", job, written.retryDelay().toMillis());
        }
        else if (written.kind() == AttemptResult.RETRY) {
            log.info("{} failed, next attempt in {} ms: {}", job, written.retryDelay().toMillis(),
                    firstLine(written.error()));
        }
        this.recorder.finished(written);
    }

    /** The first line of a stored error (its stack trace stays with the job). */
    private static String firstLine(String error) {
        if (error == null) {
            return "";
        }
        int end = error.indexOf('\n');
        return end < 0 ? error : error.substring(0, end);
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
}
