package io.pgqueue.test;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import io.pgqueue.EnqueueResult;
import io.pgqueue.JobState;
import io.pgqueue.PgQueue;
import io.pgqueue.TaskContext;
import io.pgqueue.autoconfigure.QueueTaskBindings;
import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.FencedResult;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.internal.worker.AttemptOutcomes;
import io.pgqueue.worker.WorkerTask;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.core.JacksonException;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * Tests' handle on the queue ({@link AutoConfigurePgQueueTest} declares it as a bean): what was
 * enqueued, running the jobs on the test's thread, and the queue's time.
 * <pre>{@code
 * @SpringBootTest
 * @AutoConfigurePgQueueTest
 * class SignupTests {
 *
 *     @Autowired QueueTester queue;
 *
 *     @Test
 *     void aSignupSendsAWelcomeMail() {
 *         signups.register("ann@example.com");
 *         queue.assertEnqueued("send-mail", Mail.class, mail -> mail.to().equals("ann@example.com"));
 *         assertThat(queue.drain().completed()).isEqualTo(1);
 *     }
 * }
 * }</pre>
 * Queries run on the queue's DataSource through Spring's transaction support: inside a test's
 * transaction they see what the test wrote and has not committed. Not for concurrent use.
 */
public final class QueueTester {

    /** The most jobs one {@link #drain()} runs before it decides the jobs keep enqueuing each other. */
    public static final int DEFAULT_MAX_JOBS = 10_000;

    private static final String OWNER = "queue-test";

    private static final Duration LEASE = Duration.ofMinutes(10);

    private static final TypeReference<Map<String, String>> HEADERS = new TypeReference<>() {
    };

    private final PgQueue queue;

    private final QueueTaskBindings bindings;

    private final ObjectMapper mapper;

    private final QueueTestClock clock;

    private final JdbcTemplate jdbc;

    private final String schema;

    private final AttemptOutcomes outcomes;

    private final QueueTestMode mode;

    /** The database {@link AutoConfigurePgQueueTest} created, or {@code null} with {@code database = false}. */
    private final String database;

    /** Runs work with no transaction of the caller's bound to the thread. */
    private final TransactionTemplate outsideTransactions;

    /** Set while this thread drains, so that enqueues of the jobs it runs do not drain again (inline mode). */
    private final ThreadLocal<Boolean> draining = ThreadLocal.withInitial(() -> false);

    QueueTester(PgQueue queue, QueueTaskBindings bindings, ObjectMapper mapper, QueueTestClock clock, QueueTestMode mode,
            String database) {
        this.mode = mode;
        this.database = database;
        this.queue = queue;
        this.bindings = bindings;
        this.mapper = mapper;
        this.clock = clock;
        this.jdbc = new JdbcTemplate(queue.stores().dataSource());
        this.schema = queue.config().schema();
        this.outcomes = new AttemptOutcomes(bindings.registry());
        this.outsideTransactions = new TransactionTemplate(new DataSourceTransactionManager(queue.stores().dataSource()));
        this.outsideTransactions.setPropagationBehavior(TransactionDefinition.PROPAGATION_NOT_SUPPORTED);
    }

    /**
     * Lists the jobs of a task in the queue: waiting for other jobs, due, scheduled or running (not
     * finished ones), oldest first.
     * @param task the task
     * @return the jobs
     */
    public List<EnqueuedJob> enqueuedJobs(String task) {
        Duration offset = this.clock.offset();
        return this.jdbc.query("""
                SELECT id, task, state, priority, CAST(payload AS text) AS payload, CAST(headers AS text) AS headers,
                       schedule_time, dedup_key, attempt
                FROM %1$s.job WHERE task = ?
                UNION ALL
                SELECT id, task, 'WAITING', priority, CAST(payload AS text), CAST(headers AS text), NULL, NULL, 0
                FROM %1$s.job_waiting WHERE task = ?
                ORDER BY id
                """.formatted(this.schema), (rs, row) -> {
                    Timestamp scheduled = rs.getTimestamp("schedule_time");
                    return new EnqueuedJob(rs.getLong("id"), rs.getString("task"), JobState.valueOf(rs.getString("state")),
                            rs.getInt("priority"), this.mapper.readTree(rs.getString("payload")),
                            this.mapper.readValue(rs.getString("headers"), HEADERS),
                            scheduled == null ? null : scheduled.toInstant().plus(offset), rs.getString("dedup_key"),
                            rs.getInt("attempt"), this.mapper);
                }, task, task);
    }

