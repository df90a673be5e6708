package io.pgqueue.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.pgqueue.AttemptResult;
import io.pgqueue.JobInterceptor;
import io.pgqueue.JobInterceptors;
import io.pgqueue.PayloadEncryption;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskHandler;
import io.pgqueue.TaskRegistry;
import io.pgqueue.TaskSnoozedException;
import io.pgqueue.TerminalTaskException;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.retry.RetryPolicy;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One attempt of one job, without a database: every way an attempt can end records exactly one
 * start and one outcome.
 */
class JobExecutorTests {

    record Push(String owner, String message) {
    }

    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();

    private final List<Lease> started = new CopyOnWriteArrayList<>();

    private final List<Outcome> finished = new CopyOnWriteArrayList<>();

    private final JobExecutor.Recorder recorder = new JobExecutor.Recorder() {
        @Override
        public void started(Lease lease) {
            JobExecutorTests.this.started.add(lease);
        }

        @Override
        public void finished(Outcome outcome) {
            JobExecutorTests.this.finished.add(outcome);
        }
    };

    @AfterEach
    void stopTimers() {
        this.timers.shutdownNow();
    }

    @Test
    void aHandlerThatReturnsCompletesTheJobWithItsProgress() {
        List<Push> received = new CopyOnWriteArrayList<>();
        RunningJob job = job(task((push, context) -> {
            received.add(push);
            context.progress("half");
        }, Duration.ofSeconds(5)), "{\"owner\":\"ann\",\"message\":\"hi\"}", "{\"trace\":\"t1\"}");

        outcome(job);

        assertThat(received).containsExactly(new Push("ann", "hi"));
        assertThat(this.started).containsExactly(job.lease());
        assertThat(this.finished).singleElement().satisfies(outcome -> {
            assertThat(outcome.kind()).isEqualTo(AttemptResult.COMPLETED);
            assertThat(outcome.progress()).isEqualTo("half");
        });
        assertThat(job.headers()).containsEntry("trace", "t1");
        assertThat(job.isRunning()).isFalse();
    }

    @Test
    void aHandlerThatThrowsIsRetriedByItsPolicy() {
        RunningJob job = job(task((push, context) -> {
            throw new IllegalStateException("gateway down");
        }, Duration.ofSeconds(5)), "{}", "{}");

        Outcome outcome = outcome(job);

        assertThat(outcome.kind()).isEqualTo(AttemptResult.RETRY);
        assertThat(outcome.error()).contains("gateway down");
    }

    @Test
    void aTerminalExceptionFailsTheJobForGood() {
        RunningJob job = job(task((push, context) -> {
            throw new TerminalTaskException("no such owner");
        }, Duration.ofSeconds(5)), "{}", "{}");

        assertThat(outcome(job).kind()).isEqualTo(AttemptResult.FAILED);
    }

    @Test
    void aPayloadTheHandlerCannotReadFailsWithoutRunningIt() {
        List<Push> received = new CopyOnWriteArrayList<>();
        RunningJob job = job(task((push, context) -> received.add(push), Duration.ofSeconds(5)), "[1, 2]", "{}");

        Outcome outcome = outcome(job);

        assertThat(received).isEmpty();
        assertThat(outcome.kind()).isEqualTo(AttemptResult.FAILED);
        assertThat(outcome.error()).contains("Payload cannot be read as");
    }

    @Test
    void aNullPayloadFailsForGoodWithoutRunningTheHandler() {
        List<Push> received = new CopyOnWriteArrayList<>();
        RunningJob job = job(task((push, context) -> received.add(push), Duration.ofSeconds(5)), "null", "{}");

        Outcome outcome = outcome(job);

        assertThat(received).isEmpty();
        assertThat(outcome.kind()).isEqualTo(AttemptResult.FAILED);
        assertThat(outcome.error()).contains("Payload is null");
    }

