package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import io.pgqueue.AttemptResult;
import io.pgqueue.JobInterceptor;
import io.pgqueue.PayloadEncryption;
import io.pgqueue.JobState;
import io.pgqueue.TaskRegistry;
import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.FencedResult;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.worker.WorkerTask;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.ObjectMapper;

/**
 * Runs due jobs on the caller's thread through the workers' {@link JobExecutor}, one at a time, and
 * writes each outcome before the next job is claimed: what a test kit's drain does (Oban's drainer,
 * River's test worker). The handler sees what a worker's handler sees (timeout, payload reading,
 * observations, events, progress, results); there are no pools, no buffers and no heartbeats, so
 * the lease is long.
 */
public final class Drainer implements AutoCloseable {

    /** The lease owner of the jobs a drain claims. */
    public static final String OWNER = "queue-test";

    private static final Duration LEASE = Duration.ofMinutes(10);

    private final JobStore store;

    private final Map<String, WorkerTask> tasks = new LinkedHashMap<>();

    private final ObjectMapper mapper;

    private final ScheduledExecutorService timers;

    private final JobExecutor executor;

    /** What the last outcome's write did; the drain runs on one thread at a time. */
    private FencedResult written = FencedResult.EMPTY;

    /** How the last attempt ended. */
    private AttemptResult outcome;