    /**
     * Asserts that a job of the task is in the queue.
     * @param task the task
     * @return the oldest such job
     * @throws AssertionError if there is none
     */
    public EnqueuedJob assertEnqueued(String task) {
        return assertEnqueued(task, job -> true, "any payload");
    }

    /**
     * Asserts that a job of the task with this payload is in the queue: equal as JSON, serialized
     * with the application's mapper.
     * @param task the task
     * @param payload the payload
     * @return the oldest such job
     * @throws AssertionError if there is none
     */
    public EnqueuedJob assertEnqueued(String task, Object payload) {
        // Through text, as the queue stores payloads, so that numbers compare as the stored ones read back.
        JsonNode expected = this.mapper.readTree(this.mapper.writeValueAsString(payload));
        return assertEnqueued(task, job -> job.payload().equals(expected), "payload " + expected);
    }

    /**
     * Asserts that a job of the task whose payload, read as a type, matches is in the queue.
     * @param <P> the payload type
     * @param task the task
     * @param type the payload type
     * @param matcher the test on the payload
     * @return the oldest such job
     * @throws AssertionError if there is none
     */
    public <P> EnqueuedJob assertEnqueued(String task, Class<P> type, Predicate<? super P> matcher) {
        return assertEnqueued(task, job -> matcher.test(job.payload(type)), "a " + type.getSimpleName() + " payload that matches");
    }

    /**
     * Asserts that a job of the task matches a test on the whole job (payload, headers, priority,
     * schedule, dedup key, state).
     * @param task the task
     * @param matcher the test
     * @return the oldest such job
     * @throws AssertionError if there is none
     */
    public EnqueuedJob assertEnqueued(String task, Predicate<EnqueuedJob> matcher) {
        return assertEnqueued(task, matcher, "a job that matches");
    }

    private EnqueuedJob assertEnqueued(String task, Predicate<EnqueuedJob> matcher, String what) {
        List<EnqueuedJob> jobs = enqueuedJobs(task);
        return jobs.stream().filter(matcher).findFirst().orElseThrow(() -> new AssertionError("Expected a '" + task
                + "' job with " + what + " in the queue; " + describe(jobs)));
    }

    /**
     * Asserts that no job of the task is in the queue.
     * @param task the task
     * @throws AssertionError if there is one
     */
    public void refuteEnqueued(String task) {
        refuteEnqueued(task, job -> true);
    }

    /**
     * Asserts that no job of the task matching a test is in the queue.
     * @param task the task
     * @param matcher the test
     * @throws AssertionError if there is one
     */
    public void refuteEnqueued(String task, Predicate<EnqueuedJob> matcher) {
        List<EnqueuedJob> matching = enqueuedJobs(task).stream().filter(matcher).toList();
        if (!matching.isEmpty()) {
            throw new AssertionError("Expected no such '" + task + "' job in the queue; " + describe(matching));
        }
    }

    private static String describe(List<EnqueuedJob> jobs) {
        return jobs.isEmpty() ? "there is none" : "there are " + jobs.stream().map(EnqueuedJob::toString)
            .collect(Collectors.joining(", ", "[", "]"));
    }

    /**
     * Runs every due job, of every task, on this thread, and the due jobs they enqueue, until none is
     * due; jobs scheduled later (or retrying after a backoff) stay until {@link #advance(Duration)}.
     * @return what ran
     * @throws IllegalStateException past {@value #DEFAULT_MAX_JOBS} jobs (jobs that keep enqueuing jobs)
     */
    public DrainResult drain() {
        return drain(null, DEFAULT_MAX_JOBS);
    }

    /**
     * Runs every due job of one task on this thread, and its due jobs they enqueue, until none is due.
     * @param task the task
     * @return what ran
     * @throws IllegalStateException past {@value #DEFAULT_MAX_JOBS} jobs (jobs that keep enqueuing jobs)
     */
    public DrainResult drain(String task) {
        return drain(task, DEFAULT_MAX_JOBS);
    }

