package io.pgqueue.test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import io.pgqueue.EnqueueResult;
import io.pgqueue.JobState;
import io.pgqueue.PgQueue;
import io.pgqueue.QueueTestSupport;
import io.pgqueue.SignalResult;
import io.pgqueue.autoconfigure.QueueTaskBindings;
import io.pgqueue.worker.WorkerTask;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.core.type.TypeReference;
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
 * Jobs run on the test's thread through the workers' own executor ({@link QueueTestSupport}), so a
 * handler under test gets its timeout, payload reading, observations, events, progress and results as
 * on a worker. Queries run on the queue's DataSource through Spring's transaction support: inside a
 * test's transaction they see what the test wrote and has not committed. Not for concurrent use.
 */
public final class QueueTester implements AutoCloseable {

    /** The most jobs one {@link #drain()} runs before it decides the jobs keep enqueuing each other. */
    public static final int DEFAULT_MAX_JOBS = 10_000;

    private static final TypeReference<Map<String, String>> HEADERS = new TypeReference<>() {
    };

    private final PgQueue queue;

    private final QueueTaskBindings bindings;

    private final ObjectMapper mapper;

    private final QueueTestClock clock;

    /** Created on first use: the handler beans are looked up then, as the workers look them up when they start. */
    private QueueTestSupport support;

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
        this.outsideTransactions = new TransactionTemplate(new DataSourceTransactionManager(queue.dataSource()));
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
        return support().activeJobs(task).stream().map(job -> new EnqueuedJob(job.id(), job.task(), job.state(),
                job.priority(), this.mapper.readTree(job.payload()), this.mapper.readValue(job.headers(), HEADERS),
                job.scheduleTime() == null ? null : job.scheduleTime().plus(offset), job.dedupKey(), job.attempt(),
                this.mapper)).toList();
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
        boolean outer = !this.draining.get();
        this.draining.set(true);
        try {
            return DrainResult.of(support().drain(task == null ? support().tasks() : List.of(task), maxJobs));
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
        return support().runJob(jobId);
    }

    /**
     * Runs a task's handler on a payload directly, on this thread, without the queue: the handler's
     * exceptions reach the caller; a result it records is not kept (there is no job).
     * @param task the task
     * @param payload the payload, converted to the handler's payload type as it would be read from the queue
     * @throws Exception what the handler threw
     */
    public void runHandler(String task, Object payload) throws Exception {
        support().runHandler(task, payload);
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
        support().shift(duration, null);
        List<Long> fired = this.queue.schedules().fireDue().stream().map(EnqueueResult::jobId).toList();
        // A slot's job is due at the slot on the scheduler's clock, which runs ahead of the database's.
        support().shift(this.clock.offset(), fired);
        if (this.mode == QueueTestMode.INLINE) {
            drainInline();
        }
        return fired;
    }

    /**
     * Sends a signal to a job's durable handler ({@link io.pgqueue.TaskContext#awaitSignal}), as
     * {@link io.pgqueue.QueueClient#signal} does: a job waiting for it becomes due. Nothing runs until
     * {@link #drain()}, except in {@link QueueTestMode#INLINE}, where it runs before this returns.
     * @param jobId the job
     * @param name the signal
     * @param payload its payload, or {@code null}
     * @return what became of the signal
     */
    public SignalResult signal(long jobId, String name, Object payload) {
        SignalResult result = this.queue.client().signal(jobId, name, payload);
        if (this.mode == QueueTestMode.INLINE) {
            drainInline();
        }
        return result;
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
        this.outsideTransactions.executeWithoutResult(status -> empty());
    }

    private void empty() {
        if (this.database != null) {
            String actual = support().databaseName();
            if (!this.database.equals(actual)) {
                throw new IllegalStateException("The queue uses database '" + actual + "', not the test database '"
                        + this.database + "' @AutoConfigurePgQueueTest created (a DataSource of its own: "
                        + "@QueueDataSource, a DataSource bean, a service connection?); the test kit will not empty it. "
                        + "Point the queue at the test database, or use @AutoConfigurePgQueueTest(database = false) "
                        + "on a database you own for tests");
            }
        }
        this.clock.reset();
        support().empty();
        support().configureSchedules(this.bindings.schedules(), this.bindings.workerTasks().stream()
            .map(WorkerTask::name).toList());
    }

    private synchronized QueueTestSupport support() {
        if (this.support == null) {
            this.support = this.queue.testSupport(this.bindings.workerTasks());
        }
        return this.support;
    }

    /** Stops the timer of the handlers' timeouts. */
    @Override
    public synchronized void close() {
        if (this.support != null) {
            this.support.close();
        }
    }
}
