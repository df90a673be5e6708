package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import io.pgqueue.Batch;
import io.pgqueue.CancelResult;
import io.pgqueue.DependencyFailure;
import io.pgqueue.EnqueueOptions;
import io.pgqueue.EnqueuedWorkflow;
import io.pgqueue.InvalidJobException;
import io.pgqueue.JobRequest;
import io.pgqueue.JobNotFinishedException;
import io.pgqueue.JobState;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueDefaults;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskHandler;
import io.pgqueue.TerminalTaskException;
import io.pgqueue.Workflow;
import io.pgqueue.WorkflowInfo;
import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.testing.TestQueue;
import io.pgqueue.testing.TestWorkers;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static io.pgqueue.testing.TestWorkers.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Jobs that run after others: workflows, batches and {@link EnqueueOptions#withDependsOn}, on real
 * nodes and, for the races, on many threads writing outcomes at once.
 */
@Order(1)
class WorkflowTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass().withPoolSize(24);

    @RegisterExtension
    final TestWorkers nodes = TestWorkers.on(queue);

    record Step(String name, int value) {
    }

    @Test
    void aDiamondRunsEachStepAfterItsDependenciesAndTheLastReadsTheirResults() {
        Queue<String> events = new ConcurrentLinkedQueue<>();
        Map<String, Object> seen = new ConcurrentHashMap<>();
        WorkerTask task = task("step", 4, (payload, context) -> {
            events.add("start " + payload.name());
            if (payload.name().equals("d")) {
                // Results of different types: each is read as its own.
                seen.put("b", context.dependencyResult("b", String.class).orElseThrow());
                seen.put("c", context.dependencyResult("c", Integer.class).orElseThrow());
                seen.put("all", context.dependencyResults(Object.class));
                seen.put("dependencies", context.dependencies());
            }
            else if (payload.name().equals("b")) {
                Thread.sleep(200);
                context.recordResult("b" + payload.value() * 10);
            }
            else {
                Thread.sleep(20);
                context.recordResult(payload.value() * 10);
            }
            events.add("end " + payload.name());
        });
        QueueClient client = nodes.client(task);
        EnqueuedWorkflow workflow = client.workflow("diamond")
            .add("a", "step", new Step("a", 1))
            .add("b", "step", new Step("b", 2), Workflow.after("a"))
            .add("c", "step", new Step("c", 3), Workflow.after("a"))
            .add("d", "step", new Step("d", 4), Workflow.after("b", "c"))
            .enqueue();
        assertThat(queue.state(workflow.jobId("d"))).isEqualTo(JobState.WAITING);
        assertThat(queue.activeJobs()).as("only the first step is claimable").isEqualTo(1);
        assertThat(workflow(workflow.id()).orElseThrow().steps()).filteredOn(step -> step.step().equals("d"))
            .singleElement().extracting(WorkflowInfo.Step::waitsFor)
            .isEqualTo(List.of(workflow.jobId("b"), workflow.jobId("c")));

        nodes.start(settings("node-a").build(), task);
        await().atMost(Duration.ofSeconds(20)).until(() -> workflow(workflow.id()).orElseThrow().state()
            .equals("COMPLETED"));

        List<String> order = List.copyOf(events);
        assertThat(order.indexOf("start b")).isGreaterThan(order.indexOf("end a"));
        assertThat(order.indexOf("start c")).isGreaterThan(order.indexOf("end a"));
        assertThat(order.indexOf("start d")).isGreaterThan(order.indexOf("end b")).isGreaterThan(order.indexOf("end c"));
        assertThat(seen).containsEntry("b", "b20").containsEntry("c", 30)
            .containsEntry("all", Map.of("b", "b20", "c", 30))
            .containsEntry("dependencies", new TaskContext.Dependencies(2, 0));
        WorkflowInfo info = workflow(workflow.id()).orElseThrow();
        assertThat(info.completed()).isEqualTo(4);
        assertThat(info.finishedAt()).isNotNull();
        assertThat(info.steps()).extracting(WorkflowInfo.Step::step, WorkflowInfo.Step::state)
            .containsExactly(org.assertj.core.groups.Tuple.tuple("a", JobState.COMPLETED),
                    org.assertj.core.groups.Tuple.tuple("b", JobState.COMPLETED),
                    org.assertj.core.groups.Tuple.tuple("c", JobState.COMPLETED),
                    org.assertj.core.groups.Tuple.tuple("d", JobState.COMPLETED));
        assertThat(info.steps()).as("a step's dependencies are dropped once it ended").allSatisfy(step ->
                assertThat(step.waitsFor()).isEmpty());
        assertThat(info.steps()).as("the graph as declared, kept after it ended").extracting(WorkflowInfo.Step::after)
            .containsExactly(List.of(), List.of("a"), List.of("a"), List.of("b", "c"));
        assertThat(info.steps()).allSatisfy(step -> {
            assertThat(step.startedAt()).isAfterOrEqualTo(step.createdAt());
            assertThat(step.finishedAt()).isAfterOrEqualTo(step.startedAt());
        });
        assertThat(info.steps().get(3).startedAt()).as("d after b's 200 ms").isAfter(info.steps().get(1).finishedAt()
            .minusMillis(1));
        assertThat(queue.jdbc().queryForObject("SELECT workflows FROM " + queue.config().schema()
                + ".workflow_total WHERE state = 'COMPLETED'", Long.class)).isEqualTo(1);
    }

    @Test
    void aStepWhoseDependencyFailedIsCancelledAndSoAreTheStepsAfterIt() {
        WorkerTask task = task("step", 2, (payload, context) -> {
            if (payload.name().equals("b")) {
                throw new TerminalTaskException("b cannot go on");
            }
        });
        EnqueuedWorkflow workflow = nodes.client(task).workflow("chain")
            .add("a", "step", new Step("a", 1))
            .add("b", "step", new Step("b", 2), Workflow.after("a"))
            .add("c", "step", new Step("c", 3), Workflow.after("b"))
            .add("d", "step", new Step("d", 4), Workflow.after("c"))
            .add("e", "step", new Step("e", 5), Workflow.after("a"))
            .enqueue();
        nodes.start(settings("node-a").build(), task);

        await().atMost(Duration.ofSeconds(20)).until(() -> workflow(workflow.id()).orElseThrow().state()
            .equals("FAILED"));
        WorkflowInfo info = workflow(workflow.id()).orElseThrow();
        assertThat(info.completed()).isEqualTo(2);
        assertThat(info.failed()).isEqualTo(1);
        assertThat(info.cancelled()).isEqualTo(2);
        assertThat(queue.state(workflow.jobId("c"))).isEqualTo(JobState.CANCELLED);
        assertThat(queue.job(workflow.jobId("c")).lastError()).contains("dependency " + workflow.jobId("b"), "FAILED");
        assertThat(queue.state(workflow.jobId("d"))).isEqualTo(JobState.CANCELLED);
        assertThat(queue.state(workflow.jobId("e"))).as("a branch that does not need b runs").isEqualTo(JobState.COMPLETED);
    }

    @Test
    void aBatchCallbackRunsOnceAfterEveryJobEndedWithTheCounts() {
        List<TaskContext.Dependencies> callbacks = Collections.synchronizedList(new ArrayList<>());
        WorkerTask task = task("item", 4, (payload, context) -> {
            if (payload.value() % 5 == 0) {
                throw new TerminalTaskException("item " + payload.value() + " is bad");
            }
        });
        WorkerTask report = task("report", 1, (payload, context) -> callbacks.add(context.dependencies()));
        Batch batch = nodes.client(task, report).batch("import");
        IntStream.range(1, 51).forEach(i -> batch.add("item", new Step("item", i)));
        EnqueuedWorkflow enqueued = batch.onFinish("report", new Step("report", 0)).enqueue();
        nodes.start(settings("node-a").build(), task, report);

        await().atMost(Duration.ofSeconds(20)).until(() -> callbacks.size() == 1);
        assertThat(callbacks.get(0)).isEqualTo(new TaskContext.Dependencies(40, 10));
        await().atMost(Duration.ofSeconds(5)).until(() -> workflow(enqueued.id()).orElseThrow().state()
            .equals("FAILED"));
        assertThat(workflow(enqueued.id()).orElseThrow().completed()).as("40 items and the callback")
            .isEqualTo(41);
        assertThat(callbacks).hasSize(1);
    }

    @Test
    void runAnywayReleasesTheDependentWhenADependencyWasCancelled() {
        WorkerTask task = task("step", 1, (payload, context) -> { });
        QueueClient client = nodes.client(task);
        EnqueuedWorkflow workflow = client.workflow("tolerant").onDependencyFailure(DependencyFailure.RUN)
            .add("a", "step", new Step("a", 1))
            .add("b", "step", new Step("b", 2), Workflow.after("a"))
            .enqueue();
        assertThat(client.cancel(workflow.jobId("a"))).isEqualTo(CancelResult.CANCELLED);

        assertThat(queue.state(workflow.jobId("b"))).isEqualTo(JobState.READY);
        assertThat(queue.job(workflow.jobId("b")).headers()).contains("\"pgqueue.dependencies.failed\": \"1\"");
    }

    @Test
    void aWaitingJobCanBeCancelledAndItsDependentsLearnOfIt() {
        WorkerTask task = task("step", 1, (payload, context) -> { });
        QueueClient client = nodes.client(task);
        EnqueuedWorkflow workflow = client.workflow("cancelled")
            .add("a", "step", new Step("a", 1))
            .add("b", "step", new Step("b", 2), Workflow.after("a"))
            .add("c", "step", new Step("c", 3), Workflow.after("b"))
            .enqueue();

        assertThat(client.cancel(workflow.jobId("b"))).isEqualTo(CancelResult.CANCELLED);

        assertThat(queue.state(workflow.jobId("b"))).isEqualTo(JobState.CANCELLED);
        assertThat(queue.state(workflow.jobId("c"))).isEqualTo(JobState.CANCELLED);
        assertThat(queue.state(workflow.jobId("a"))).isEqualTo(JobState.READY);
        assertThat(client.cancel(workflow.jobId("c"))).isEqualTo(CancelResult.ALREADY_FINISHED);
    }

    @Test
    void dependsOnWaitsForJobsInTheQueueAndAppliesThoseThatAlreadyEnded() {
        WorkerTask task = task("step", 1, (payload, context) -> { });
        QueueClient client = nodes.client(task);
        long running = client.enqueue("step", new Step("running", 1)).jobId();
        long completed = client.enqueue("step", new Step("completed", 2)).jobId();
        long failed = client.enqueue("step", new Step("failed", 3)).jobId();
        List<ClaimedJob> claimed = queue.claim("step", 3);
        queue.store().record(List.of(Outcome.completed(lease(claimed, completed)),
                Outcome.failed(lease(claimed, failed), "no")));

        long afterRunning = client.enqueue(JobRequest.of("step", new Step("x", 0),
                EnqueueOptions.defaults().withDependsOn(running, completed))).jobId();
        long afterCompleted = client.enqueue(JobRequest.of("step", new Step("y", 0),
                EnqueueOptions.defaults().withDependsOn(completed))).jobId();
        long afterFailed = client.enqueue(JobRequest.of("step", new Step("z", 0),
                EnqueueOptions.defaults().withDependsOn(failed))).jobId();
        long afterFailedAnyway = client.enqueue(JobRequest.of("step", new Step("w", 0),
                EnqueueOptions.defaults().withDependsOn(failed).withDependencyFailure(DependencyFailure.RUN))).jobId();

        assertThat(queue.state(afterRunning)).isEqualTo(JobState.WAITING);
        assertThat(queue.state(afterCompleted)).as("its dependency completed already").isEqualTo(JobState.READY);
        assertThat(queue.state(afterFailed)).isEqualTo(JobState.CANCELLED);
        assertThat(queue.state(afterFailedAnyway)).isEqualTo(JobState.READY);

        queue.store().record(List.of(Outcome.completed(lease(claimed, running))));
        assertThat(queue.state(afterRunning)).isEqualTo(JobState.READY);
    }

    @Test
    void aStepsDelayCountsFromItsReleaseAndRepeatedNamesCountOnce() {
        WorkerTask task = task("step", 1, (payload, context) -> { });
        QueueClient client = nodes.client(task);
        EnqueuedWorkflow workflow = client.workflow("delayed")
            .add("a", "step", new Step("a", 1))
            .add("b", JobRequest.of("step", new Step("b", 2), EnqueueOptions.defaults().withDelay(Duration.ofMinutes(10))),
                    Workflow.after("a", "a"))
            .enqueue();
        List<ClaimedJob> claimed = queue.claim("step", 10);
        assertThat(claimed).hasSize(1);

        queue.store().record(List.of(Outcome.completed(claimed.get(0).lease())));

        assertThat(queue.state(workflow.jobId("b"))).isEqualTo(JobState.READY);
        assertThat(queue.secondsUntilDue(workflow.jobId("b"))).as("due 10 minutes after its release")
            .isBetween(590.0, 600.0);
        assertThat(queue.claim("step", 10)).isEmpty();
    }

    @Test
    void headersOnlyWorkflowsSetAreRejected() {
        WorkerTask task = task("step", 1, (payload, context) -> { });
        QueueClient client = nodes.client(task);

        assertThatThrownBy(() -> client.enqueue(JobRequest.of("step", new Step("x", 0),
                EnqueueOptions.defaults().withHeader(QueueDefaults.WORKFLOW_HEADER, "12"))))
            .isInstanceOf(InvalidJobException.class).hasMessageContaining("'pgqueue.workflow'");
        assertThatThrownBy(() -> client.workflow("w").add("a", JobRequest.of("step", new Step("x", 0),
                EnqueueOptions.defaults().withHeader(QueueDefaults.DEPENDENCIES_FAILED_HEADER, "0")), null).enqueue())
            .isInstanceOf(InvalidJobException.class).hasMessageContaining("'pgqueue.dependencies.failed'");
        Batch batch = client.batch("once").add("step", new Step("x", 0)).onFinish("step", new Step("y", 0));
        batch.enqueue();
        assertThatThrownBy(batch::enqueue).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void anUnknownDependencyIsRejectedAndNothingIsWritten() {
        WorkerTask task = task("step", 1, (payload, context) -> { });
        QueueClient client = nodes.client(task);
        long total = queue.totalJobs();

        assertThatThrownBy(() -> client.enqueue(JobRequest.of("step", new Step("x", 0),
                EnqueueOptions.defaults().withDependsOn(987_654_321L))))
            .isInstanceOf(InvalidJobException.class).hasMessageContaining("[987654321]");
        assertThatThrownBy(() -> client.workflow("bad").add("a", "step", new Step("a", 1))
            .add("b", "step", new Step("b", 1), Workflow.after("missing")))
            .isInstanceOf(InvalidJobException.class).hasMessageContaining("'missing'");
        assertThatThrownBy(() -> client.workflow("bad").add("a", JobRequest.of("step", new Step("a", 1),
                EnqueueOptions.defaults().withDedupKey("k")), null).enqueue())
            .isInstanceOf(InvalidJobException.class).hasMessageContaining("dedup key");
        assertThat(queue.totalJobs()).isEqualTo(total);
        assertThat(waitingJobs()).isZero();
    }

    @Test
    void aWorkflowJoinsTheCallersTransaction() {
        WorkerTask task = task("step", 1, (payload, context) -> { });
        QueueClient client = nodes.client(task);
        TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(queue.dataSource()));

        transactions.executeWithoutResult(status -> {
            client.workflow("rolled-back").add("a", "step", new Step("a", 1))
                .add("b", "step", new Step("b", 2), Workflow.after("a")).enqueue();
            status.setRollbackOnly();
        });
        assertThat(queue.totalJobs()).isZero();
        assertThat(waitingJobs()).isZero();
        assertThat(queue.store().workflows().list(10)).isEmpty();

        EnqueuedWorkflow kept = transactions.execute(status -> client.workflow("kept").add("a", "step", new Step("a", 1))
            .add("b", "step", new Step("b", 2), Workflow.after("a")).enqueue());
        assertThat(queue.state(kept.jobId("a"))).isEqualTo(JobState.READY);
        assertThat(queue.state(kept.jobId("b"))).isEqualTo(JobState.WAITING);
    }

    /**
     * Pairs of dependencies ended by two transactions at the same moment: the dependent of each pair
     * is released exactly once (a second release would violate the job table's primary key and fail
     * the write; none would leave it waiting).
     */
    @Test
    void twoDependenciesEndingAtOnceReleaseTheirDependentExactlyOnce() throws Exception {
        int pairs = 300;
        WorkerTask task = task("step", 1, (payload, context) -> { });
        QueueClient client = nodes.client(task);
        List<long[]> dependencies = new ArrayList<>();
        List<Long> dependents = new ArrayList<>();
        for (int i = 0; i < pairs; i++) {
            EnqueuedWorkflow workflow = client.workflow("pair-" + i)
                .add("left", "step", new Step("left", i))
                .add("right", "step", new Step("right", i))
                .add("join", "step", new Step("join", i), Workflow.after("left", "right"))
                .enqueue();
            dependencies.add(new long[] {workflow.jobId("left"), workflow.jobId("right")});
            dependents.add(workflow.jobId("join"));
        }
        Map<Long, ClaimedJob> claimed = new ConcurrentHashMap<>();
        queue.store().claim(List.of(new ClaimLimit("step", pairs * 2)), "racer", JobState.RUNNING, TestQueue.LEASE)
            .forEach(job -> claimed.put(job.lease().jobId(), job));
        assertThat(claimed).hasSize(pairs * 2);

        ExecutorService threads = Executors.newFixedThreadPool(2);
        Queue<Throwable> errors = new ConcurrentLinkedQueue<>();
        for (long[] pair : dependencies) {
            CyclicBarrier together = new CyclicBarrier(2);
            List<Future<?>> ends = new ArrayList<>();
            for (long id : pair) {
                ends.add(threads.submit(() -> {
                    together.await();
                    queue.store().record(List.of(Outcome.completed(claimed.get(id).lease())));
                    return null;
                }));
            }
            for (Future<?> end : ends) {
                try {
                    end.get();
                }
                catch (Exception ex) {
                    errors.add(ex);
                }
            }
        }
        threads.shutdown();

        assertThat(errors).isEmpty();
        assertThat(dependents).allSatisfy(id -> assertThat(queue.state(id)).isEqualTo(JobState.READY));
        assertThat(waitingJobs()).isZero();
        assertThat(queue.activeJobs()).isEqualTo(pairs);
    }

    /**
     * Many threads end batches of jobs whose dependents overlap in every order: the ends are applied
     * with rows locked in one order, so no transaction deadlocks, and every dependent is released
     * once all of its dependencies ended.
     */
    @Test
    void batchesEndingDependenciesOfSharedDependentsNeitherDeadlockNorLoseARelease() throws Exception {
        int roots = 400;
        int joins = 40;
        WorkerTask task = task("step", 1, (payload, context) -> { });
        QueueClient client = nodes.client(task);
        Workflow workflow = client.workflow("mesh");
        for (int i = 0; i < roots; i++) {
            workflow.add("r" + i, "step", new Step("r", i));
        }
        for (int j = 0; j < joins; j++) {
            // Each join waits for 20 roots spread over the whole range.
            int join = j;
            String[] after = IntStream.range(0, 20).mapToObj(k -> "r" + ((join * 7 + k * 19) % roots)).distinct()
                .toArray(String[]::new);
            workflow.add("j" + j, "step", new Step("j", j), Workflow.after(after));
        }
        EnqueuedWorkflow enqueued = workflow.enqueue();
        List<ClaimedJob> claimed = new ArrayList<>(queue.store().claim(List.of(new ClaimLimit("step", roots)), "racer",
                JobState.RUNNING, TestQueue.LEASE));
        assertThat(claimed).hasSize(roots);
        Collections.shuffle(claimed, new java.util.Random(7));

        int threadCount = 8;
        ExecutorService threads = Executors.newFixedThreadPool(threadCount);
        CyclicBarrier together = new CyclicBarrier(threadCount);
        List<Future<?>> ends = new ArrayList<>();
        for (int t = 0; t < threadCount; t++) {
            List<ClaimedJob> mine = claimed.subList(t * roots / threadCount, (t + 1) * roots / threadCount);
            ends.add(threads.submit(() -> {
                together.await();
                for (int from = 0; from < mine.size(); from += 10) {
                    queue.store().record(mine.subList(from, Math.min(mine.size(), from + 10)).stream()
                        .map(job -> Outcome.completed(job.lease())).toList());
                }
                return null;
            }));
        }
        for (Future<?> end : ends) {
            end.get();
        }
        threads.shutdown();

        assertThat(waitingJobs()).isZero();
        assertThat(IntStream.range(0, joins).mapToObj(j -> queue.state(enqueued.jobId("j" + j))))
            .allMatch(state -> state == JobState.READY);
        assertThat(workflow(enqueued.id()).orElseThrow().completed()).isEqualTo(roots);
    }

    @Test
    void aThousandJobFanOutWithOneFanInOnTwoNodes() {
        int width = 1_000;
        AtomicInteger sum = new AtomicInteger();
        AtomicInteger fanIns = new AtomicInteger();
        WorkerTask task = task("part", 8, (payload, context) -> {
            if (payload.name().equals("fan-in")) {
                Map<String, Integer> results = context.dependencyResults(Integer.class);
                sum.set(results.values().stream().mapToInt(Integer::intValue).sum());
                fanIns.incrementAndGet();
                assertThat(context.dependencies().succeeded()).isEqualTo(width);
            }
            else {
                context.recordResult(payload.value());
            }
        });
        Workflow workflow = nodes.client(task).workflow("fan");
        String[] parts = new String[width];
        for (int i = 0; i < width; i++) {
            parts[i] = "p" + i;
            workflow.add(parts[i], "part", new Step("part", i));
        }
        EnqueuedWorkflow enqueued = workflow.add("fan-in", "part", new Step("fan-in", 0), Workflow.after(parts)).enqueue();
        nodes.start(settings("node-a").build(), task);
        nodes.start(settings("node-b").build(), task);

        await().atMost(Duration.ofSeconds(60)).until(() -> fanIns.get() == 1
                && workflow(enqueued.id()).orElseThrow().state().equals("COMPLETED"));
        assertThat(sum.get()).isEqualTo(width * (width - 1) / 2);
        assertThat(fanIns.get()).isEqualTo(1);
        assertThat(workflow(enqueued.id()).orElseThrow().completed()).isEqualTo(width + 1);
    }

    @Test
    void aStepHeldByADeadNodeRunsAgainAfterTheRescueAndTheWorkflowGoesOn() {
        Queue<String> ran = new ConcurrentLinkedQueue<>();
        WorkerTask task = task("step", 2, (payload, context) -> ran.add(payload.name()));
        EnqueuedWorkflow workflow = nodes.client(task).workflow("survivor")
            .add("a", "step", new Step("a", 1))
            .add("b", "step", new Step("b", 2), Workflow.after("a"))
            .enqueue();
        // A node claims the first step with a short lease and dies.
        List<ClaimedJob> dead = queue.store().claim(List.of(new ClaimLimit("step", 1)), "dead-node", JobState.RUNNING,
                Duration.ofSeconds(1));
        assertThat(dead).hasSize(1);

        nodes.start(settings("node-a").rescueInterval(Duration.ofMillis(200)).build(), task);

        await().atMost(Duration.ofSeconds(20)).until(() -> workflow(workflow.id()).orElseThrow().state()
            .equals("COMPLETED"));
        assertThat(ran).containsExactly("a", "b");
        assertThat(queue.job(workflow.jobId("a")).attempt()).as("run again after the rescue").isEqualTo(2);
    }

    /**
     * A step records a result and then fails for good; its dependent runs anyway and finds no result
     * of it, but the result of a sibling that completed.
     */
    @Test
    void aCallerAwaitsAWorkflowAndReadsWhatItsStepsReturned() {
        WorkerTask task = task("step", 2, (payload, context) -> {
            int before = context.dependencyResults(Integer.class).values().stream().mapToInt(Integer::intValue).sum();
            context.recordResult(before + payload.value());
        });
        QueueClient client = nodes.client(task);
        EnqueuedWorkflow workflow = client.workflow("sum")
            .add("a", "step", new Step("a", 1))
            .add("b", "step", new Step("b", 2), Workflow.after("a"))
            .add("c", "step", new Step("c", 3), Workflow.after("b"))
            .enqueue();
        assertThatThrownBy(() -> client.awaitWorkflow(workflow.id(), Duration.ofMillis(200)))
            .isInstanceOf(JobNotFinishedException.class).hasMessageContaining("Workflow " + workflow.id());
        nodes.start(settings("node-a").build(), task);

        WorkflowInfo ended = client.awaitWorkflow(workflow.id(), Duration.ofSeconds(20));

        assertThat(ended.state()).isEqualTo("COMPLETED");
        assertThat(ended.steps()).extracting(WorkflowInfo.Step::step, WorkflowInfo.Step::result)
            .containsExactly(org.assertj.core.groups.Tuple.tuple("a", "1"), org.assertj.core.groups.Tuple.tuple("b", "3"),
                    org.assertj.core.groups.Tuple.tuple("c", "6"));
        assertThat(client.awaitWorkflow(workflow.id(), Duration.ZERO).state()).as("an ended workflow at once")
            .isEqualTo("COMPLETED");
        assertThatThrownBy(() -> client.awaitWorkflow(987654321L, Duration.ofSeconds(1)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("No workflow has id 987654321");
    }

    @Test
    void aDependentThatRunsAnywayReadsNoResultOfAStepThatRecordedOneAndThenFailed() {
        Map<String, Object> seen = new ConcurrentHashMap<>();
        WorkerTask task = task("step", 2, (payload, context) -> {
            switch (payload.name()) {
                case "failing" -> {
                    context.recordResult(payload.value());
                    throw new TerminalTaskException("recorded, then failed");
                }
                case "completing" -> context.recordResult(payload.value());
                default -> {
                    seen.put("failing", context.dependencyResult("failing", Integer.class));
                    seen.put("all", context.dependencyResults(Integer.class));
                    seen.put("dependencies", context.dependencies());
                }
            }
        });
        EnqueuedWorkflow workflow = nodes.client(task).workflow("tolerant").onDependencyFailure(DependencyFailure.RUN)
            .add("failing", "step", new Step("failing", 7))
            .add("completing", "step", new Step("completing", 3))
            .add("after", "step", new Step("after", 0), Workflow.after("failing", "completing"))
            .enqueue();
        nodes.start(settings("node-a").build(), task);

        await().atMost(Duration.ofSeconds(20)).until(() -> workflow(workflow.id()).orElseThrow().state().equals("FAILED")
                && seen.containsKey("dependencies"));
        assertThat(queue.state(workflow.jobId("failing"))).isEqualTo(JobState.FAILED);
        assertThat(seen).containsEntry("failing", java.util.Optional.empty()).containsEntry("all", Map.of("completing", 3))
            .containsEntry("dependencies", new TaskContext.Dependencies(1, 1));
        assertThat(storedResults()).as("the failed step's value is not even written")
            .doesNotContainKey(workflow.jobId("failing")).containsEntry(workflow.jobId("completing"), true);
    }

    /**
     * A batch item records a result and fails its first attempt; its second attempt completes
     * without recording: the callback finds no result of it, since the value was not its completing
     * attempt's.
     */
    @Test
    void aResultRecordedByAnAttemptThatFailedIsNotReadAfterALaterAttemptCompleted() {
        Map<String, Object> seen = new ConcurrentHashMap<>();
        WorkerTask item = WorkerTask.of(TaskDefinition.builder("item").maxAttempts(2)
            .retryPolicy(io.pgqueue.retry.RetryPolicy.fixed(Duration.ZERO)).build(), (Step payload, TaskContext context) -> {
                if (context.attempt() == 1) {
                    context.recordResult(payload.value());
                    throw new IllegalStateException("first attempt fails");
                }
            }, Step.class, 1, Duration.ofMinutes(1), QueueDefaults.POOL);
        WorkerTask report = task("report", 1, (payload, context) -> {
            seen.put("results", context.dependencyResults(Integer.class));
            seen.put("dependencies", context.dependencies());
        });
        EnqueuedWorkflow batch = nodes.client(item, report).batch("retried").add("item", new Step("item", 5))
            .onFinish("report", new Step("report", 0)).enqueue();
        nodes.start(settings("node-a").build(), item, report);

        await().atMost(Duration.ofSeconds(20)).until(() -> seen.containsKey("dependencies"));
        assertThat(queue.job(batch.jobId("0")).attempt()).isEqualTo(2);
        assertThat(seen).containsEntry("results", Map.of()).containsEntry("dependencies", new TaskContext.Dependencies(1, 0));
    }

    /**
     * The write of a result is fenced by the recording attempt's lease: an attempt whose job was
     * rescued and claimed again records nothing and cannot replace the new claim's result; the result
     * is read by the dependent only once the job completed, and only the completing claim's.
     */
    @Test
    void aStaleAttemptCannotRecordAResultAndOnlyTheCompletingClaimsResultIsRead() {
        WorkerTask task = task("step", 1, (payload, context) -> { });
        EnqueuedWorkflow workflow = nodes.client(task).workflow("fenced")
            .add("a", "step", new Step("a", 1))
            .add("b", "step", new Step("b", 2), Workflow.after("a"))
            .enqueue();
        io.pgqueue.internal.store.WorkflowStore results = queue.store().workflows();
        io.pgqueue.internal.store.Lease first = queue.claim("stalled-node", "step", 1).get(0).lease();
        assertThat(results.recordResult(first, "1")).isTrue();

        // The first claim's lease expires; the job is rescued and claimed again.
        queue.expireLease(first.jobId());
        assertThat(queue.store().rescueExpiredLeases(10).applied()).containsEntry(first.jobId(), JobState.READY);
        assertThat(results.recordResult(first, "10")).as("rescued, not claimed").isFalse();
        io.pgqueue.internal.store.Lease second = queue.claim("live-node", "step", 1).get(0).lease();
        assertThat(second.epoch()).isGreaterThan(first.epoch());
        assertThat(results.recordResult(first, "11")).as("claimed again by another").isFalse();
        assertThat(results.recordResult(second, "2")).isTrue();
        assertThat(results.recordResult(first, "12")).isFalse();
        assertThat(results.dependencyResults(workflow.jobId("b"))).as("not read before the job completed")
            .containsOnlyKeys("a").containsEntry("a", null);

        queue.store().record(List.of(Outcome.completed(second)));
        assertThat(results.recordResult(first, "13")).as("completed").isFalse();
        assertThat(results.recordResult(second, "3")).as("completed").isFalse();
        assertThat(results.dependencyResults(workflow.jobId("b"))).containsExactly(Map.entry("a", "2"));

        // A claim that records and then loses its lease; the next claim completes without recording:
        // the first claim's value is never read.
        WorkerTask leg = task("leg", 1, (payload, context) -> { });
        EnqueuedWorkflow rescued = nodes.client(task, leg).workflow("rescued")
            .add("a", "leg", new Step("a", 1))
            .add("b", "step", new Step("b", 2), Workflow.after("a"))
            .enqueue();
        io.pgqueue.internal.store.Lease lost = queue.claim("stalled-node", "leg", 1).get(0).lease();
        assertThat(results.recordResult(lost, "1")).isTrue();
        queue.expireLease(lost.jobId());
        queue.store().rescueExpiredLeases(10);
        queue.store().record(List.of(Outcome.completed(queue.claim("live-node", "leg", 1).get(0).lease())));
        assertThat(queue.state(rescued.jobId("b"))).isEqualTo(JobState.READY);
        assertThat(results.dependencyResults(rescued.jobId("b"))).containsOnlyKeys("a").containsEntry("a", null);
    }

    @Test
    void aWriteOfTheCompletingClaimThatReachesTheResultAfterTheCompletionLeavesThePublishedValue() throws Exception {
        WorkerTask task = task("step", 1, (payload, context) -> { });
        EnqueuedWorkflow workflow = nodes.client(task).workflow("late-write")
            .add("a", "step", new Step("a", 1))
            .add("b", "step", new Step("b", 2), Workflow.after("a"))
            .enqueue();
        io.pgqueue.internal.store.WorkflowStore results = queue.store().workflows();
        io.pgqueue.internal.store.Lease lease = queue.claim("node-a", "step", 1).get(0).lease();
        assertThat(results.recordResult(lease, "1")).isTrue();

        // The completion applies the job's end (the deferred trigger, fired at once here) and holds
        // its transaction open; a write of the same claim that saw the job before the completion
        // committed waits for the result row and goes on after the commit.
        TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(queue.dataSource()));
        CountDownLatch ended = new CountDownLatch(1);
        CountDownLatch commit = new CountDownLatch(1);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Future<?> completion = threads.submit(() -> transactions.executeWithoutResult(status -> {
                queue.store().record(List.of(Outcome.completed(lease)));
                queue.jdbc().execute("SET CONSTRAINTS ALL IMMEDIATE");
                ended.countDown();
                try {
                    commit.await();
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
            }));
            ended.await();
            Future<Boolean> late = threads.submit(() -> results.recordResult(lease, "2"));
            await().atMost(Duration.ofSeconds(10)).until(() -> queue.jdbc().queryForObject(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    + "AND wait_event_type = 'Lock' AND query LIKE '%job_result%'", Integer.class) == 1);
            commit.countDown();
            completion.get();
            assertThat(late.get()).as("the completed result is not replaced").isFalse();
        }
        finally {
            commit.countDown();
            threads.shutdownNow();
        }
        assertThat(queue.state(workflow.jobId("b"))).isEqualTo(JobState.READY);
        assertThat(results.dependencyResults(workflow.jobId("b"))).containsExactly(Map.entry("a", "1"));
    }

    @Test
    void aResultLargerThanTheBoundIsRefused() {
        Queue<Throwable> refused = new ConcurrentLinkedQueue<>();
        WorkerTask task = task("step", 1, (payload, context) -> {
            try {
                context.recordResult("x".repeat(QueueDefaults.MAX_RESULT_BYTES));
            }
            catch (IllegalArgumentException ex) {
                refused.add(ex);
            }
        });
        nodes.client(task).workflow("big").add("a", "step", new Step("a", 1)).enqueue();
        nodes.start(settings("node-a").build(), task);

        await().atMost(Duration.ofSeconds(10)).until(() -> refused.size() == 1);
        assertThat(refused.peek()).hasMessageContaining("at most " + QueueDefaults.MAX_RESULT_BYTES);
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM " + queue.config().schema() + ".job_result",
                Long.class)).isZero();
    }

    private static java.util.Optional<WorkflowInfo> workflow(long id) {
        return queue.store().workflows().find(id);
    }

    /** @return per job that recorded a result, whether its dependents read it */
    private static Map<Long, Boolean> storedResults() {
        Map<Long, Boolean> stored = new java.util.HashMap<>();
        queue.jdbc().query("SELECT id, completed FROM " + queue.config().schema() + ".job_result",
                (java.sql.ResultSet rs) -> {
                    stored.put(rs.getLong("id"), rs.getBoolean("completed"));
                });
        return stored;
    }

    private long waitingJobs() {
        return queue.jdbc().queryForObject("SELECT count(*) FROM " + queue.config().schema() + ".job_waiting", Long.class);
    }

    private static io.pgqueue.internal.store.Lease lease(List<ClaimedJob> claimed, long id) {
        return claimed.stream().filter(job -> job.lease().jobId() == id).findFirst().orElseThrow().lease();
    }

    private static WorkerTask task(String name, int concurrency, TaskHandler<Step> handler) {
        return WorkerTask.of(TaskDefinition.builder(name).build(), handler, Step.class, concurrency, Duration.ofMinutes(1),
                QueueDefaults.POOL);
    }
}