    /**
     * Runs due jobs on this thread until none is due or a limit is reached.
     * @param task the task, or {@code null} for every task
     * @param maxJobs the most jobs to run
     * @return what ran
     * @throws IllegalStateException if due jobs remain after {@code maxJobs}
     */
    public DrainResult drain(String task, int maxJobs) {
        List<ClaimLimit> limits = tasks(task).stream().map(name -> new ClaimLimit(name, 1)).toList();
        int[] counts = new int[4];
        boolean outer = !this.draining.get();
        this.draining.set(true);
        try {
            int ran = 0;
            while (true) {
                List<ClaimedJob> claimed = limits.isEmpty() ? List.of() : store().claim(limits, OWNER, JobState.RUNNING, LEASE);
                if (claimed.isEmpty()) {
                    return new DrainResult(counts[0], counts[1], counts[2], counts[3]);
                }
                int next = 0;
                try {
                    for (; next < claimed.size(); next++) {
                        if (ran == maxJobs) {
                            throw new IllegalStateException("drain ran " + maxJobs + " jobs and more are due: do jobs keep "
                                    + "enqueuing jobs? Use drain(task, maxJobs) to run a bounded number");
                        }
                        ran++;
                        count(counts, run(claimed.get(next)));
                    }
                }
                finally {
                    // Jobs claimed and not run go back as they were.
                    for (int k = next; k < claimed.size(); k++) {
                        store().record(List.of(Outcome.released(claimed.get(k).lease(), "the drain stopped")));
                    }
                }
            }
        }
        finally {
            if (outer) {
                this.draining.remove();
            }
        }
    }

    /**
     * Drains after an enqueue in {@link QueueTestMode#INLINE}, unless this thread is draining already:
     * outside the enqueue's transaction, which may have committed a moment ago with its connection
     * still bound to the thread, so that each job's writes commit on their own as a worker's do.
     */
    void drainInline() {
        if (!this.draining.get()) {
            this.outsideTransactions.executeWithoutResult(status -> drain());
        }
    }

    /**
     * Runs one job in the queue now, due or not (a scheduled job, one waiting for its retry).
     * @param jobId the job
     * @return the state it is in afterwards: COMPLETED, READY (to be retried), FAILED or CANCELLED
     * @throws IllegalArgumentException if no such job is READY
     */
    public JobState runJob(long jobId) {
        List<String> tasks = this.jdbc.queryForList("SELECT task FROM " + this.schema + ".job WHERE id = ? AND state = 'READY'",
                String.class, jobId);
        if (tasks.isEmpty()) {
            throw new IllegalArgumentException("Job " + jobId + " is not in the queue as READY");
        }
        worker(tasks.get(0));
        int moved = this.jdbc.update("UPDATE " + this.schema + ".job SET priority = 1000, schedule_time = '-infinity', "
                + "delay_tolerance_deadline = NULL WHERE id = ? AND state = 'READY'", jobId);
        if (moved == 0) {
            throw new IllegalArgumentException("Job " + jobId + " is not in the queue as READY");
        }
        String task = this.jdbc.queryForObject("SELECT task FROM " + this.schema + ".job WHERE id = ?", String.class, jobId);
        List<ClaimedJob> claimed = store().claim(List.of(new ClaimLimit(task, 1)), OWNER, JobState.RUNNING, LEASE);
        if (claimed.size() != 1 || claimed.get(0).id() != jobId) {
            claimed.forEach(job -> store().record(List.of(Outcome.released(job.lease(), "not the job asked for"))));
            throw new IllegalStateException("Another '" + task + "' job was claimed ahead of job " + jobId);
        }
        return run(claimed.get(0));
    }

    /**
     * Runs a task's handler on a payload directly, on this thread, without the queue: the handler's
     * exceptions reach the caller; a result it records is not kept (there is no job).
     * @param task the task
     * @param payload the payload, converted to the handler's payload type as it would be read from the queue
     * @throws Exception what the handler threw
     */
    public void runHandler(String task, Object payload) throws Exception {
        WorkerTask worker = worker(task);
        JavaType type = this.mapper.constructType(worker.payloadType());
        Object converted = this.mapper.readValue(this.mapper.writeValueAsString(payload), type);
        worker.handler().handle(converted, new TestTaskContext(null, task, 1, worker.definition().maxAttempts(), Map.of(),
                worker.timeout(), store()));
    }

