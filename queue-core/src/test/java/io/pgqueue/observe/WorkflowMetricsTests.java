package io.pgqueue.observe;

import java.util.List;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.pgqueue.CancelResult;
import io.pgqueue.EnqueuedWorkflow;
import io.pgqueue.PgQueue;
import io.pgqueue.QueueClient;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.Workflow;
import io.pgqueue.internal.observe.QueueStatsPoller;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The workflow meters on a real PostgreSQL, by value: workflows started on this node by name,
 * workflows running now, and workflows finished by outcome, after workflows that complete, fail and
 * are cancelled.
 */
class WorkflowMetricsTests {

    private static final List<TaskDefinition> TASKS = List.of(TaskDefinition.builder("completing").build(),
            TaskDefinition.builder("failing").build(), TaskDefinition.builder("cancelled").build(),
            TaskDefinition.builder("running").build());

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(TASKS.toArray(TaskDefinition[]::new));

    private final MeterRegistry registry = new SimpleMeterRegistry();

    private final QueueStatsPoller poller = new QueueStatsPoller(queue.stores().stats(), java.time.Duration.ofHours(1));

    /** Held: the registry keeps its gauges' binder only weakly. */
    private final QueueMeterBinder binder = QueueMeterBinder.NONE
        .withTasks(TASKS.stream().map(TaskDefinition::name).toList(), this.poller::latest);

    private final QueueClient client = PgQueue.builder(queue.dataSource()).config(queue.config()).tasks(TaskRegistry.of(TASKS))
        .telemetry(new QueueTelemetry(new MicrometerQueueEvents(this.registry), ObservationRegistry.NOOP)).build().client();

    @AfterEach
    void closeClient() {
        this.client.close();
    }

    @Test
    void startedRunningAndFinishedCountWorkflowsThatCompleteFailAndAreCancelled() {
        this.binder.bindTo(this.registry);
        EnqueuedWorkflow completing = twoSteps("import", "completing");
        EnqueuedWorkflow failing = twoSteps("import", "failing");
        EnqueuedWorkflow cancelled = twoSteps("export", "cancelled");
        twoSteps("export", "running");
        // A workflow whose transaction rolls back never started.
        new TransactionTemplate(new DataSourceTransactionManager(queue.dataSource())).executeWithoutResult(status -> {
            twoSteps("import", "running");
            status.setRollbackOnly();
        });

        assertThat(started("import")).isEqualTo(2);
        assertThat(started("export")).isEqualTo(2);
        this.poller.refresh();
        assertThat(running()).isEqualTo(4);
        assertThat(finished("completed")).isZero();
        assertThat(finished("failed")).isZero();
        assertThat(finished("cancelled")).isZero();

        // Both steps of the first complete, the first step of the second fails for good (its
        // second step is cancelled), and the first step of the third is cancelled (and so its second).
        queue.store().record(List.of(Outcome.completed(claimOne("completing"))));
        queue.store().record(List.of(Outcome.completed(claimOne("completing"))));
        queue.store().record(List.of(Outcome.failed(claimOne("failing"), "no")));
        assertThat(this.client.cancel(cancelled.jobId("first"))).isEqualTo(CancelResult.CANCELLED);
        assertThat(queue.store().workflows().find(completing.id()).orElseThrow().state()).isEqualTo("COMPLETED");
        assertThat(queue.store().workflows().find(failing.id()).orElseThrow().state()).isEqualTo("FAILED");
        assertThat(queue.store().workflows().find(cancelled.id()).orElseThrow().state()).isEqualTo("CANCELLED");

        this.poller.refresh();
        assertThat(running()).isEqualTo(1);
        assertThat(finished("completed")).isEqualTo(1);
        assertThat(finished("failed")).isEqualTo(1);
        assertThat(finished("cancelled")).isEqualTo(1);
        assertThat(started("import")).isEqualTo(2);
        assertThat(started("export")).isEqualTo(2);
    }

    /** A workflow of two steps of one task, the second after the first. */
    private EnqueuedWorkflow twoSteps(String name, String task) {
        return this.client.workflow(name).add("first", task, 1).add("second", task, 2, Workflow.after("first")).enqueue();
    }

    private static io.pgqueue.internal.store.Lease claimOne(String task) {
        List<ClaimedJob> claimed = queue.claim(task, 1);
        assertThat(claimed).hasSize(1);
        return claimed.get(0).lease();
    }

    private double started(String workflow) {
        return this.registry.get(QueueMeterNames.WORKFLOWS_STARTED).tags(QueueMeterNames.TAG_WORKFLOW, workflow).counter()
            .count();
    }

    private double running() {
        return this.registry.get(QueueMeterNames.WORKFLOWS_RUNNING).gauge().value();
    }

    private double finished(String outcome) {
        return this.registry.get(QueueMeterNames.WORKFLOWS_FINISHED).tags(QueueMeterNames.TAG_OUTCOME, outcome)
            .functionCounter().count();
    }
}