    /**
     * @param store the job store of the queue's (one) database
     * @param tasks the tasks whose jobs it runs
     * @param mapper reads payloads and writes results
     * @param telemetry where the executor reports attempts
     * @param interceptors what wraps each attempt, outermost first
     * @param encryption decrypts the payloads that are encrypted
     */
    public Drainer(JobStore store, Collection<WorkerTask> tasks, ObjectMapper mapper, QueueTelemetry telemetry,
            List<JobInterceptor> interceptors, PayloadEncryption encryption) {
        this.store = Objects.requireNonNull(store, "store");
        tasks.forEach(task -> this.tasks.put(task.name(), task));
        this.mapper = mapper;
        this.timers = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "pgqueue-drain-timeouts");
            thread.setDaemon(true);
            return thread;
        });
        AttemptOutcomes outcomes = new AttemptOutcomes(TaskRegistry.of(tasks.stream().map(WorkerTask::definition).toList()));
        this.executor = new JobExecutor(tasks, mapper, outcomes, new Recorder(), this.timers, telemetry, OWNER,
                interceptors, encryption);
    }

    /**
     * Lets the drained durable handlers spawn child jobs through an enqueuer.
     * @param spawner enqueues a child in its parent's partition
     */
    public void spawnChildrenWith(ChildSpawner spawner) {
        this.executor.spawnChildrenWith(spawner);
    }

    /** @return the names of the tasks it runs */
    public List<String> taskNames() {
        return List.copyOf(this.tasks.keySet());
    }

    /**
     * Runs due jobs of the tasks until none is due, the due jobs they enqueue included: claims at
     * most one per task at a time and runs them one after the other, each outcome written before the
     * next job runs. Jobs scheduled later (or retrying after a backoff) stay.
     * @param taskNames the tasks
     * @param maxJobs the most jobs to run
     * @return each job run, in order, with how its attempt ended and the state it is in then
     * @throws IllegalStateException if jobs are still due after {@code maxJobs} (they go back as they were)
     */
    public List<Ran> drain(Collection<String> taskNames, int maxJobs) {
        List<ClaimLimit> limits = taskNames.stream().map(name -> new ClaimLimit(name, 1)).toList();
        List<Ran> states = new ArrayList<>();
        while (!limits.isEmpty()) {
            List<ClaimedJob> claimed = this.store.claim(limits, OWNER, JobState.RUNNING, LEASE);
            if (claimed.isEmpty()) {
                break;
            }
            int next = 0;
            try {
                for (; next < claimed.size(); next++) {
                    if (states.size() == maxJobs) {
                        throw new IllegalStateException("drain ran " + maxJobs + " jobs and more are due: do jobs keep "
                                + "enqueuing jobs? Use drain(task, maxJobs) to run a bounded number");
                    }
                    states.add(run(claimed.get(next)));
                }
            }
            finally {
                // Jobs claimed and not run go back as they were.
                for (int k = next; k < claimed.size(); k++) {
                    this.store.record(List.of(Outcome.released(claimed.get(k).lease(), "the drain stopped")));
                }
            }
        }
        return states;
    }

    /**
     * Claims the next job of a task and runs it if it is the one asked for (promoted ahead of the
     * others before); another job claimed goes back as it was.
     * @param task the task
     * @param jobId the job
     * @return how its attempt ended and the state it is in then
     * @throws IllegalStateException if another job was claimed ahead of it
     */
    public Ran runNext(String task, long jobId) {
        List<ClaimedJob> claimed = this.store.claim(List.of(new ClaimLimit(task, 1)), OWNER, JobState.RUNNING, LEASE);
        if (claimed.size() != 1 || claimed.get(0).id() != jobId) {
            claimed.forEach(job -> this.store.record(List.of(Outcome.released(job.lease(), "not the job asked for"))));
            throw new IllegalStateException("Another '" + task + "' job was claimed ahead of job " + jobId);
        }
        return run(claimed.get(0));
    }

    /**
     * Runs a task's handler on a payload directly, on this thread, without a job: the handler's
     * exceptions reach the caller; a result it records is not kept, and it finds no dependency results.
     * @param task the task
     * @param payload the payload, converted to the handler's payload type as it would be read from the queue
     * @throws Exception what the handler threw
     */
    public void runHandler(String task, Object payload) throws Exception {
        WorkerTask worker = task(task);
        JavaType type = this.mapper.constructType(worker.payloadType());
        Object converted = this.mapper.readValue(this.mapper.writeValueAsString(payload), type);
        // No job holds lease 0 of id -1: the context's writes find nothing to write to.
        ClaimedJob none = new ClaimedJob(new Lease(-1, 0), task, "null", "{}", 0, 1, worker.definition().maxAttempts(),
                null, null, null, null, null);
        RunningJob context = new RunningJob(none, worker, this.store);
        context.attach(Thread.currentThread(), Map.of(), this.mapper, null);
        try {
            worker.handler().handle(converted, context);
        }
        finally {
            context.detach();
        }
    }

    /**
     * @param name a task name
     * @return its worker task
     * @throws IllegalArgumentException if it runs no such task
     */
    public WorkerTask task(String name) {
        WorkerTask task = this.tasks.get(Objects.requireNonNull(name, "task"));
        if (task == null) {
            throw new IllegalArgumentException("No handler runs task '" + name + "' in this application; its tasks are "
                    + this.tasks.keySet());
        }
        return task;
    }

    private Ran run(ClaimedJob job) {
        this.written = FencedResult.EMPTY;
        this.outcome = null;
        this.executor.execute(new RunningJob(job, task(job.task()), this.store));
        return new Ran(job.id(), this.outcome,
                this.written.applied().getOrDefault(job.id(), JobState.READY));
    }

    /** Stops the timeout timer. */
    @Override
    public void close() {
        this.timers.shutdownNow();
    }

    /** Writes each outcome at once: the next job is claimed only after it. */
    private final class Recorder implements JobExecutor.Recorder {

        @Override
        public void started(Lease lease) {
            // Claimed RUNNING: nothing to write.
        }

        @Override
        public void finished(Outcome outcome) {
            Drainer.this.outcome = outcome.kind();
            Drainer.this.written = Drainer.this.store.record(List.of(outcome));
        }
    }

    /**
     * A job the drain ran.
     *
     * @param jobId the job
     * @param outcome how its attempt ended
     * @param state the state it is in afterwards
     */
    public record Ran(long jobId, AttemptResult outcome, JobState state) {
    }
}