    /**
     * Moves the queue's time forward: jobs scheduled within the duration (and retries whose backoff
     * ends within it) become due, and the recurring jobs whose slots it passes are enqueued (each
     * missed slot as the schedule's catch-up says). Nothing runs until {@link #drain()}, except in
     * {@link QueueTestMode#INLINE}, where the jobs that became due run before it returns.
     * @param duration how far, positive
     * @return the jobs of recurring schedules it enqueued
     * @throws IllegalArgumentException if the duration is zero or negative
     */
    public List<Long> advance(Duration duration) {
        if (duration.isNegative() || duration.isZero()) {
            throw new IllegalArgumentException("The queue's time only moves forward, by a positive duration; was " + duration);
        }
        this.clock.advance(duration);
        shiftJobs(duration, null);
        List<Long> fired = this.queue.schedules().fireDue().stream().map(EnqueueResult::jobId).toList();
        // A slot's job is due at the slot on the scheduler's clock, which runs ahead of the database's.
        shiftJobs(this.clock.offset(), fired);
        if (this.mode == QueueTestMode.INLINE) {
            drainInline();
        }
        return fired;
    }

    /** @return the queue's clock: the system clock plus what {@link #advance(Duration)} added */
    public QueueTestClock clock() {
        return this.clock;
    }

    /**
     * Empties the queue (jobs, workflows, runtime schedules, task pauses), resets its clock and puts
     * the configured schedules back at their next slot from now. {@link AutoConfigurePgQueueTest}
     * calls it before each test.
     */
    public void reset() {
        if (this.queue.shards().sharded()) {
            throw new IllegalStateException("The test kit runs an unsharded queue; this one has shards "
                    + this.queue.shards().all().stream().map(shard -> shard.name()).toList());
        }
        this.outsideTransactions.executeWithoutResult(status -> empty());
    }

    private void empty() {
        if (this.database != null) {
            String actual = this.jdbc.queryForObject("SELECT current_database()", String.class);
            if (!this.database.equals(actual)) {
                throw new IllegalStateException("The queue uses database '" + actual + "', not the test database '"
                        + this.database + "' @AutoConfigurePgQueueTest created (a DataSource of its own: "
                        + "@QueueDataSource, a DataSource bean, a service connection?); the test kit will not empty it. "
                        + "Point the queue at the test database, or use @AutoConfigurePgQueueTest(database = false) "
                        + "on a database you own for tests");
            }
        }
        this.clock.reset();
        this.jdbc.execute("TRUNCATE " + String.join(", ", List.of("job", "job_finished", "job_waiting", "job_dependency",
                "job_result", "workflow", "schedule", "task_control", "task_rate", "task_group_cursor").stream()
            .map(table -> this.schema + "." + table).toList()));
        this.queue.schedules().configure(this.bindings.schedules(), this.bindings.workerTasks().stream()
            .map(WorkerTask::name).toList());
    }

    private void shiftJobs(Duration by, List<Long> only) {
        if (only != null && only.isEmpty()) {
            return;
        }
        String restriction = only == null ? "" : " AND id = ANY(CAST(? AS bigint[]))";
        Object[] arguments = only == null ? new Object[] {by.toMillis(), by.toMillis()}
                : new Object[] {by.toMillis(), by.toMillis(), only.toArray(Long[]::new)};
        this.jdbc.update("UPDATE " + this.schema + ".job SET schedule_time = schedule_time - ? * interval '1 millisecond', "
                + "delay_tolerance_deadline = delay_tolerance_deadline - ? * interval '1 millisecond' "
                + "WHERE state = 'READY'" + restriction, arguments);
        if (only == null) {
            this.jdbc.update("UPDATE " + this.schema + ".job_waiting SET run_at = run_at - ? * interval '1 millisecond' "
                    + "WHERE run_at IS NOT NULL", by.toMillis());
        }
    }