    @Test
    void aHandlerPastItsTimeoutIsInterruptedAndTheAttemptFails() {
        RunningJob job = job(task((push, context) -> Thread.sleep(10_000), Duration.ofMillis(50)), "{}", "{}");

        Outcome outcome = outcome(job);

        assertThat(job.isTimedOut()).isTrue();
        assertThat(outcome.kind()).isEqualTo(AttemptResult.RETRY);
        assertThat(outcome.error()).contains("TaskTimeoutException");
        assertThat(Thread.currentThread().isInterrupted()).as("interrupt left on the thread").isFalse();
    }

    @Test
    void aHandlerInterruptedByTheShutdownIsReleasedWithoutUsingAnAttempt() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        RunningJob job = job(task((push, context) -> {
            running.countDown();
            Thread.sleep(10_000);
        }, Duration.ofSeconds(30)), "{}", "{}");

        Thread thread = new Thread(() -> executor().execute(job));
        thread.start();
        assertThat(running.await(5, TimeUnit.SECONDS)).isTrue();
        job.interruptForShutdown();
        thread.join(5000);

        assertThat(this.finished).singleElement().satisfies(outcome -> {
            assertThat(outcome.kind()).isEqualTo(AttemptResult.RELEASED);
            assertThat(outcome.error()).contains("node-1");
        });
    }

    @Test
    void interceptorsWrapTheHandlerInTheirOrderAndSeeItsPayload() {
        List<String> calls = new CopyOnWriteArrayList<>();
        this.interceptors = List.of(recording("outer", calls), recording("inner", calls));
        RunningJob job = job(task((push, context) -> calls.add("handler " + push.owner()), Duration.ofSeconds(5)),
                "{\"owner\":\"ann\"}", "{}");

        assertThat(outcome(job).kind()).isEqualTo(AttemptResult.COMPLETED);
        assertThat(calls).containsExactly("outer before job 7 ann", "inner before job 7 ann", "handler ann", "inner after",
                "outer after");
    }

    @Test
    void whatAnInterceptorThrowsEndsTheAttemptAsTheHandlersFailureWould() {
        List<Push> received = new CopyOnWriteArrayList<>();
        WorkerTask task = task((push, context) -> received.add(push), Duration.ofSeconds(5));

        this.interceptors = List.of(throwing(new IllegalStateException("tenant unknown")));
        Outcome retried = outcome(job(task, "{}", "{}"));
        assertThat(retried.kind()).isEqualTo(AttemptResult.RETRY);
        assertThat(retried.error()).contains("tenant unknown");

        this.finished.clear();
        this.interceptors = List.of(throwing(new TerminalTaskException("tenant deleted")));
        assertThat(outcome(job(task, "{}", "{}")).kind()).isEqualTo(AttemptResult.FAILED);

        this.finished.clear();
        this.interceptors = List.of(throwing(new TaskSnoozedException(Duration.ofMinutes(5))));
        Outcome snoozed = outcome(job(task, "{}", "{}"));
        assertThat(snoozed.kind()).isEqualTo(AttemptResult.SNOOZED);
        assertThat(snoozed.retryDelay()).isEqualTo(Duration.ofMinutes(5));
        assertThat(received).as("the handler never ran").isEmpty();
    }

    @Test
    void anInterceptorThatDoesNotProceedCompletesTheAttemptWithoutTheHandler() {
        List<Push> received = new CopyOnWriteArrayList<>();
        this.interceptors = List.of(new JobInterceptor() {
            @Override
            public void aroundAttempt(TaskContext context, Object payload, Attempt attempt) {
                // Skips the handler.
            }
        });

        assertThat(outcome(job(task((push, context) -> received.add(push), Duration.ofSeconds(5)), "{}", "{}")).kind())
            .isEqualTo(AttemptResult.COMPLETED);
        assertThat(received).isEmpty();
    }

    @Test
    void anInterceptorThatProceedsTwiceRunsTheHandlerOnceAndFailsTheAttempt() {
        List<Push> received = new CopyOnWriteArrayList<>();
        this.interceptors = List.of(new JobInterceptor() {
            @Override
            public void aroundAttempt(TaskContext context, Object payload, Attempt attempt) throws Exception {
                attempt.proceed();
                attempt.proceed();
            }
        });

        Outcome outcome = outcome(job(task((push, context) -> received.add(push), Duration.ofSeconds(5)), "{}", "{}"));

        assertThat(received).hasSize(1);
        assertThat(outcome.kind()).isEqualTo(AttemptResult.RETRY);
        assertThat(outcome.error()).contains("proceeded twice");
    }

    @Test
    void theLogContextAndCarriedMdcEntriesAreSetWhileTheHandlerRunsAndPutBackAfter() {
        List<String> seen = new CopyOnWriteArrayList<>();
        this.interceptors = List.of(JobInterceptors.logContext(), JobInterceptors.carryMdc(List.of("requestId")));
        MDC.put(JobInterceptors.MDC_TASK, "the caller's");
        try {
            RunningJob job = job(task((push, context) -> seen.add(MDC.get(JobInterceptors.MDC_JOB_ID) + " "
                    + MDC.get(JobInterceptors.MDC_TASK) + " " + MDC.get(JobInterceptors.MDC_ATTEMPT) + " "
                    + MDC.get("requestId")), Duration.ofSeconds(5)), "{}", "{\"mdc.requestId\":\"r-42\"}");

            assertThat(outcome(job).kind()).isEqualTo(AttemptResult.COMPLETED);
            assertThat(seen).containsExactly("7 push 1 r-42");
            assertThat(MDC.get(JobInterceptors.MDC_TASK)).isEqualTo("the caller's");
            assertThat(MDC.get(JobInterceptors.MDC_JOB_ID)).isNull();
            assertThat(MDC.get("requestId")).isNull();
        }
        finally {
            MDC.clear();
        }
    }

    private static JobInterceptor recording(String name, List<String> calls) {
        return new JobInterceptor() {
            @Override
            public void aroundAttempt(TaskContext context, Object payload, Attempt attempt) throws Exception {
                calls.add(name + " before job " + context.jobId() + " " + ((Push) payload).owner());
                attempt.proceed();
                calls.add(name + " after");
            }
        };
    }

    private static JobInterceptor throwing(RuntimeException failure) {
        return new JobInterceptor() {
            @Override
            public void aroundAttempt(TaskContext context, Object payload, Attempt attempt) {
                throw failure;
            }
        };
    }

    private Outcome outcome(RunningJob job) {
        long nanos = executor().execute(job);
        assertThat(nanos).isPositive();
        assertThat(this.finished).hasSize(1);
        return this.finished.get(0);
    }

    private static WorkerTask task(TaskHandler<Push> handler, Duration timeout) {
        return WorkerTask.of(TaskDefinition.builder("push").retryPolicy(RetryPolicy.fixed(Duration.ofSeconds(1))).build(),
                handler, Push.class, 1, timeout, "default");
    }

    private RunningJob job(WorkerTask task, String payload, String headers) {
        this.task = task;
        Instant now = Instant.now();
        ClaimedJob claimed = new ClaimedJob(new Lease(7, 1), "push", payload, headers, 0, 1, 5, now, null, now, now,
                now.plusSeconds(30));
        return new RunningJob(claimed, task, null, null);
    }

    private WorkerTask task;

    private List<JobInterceptor> interceptors = List.of();

    private JobExecutor executor() {
        return new JobExecutor(List.of(this.task), JsonMapper.builder().build(),
                new AttemptOutcomes(TaskRegistry.of(List.of(this.task.definition()))), this.recorder, this.timers,
                QueueTelemetry.NONE, "node-1", this.interceptors, PayloadEncryption.NONE);
    }
}
