package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import io.pgqueue.ChildJobFailedException;
import io.pgqueue.InvalidJobException;
import io.pgqueue.JobRequest;
import io.pgqueue.JobSnapshot;
import io.pgqueue.JobState;
import io.pgqueue.JobStep;
import io.pgqueue.PgQueue;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueDefaults;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskHandler;
import io.pgqueue.TerminalTaskException;
import io.pgqueue.retry.RetryPolicy;
import io.pgqueue.testing.TestQueue;
import io.pgqueue.worker.WorkerSettings;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Child jobs of durable handlers: a parent spawns children once however often it runs, sleeps while
 * they run, and is woken by their ends with their results; a failed child fails its await.
 */
class DurableChildrenTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass().withPoolSize(12);

    private final List<PgQueue> nodes = new ArrayList<>();

    private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

    private final Queue<String> journal = new ConcurrentLinkedQueue<>();

    @AfterEach
    void stop() {
        this.nodes.forEach(PgQueue::stop);
    }

    private PgQueue node(WorkerTask... tasks) {
        PgQueue node = PgQueue.builder(queue.dataSource()).config(queue.config())
            .workers(WorkerSettings.builder("node").pollInterval(Duration.ofMillis(100)).build(), List.of(tasks))
            .build();
        this.nodes.add(node);
        node.start();
        return node;
    }

    /** Squares its payload after a while; fails for a negative one. */
    private WorkerTask square() {
        return task("square", 1, (Integer n, io.pgqueue.TaskContext context) -> {
            count("square " + n);
            Thread.sleep(200);
            if (n < 0) {
                throw new TerminalTaskException("negative: " + n);
            }
            context.recordResult(n * n);
        }, Integer.class);
    }

    @Test
    void aParentSpawnsItsChildrenOnceSleepsWhileTheyRunAndSumsTheirResults() {
        WorkerTask fanOut = task("fan-out", 3, (String payload, io.pgqueue.TaskContext context) -> {
            count("parent run");
            List<Long> children = new ArrayList<>();
            for (int i = 1; i <= 4; i++) {
                children.add(context.spawn("square-" + i, "square", i));
            }
            List<Integer> squares = context.awaitChildren(children, Integer.class);
            context.recordResult(squares.stream().mapToInt(Integer::intValue).sum());
        }, String.class);
        QueueClient client = node(fanOut, square()).client();

        long id = client.enqueue("fan-out", "x").jobId();

        assertThat(client.await(id, Integer.class, Duration.ofSeconds(30))).isEqualTo(1 + 4 + 9 + 16);
        for (int i = 1; i <= 4; i++) {
            assertThat(this.runs.get("square " + i)).as("child %d spawned and ran once", i).hasValue(1);
        }
        assertThat(this.runs.get("parent run").get()).as("woken by its children's ends").isBetween(2, 5);
        JobSnapshot parent = client.find(id).orElseThrow();
        assertThat(parent.attempt()).as("the waits spent no attempt").isEqualTo(1);
        List<JobStep> steps = client.steps(id).orElseThrow();
        assertThat(steps).extracting(JobStep::name).startsWith("spawn:square-1", "spawn:square-2", "spawn:square-3",
                "spawn:square-4");
        long child = Long.parseLong(steps.get(0).result());
        assertThat(client.find(child).orElseThrow().headers()).contains("\"pgqueue.parent\": \"" + id + "\"");
    }

    @Test
    void aChildThatFailsFailsItsAwaitAndTheParentCanCompensate() {
        WorkerTask parent = task("careful", 3, (String payload, io.pgqueue.TaskContext context) -> {
            long child = context.spawn("bad", "square", -3);
            try {
                context.awaitChild(child, Integer.class);
            }
            catch (ChildJobFailedException ex) {
                this.journal.add("child " + (ex.childId() == child) + " " + ex.state());
            }
        }, String.class);
        QueueClient client = node(parent, square()).client();

        long id = client.enqueue("careful", "x").jobId();

        await().atMost(Duration.ofSeconds(20)).until(() -> client.find(id).map(JobSnapshot::state).orElseThrow()
                == JobState.COMPLETED);
        assertThat(List.copyOf(this.journal)).containsExactly("child true FAILED");
    }

    @Test
    void aParentAwaitsOnlyItsOwnChildrenAndAChildIsValidated() {
        QueueClient client = node(task("strict", 1, (String payload, io.pgqueue.TaskContext context) -> {
            try {
                context.awaitChild(12345L, Integer.class);
            }
            catch (IllegalArgumentException ex) {
                this.journal.add(ex.getMessage());
            }
            try {
                context.spawn("dup", JobRequest.of("square", 1, io.pgqueue.EnqueueOptions.defaults().withDedupKey("k")));
            }
            catch (InvalidJobException ex) {
                this.journal.add(ex.getMessage());
            }
        }, String.class), square()).client();

        long id = client.enqueue("strict", "x").jobId();

        await().atMost(Duration.ofSeconds(20)).until(() -> this.journal.size() == 2);
        assertThat(List.copyOf(this.journal).get(0)).contains("did not spawn job 12345");
        assertThat(List.copyOf(this.journal).get(1)).contains("cannot have a dedup key");
        assertThat(client.steps(id).orElseThrow()).as("nothing recorded for the refused spawn").isEmpty();
    }

    @Test
    void cancellingAParentCancelsItsChildrenButNotItsDetachedOnes() {
        WorkerTask parent = task("parent", 1, (String payload, io.pgqueue.TaskContext context) -> {
            JobRequest later = JobRequest.of("square", 5, io.pgqueue.EnqueueOptions.defaults().withDelay(Duration.ofHours(1)));
            long attached = context.spawn("attached", later);
            context.spawnDetached("detached", later);
            context.awaitChild(attached, Integer.class);
        }, String.class);
        QueueClient client = node(parent, square()).client();
        long id = client.enqueue("parent", "x").jobId();
        await().atMost(Duration.ofSeconds(20)).until(() -> client.steps(id).orElseThrow().size() == 3
                && client.find(id).map(JobSnapshot::state).orElseThrow() == JobState.READY);
        List<JobStep> steps = client.steps(id).orElseThrow();
        long attached = Long.parseLong(steps.get(0).result());
        long detached = Long.parseLong(steps.get(1).result());

        client.cancel(id);

        assertThat(client.find(id).orElseThrow().state()).isEqualTo(JobState.CANCELLED);
        assertThat(client.find(attached).orElseThrow().state()).as("cancelled with its parent")
            .isEqualTo(JobState.CANCELLED);
        assertThat(client.find(detached).orElseThrow().state()).as("detached: runs on").isEqualTo(JobState.READY);
    }

    @Test
    void aWorkflowStepsChildrenJoinItsWorkflowAsStepsAndTheWorkflowEndsAfterThem() {
        WorkerTask plan = task("plan", 3, (String payload, io.pgqueue.TaskContext context) -> {
            List<Long> parts = new ArrayList<>();
            for (int i = 1; i <= 3; i++) {
                parts.add(context.spawn("part-" + i, "square", i));
            }
            context.recordResult(context.awaitChildren(parts, Integer.class).stream().mapToInt(Integer::intValue).sum());
        }, String.class);
        WorkerTask report = task("report", 3, (String payload, io.pgqueue.TaskContext context) ->
                this.journal.add("report " + context.dependencyResult("plan", Integer.class).orElse(-1)), String.class);
        QueueClient client = node(plan, report, square()).client();

        io.pgqueue.EnqueuedWorkflow workflow = client.workflow("dynamic").add("plan", "plan", "x")
            .add("report", "report", "y", io.pgqueue.Workflow.after("plan")).enqueue();

        io.pgqueue.WorkflowInfo info = client.awaitWorkflow(workflow.id(), Duration.ofSeconds(30));
        assertThat(info.state()).isEqualTo("COMPLETED");
        assertThat(info.jobs()).as("two declared steps and three grafted ones").isEqualTo(5);
        assertThat(info.steps()).extracting(io.pgqueue.WorkflowInfo.Step::step)
            .containsExactlyInAnyOrder("plan", "report", "plan/part-1", "plan/part-2", "plan/part-3");
        assertThat(info.steps()).filteredOn(step -> step.step().equals("plan/part-3")).singleElement()
            .satisfies(step -> assertThat(step.result()).isEqualTo("9"));
        assertThat(List.copyOf(this.journal)).containsExactly("report 14");
    }

    private void count(String what) {
        this.runs.computeIfAbsent(what, any -> new AtomicInteger()).incrementAndGet();
    }

    private static <P> WorkerTask task(String name, int maxAttempts, TaskHandler<P> handler, Class<P> type) {
        return WorkerTask.of(TaskDefinition.builder(name).maxAttempts(maxAttempts).retryPolicy(RetryPolicy.fixed(
                Duration.ZERO)).build(), handler, type, 4, Duration.ofMinutes(1), QueueDefaults.POOL);
    }
}