    /** Runs a claimed job's handler and writes its outcome as a worker would. */
    private JobState run(ClaimedJob job) {
        WorkerTask worker = worker(job.task());
        Map<String, String> headers = job.headers() == null ? Map.of() : this.mapper.readValue(job.headers(), HEADERS);
        Outcome outcome;
        Object payload = null;
        try {
            payload = this.mapper.readValue(job.payload(), this.mapper.constructType(worker.payloadType()));
        }
        catch (JacksonException ex) {
            // As a worker does: a payload the handler cannot read fails for good.
            outcome = Outcome.failed(job.lease(), "Payload cannot be read as " + worker.payloadType().getTypeName() + ": "
                    + ex.getOriginalMessage());
            return store().record(List.of(outcome)).applied().getOrDefault(job.id(), JobState.FAILED);
        }
        try {
            worker.handler().handle(payload, new TestTaskContext(job.lease(), job.task(), job.attempt(), job.maxAttempts(),
                    headers, worker.timeout(), store()));
            outcome = this.outcomes.succeeded(job);
        }
        catch (Throwable ex) {
            outcome = this.outcomes.failed(job, ex);
        }
        FencedResult result = store().record(List.of(outcome));
        return result.applied().getOrDefault(job.id(), JobState.READY);
    }

    private static void count(int[] counts, JobState state) {
        switch (state) {
            case COMPLETED -> counts[0]++;
            case FAILED -> counts[2]++;
            case CANCELLED -> counts[3]++;
            default -> counts[1]++;
        }
    }

    private List<String> tasks(String task) {
        if (task == null) {
            return this.bindings.workerTasks().stream().map(WorkerTask::name).toList();
        }
        worker(task);
        return List.of(task);
    }

    private WorkerTask worker(String task) {
        Objects.requireNonNull(task, "task");
        return this.bindings.workerTasks().stream().filter(worker -> worker.name().equals(task)).findFirst()
            .orElseThrow(() -> new IllegalArgumentException("No handler runs task '" + task + "' in this application; "
                    + "its tasks are " + this.bindings.workerTasks().stream().map(WorkerTask::name).toList()));
    }

    private JobStore store() {
        return this.queue.jobs();
    }

    /** What a handler run by the tester sees. */
    private final class TestTaskContext implements TaskContext {

        /** The claim of the job it runs, or {@code null} for a handler run without a job. */
        private final Lease lease;
        private final long jobId;
        private final String task;
        private final int attempt;
        private final int maxAttempts;
        private final Map<String, String> headers;
        private final Instant deadline;
        private final JobStore store;
        private volatile String progress;

        TestTaskContext(Lease lease, String task, int attempt, int maxAttempts, Map<String, String> headers,
                Duration timeout, JobStore store) {
            this.lease = lease;
            this.jobId = lease == null ? -1 : lease.jobId();
            this.task = task;
            this.attempt = attempt;
            this.maxAttempts = maxAttempts;
            this.headers = headers;
            this.deadline = Instant.now().plus(timeout);
            this.store = store;
        }

        @Override
        public long jobId() {
            return this.jobId;
        }

        @Override
        public String task() {
            return this.task;
        }

        @Override
        public int attempt() {
            return this.attempt;
        }

        @Override
        public int maxAttempts() {
            return this.maxAttempts;
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
            return null;
        }

        @Override
        public boolean isCancellationRequested() {
            return false;
        }

        @Override
        public void progress(String progress) {
            this.progress = progress;
        }

        @Override
        public void recordResult(Object result) {
            String json = QueueTester.this.mapper.writeValueAsString(result);
            if (this.lease != null) {
                this.store.workflows().recordResult(this.lease, this.headers, json);
            }
        }

        @Override
        public <T> Optional<T> dependencyResult(String dependency, Class<T> type) {
            return this.store.workflows().dependencyResult(this.jobId, dependency,
                    json -> QueueTester.this.mapper.readValue(json, type));
        }

        @Override
        public <T> Map<String, T> dependencyResults(Class<T> type) {
            return this.store.workflows().dependencyResults(this.jobId,
                    json -> QueueTester.this.mapper.readValue(json, type));
        }
    }
}
