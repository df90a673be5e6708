package io.pgqueue.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.pgqueue.JobSnapshot;
import io.pgqueue.JobState;
import io.pgqueue.JobStep;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueDefaults;
import io.pgqueue.SignalResult;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskHandler;
import io.pgqueue.internal.store.StatsStore;
import io.pgqueue.retry.RetryPolicy;
import io.pgqueue.testing.TestQueue;
import io.pgqueue.testing.TestWorkers;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.pgqueue.testing.TestWorkers.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Signals to durable handlers: a sleeping wait is woken by its signal from another client or from
 * SQL, a signal sent first is kept until the handler waits, a wait times out, and a signal that
 * comes while the waiting attempt ends still wakes the job.
 */
class DurableSignalsTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass().withPoolSize(12);

    @RegisterExtension
    final TestWorkers nodes = TestWorkers.on(queue);

    /** A signal's payload. */
    record Shipment(String carrier, String tracking) {
    }

    private final Queue<String> journal = new ConcurrentLinkedQueue<>();

    private WorkerTask order(Duration timeout) {
        return task("order", (payload, context) -> {
            context.step("charge", () -> this.journal.add("charged " + payload));
            Optional<Shipment> shipped = context.awaitSignal("shipped", Shipment.class, timeout);
            context.step("follow-up", () -> this.journal.add(shipped.map(s -> "shipped by " + s.carrier())
                .orElse("never shipped")));
        });
    }

    @Test
    void aSignalWakesTheJobSleepingInItsWaitAndTheWaitReturnsItsPayload() {
        WorkerTask order = order(Duration.ofHours(1));
        QueueClient client = this.nodes.client(order);
        long id = client.enqueue("order", "o-1").jobId();
        this.nodes.start(settings("node").build(), order);
        awaitState(client, id, JobState.READY);
        JobSnapshot waiting = client.find(id).orElseThrow();
        assertThat(waiting.attempt()).as("the wait spent no attempt").isZero();
        assertThat(waiting.scheduleTime()).isAfter(Instant.now().plusSeconds(3000));
        assertThat(client.steps(id).orElseThrow()).extracting(JobStep::name, JobStep::signal)
            .containsExactly(org.assertj.core.groups.Tuple.tuple("charge", null),
                    org.assertj.core.groups.Tuple.tuple("signal:shipped", JobStep.SignalState.WAITING));

        StatsStore stats = new StatsStore(queue.dataSource(), queue.config());
        assertThat(stats.suspendedCounts()).containsEntry("signal", 1L).containsEntry("sleep", 0L);

        assertThat(client.signal(id, "shipped", new Shipment("ups", "1Z"))).isEqualTo(SignalResult.WOKEN);

        awaitState(client, id, JobState.COMPLETED);
        assertThat(List.copyOf(this.journal)).containsExactly("charged o-1", "shipped by ups");
        JobStep signal = client.steps(id).orElseThrow().get(1);
        assertThat(signal.signal()).isEqualTo(JobStep.SignalState.RECEIVED);
        assertThat(signal.result()).contains("\"carrier\": \"ups\"");
        assertThat(client.signal(id, "shipped", null)).isEqualTo(SignalResult.FINISHED);
        assertThat(client.signal(Long.MAX_VALUE, "shipped", null)).isEqualTo(SignalResult.NOT_FOUND);
    }

    @Test
    void aSignalSentBeforeTheWaitIsKeptAndTheWaitReturnsItAtOnce() throws InterruptedException {
        CountDownLatch charged = new CountDownLatch(1);
        CountDownLatch signalled = new CountDownLatch(1);
        WorkerTask order = task("early", (payload, context) -> {
            context.step("charge", charged::countDown);
            signalled.await(10, TimeUnit.SECONDS);
            Optional<Shipment> shipped = context.awaitSignal("shipped", Shipment.class, Duration.ofHours(1));
            this.journal.add(shipped.map(Shipment::tracking).orElse("none"));
        });
        QueueClient client = this.nodes.client(order);
        long id = client.enqueue("early", "o-2").jobId();
        assertThat(client.signal(id, "shipped", new Shipment("dhl", "JD1"))).as("kept for the job, before it ran")
            .isEqualTo(SignalResult.STORED);
        assertThat(client.signal(id, "shipped", new Shipment("dhl", "JD2"))).isEqualTo(SignalResult.DUPLICATE);
        this.nodes.start(settings("node").build(), order);
        assertThat(charged.await(10, TimeUnit.SECONDS)).isTrue();
        signalled.countDown();

        awaitState(client, id, JobState.COMPLETED);
        assertThat(List.copyOf(this.journal)).containsExactly("JD1");
        assertThat(client.find(id).orElseThrow().attempt()).as("no snooze: it had the signal").isEqualTo(1);
        assertThat(client.steps(id).orElseThrow()).extracting(JobStep::name, JobStep::seq)
            .containsExactly(org.assertj.core.groups.Tuple.tuple("charge", 0),
                    org.assertj.core.groups.Tuple.tuple("signal:shipped", 1));
    }

    @Test
    void aWaitWithoutItsSignalTimesOutAndALateSignalIsRefused() {
        WorkerTask order = order(Duration.ofMillis(600));
        QueueClient client = this.nodes.client(order);
        long id = client.enqueue("order", "o-3").jobId();
        this.nodes.start(settings("node").build(), order);

        awaitState(client, id, JobState.COMPLETED);
        assertThat(List.copyOf(this.journal)).containsExactly("charged o-3", "never shipped");
        assertThat(client.steps(id).orElseThrow().get(1).signal()).isEqualTo(JobStep.SignalState.TIMED_OUT);
    }

    @Test
    void aLateSignalToAJobStillRunningIsRefusedAsTooLate() throws InterruptedException {
        CountDownLatch release = new CountDownLatch(1);
        WorkerTask order = task("late", (payload, context) -> {
            Optional<String> value = context.awaitSignal("go", String.class, Duration.ZERO);
            this.journal.add(value.orElse("timed out"));
            release.await(10, TimeUnit.SECONDS);
        });
        QueueClient client = this.nodes.client(order);
        long id = client.enqueue("late", "x").jobId();
        this.nodes.start(settings("node").build(), order);
        await().atMost(Duration.ofSeconds(10)).until(() -> this.journal.contains("timed out"));

        assertThat(client.signal(id, "go", "now")).isEqualTo(SignalResult.TOO_LATE);
        release.countDown();
        awaitState(client, id, JobState.COMPLETED);
    }

    @Test
    void aSignalFromSqlWakesTheJob() {
        WorkerTask order = order(Duration.ofHours(1));
        QueueClient client = this.nodes.client(order);
        long id = client.enqueue("order", "o-4").jobId();
        this.nodes.start(settings("node").build(), order);
        awaitState(client, id, JobState.READY);

        String result = queue.jdbc().queryForObject("SELECT " + queue.config().schema()
                + ".signal_job(?, 'shipped', '{\"carrier\": \"dpd\", \"tracking\": \"9\"}')", String.class, id);

        assertThat(result).isEqualTo("WOKEN");
        awaitState(client, id, JobState.COMPLETED);
        assertThat(List.copyOf(this.journal)).containsExactly("charged o-4", "shipped by dpd");
        assertThatThrownBy(() -> queue.jdbc().queryForObject("SELECT " + queue.config().schema()
                + ".signal_job(?, '', NULL)", String.class, id)).hasMessageContaining("1 to 190 characters");
    }

    @Test
    void aSignalThatComesWhileTheWaitingAttemptEndsStillWakesTheJob() throws InterruptedException {
        CountDownLatch waiting = new CountDownLatch(1);
        CountDownLatch signalled = new CountDownLatch(1);
        WorkerTask order = task("racing", (payload, context) -> {
            try {
                context.awaitSignal("go", String.class, Duration.ofHours(1)).ifPresent(this.journal::add);
            }
            finally {
                // The wait is recorded; the attempt has not ended yet when the signal comes.
                waiting.countDown();
                signalled.await(10, TimeUnit.SECONDS);
            }
        });
        QueueClient client = this.nodes.client(order);
        long id = client.enqueue("racing", "x").jobId();
        this.nodes.start(settings("node").rescueInterval(Duration.ofMillis(300)).build(), order);
        assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();

        assertThat(client.signal(id, "go", "now")).isEqualTo(SignalResult.DELIVERED);
        signalled.countDown();

        awaitState(client, id, JobState.COMPLETED);
        assertThat(List.copyOf(this.journal)).containsExactly("now");
    }

    @Test
    void aSignalNeedsANameAndItsPayloadMustBeStorable() {
        QueueClient client = this.nodes.client(order(Duration.ZERO));
        long id = client.enqueue("order", "x").jobId();
        assertThatThrownBy(() -> client.signal(id, "", null)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("1 to 190 characters");
        assertThatThrownBy(() -> client.signal(id, "child:7", null)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("child jobs' ends");
        assertThatThrownBy(() -> client.signal(id, "big", Map.of("text", "x".repeat(QueueDefaults.MAX_RESULT_BYTES))))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("payload of signal 'big'");
        assertThat(client.steps(id).orElseThrow()).as("nothing written").isEmpty();
    }

    private static void awaitState(QueueClient client, long id, JobState state) {
        await().atMost(Duration.ofSeconds(15)).until(() -> client.find(id).map(JobSnapshot::state).orElseThrow() == state);
    }

    private static WorkerTask task(String name, TaskHandler<String> handler) {
        return WorkerTask.of(TaskDefinition.builder(name).maxAttempts(3).retryPolicy(RetryPolicy.fixed(Duration.ZERO))
            .build(), handler, String.class, 2, Duration.ofMinutes(1), QueueDefaults.POOL);
    }
}
