package io.pgqueue.observe;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.pgqueue.EnqueueOptions;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueDefaults;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskHandler;
import io.pgqueue.testing.TestQueue;
import io.pgqueue.testing.TestWorkers;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The meters of a job's start as a worker records them: the queue wait from due to start, and a
 * deadline miss for a job started after its delay tolerance ran out.
 */
class StartMetersTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass();

    @RegisterExtension
    final TestWorkers nodes = TestWorkers.on(queue);

    @Test
    void aJobStartedAfterItsToleranceIsADeadlineMissAndItsWaitIsMeasuredFromDue() {
        MeterRegistry registry = new SimpleMeterRegistry();
        QueueTelemetry telemetry = new QueueTelemetry(new MicrometerQueueEvents(registry), ObservationRegistry.NOOP);
        AtomicInteger ran = new AtomicInteger();
        TaskHandler<Integer> handler = (payload, context) -> ran.incrementAndGet();
        WorkerTask task = WorkerTask.of(TaskDefinition.builder("timed").build(), handler, Integer.class, 2,
                Duration.ofMinutes(1), QueueDefaults.POOL);
        QueueClient client = this.nodes.client(task);
        // Due for ten seconds, with one second of tolerance: late before any worker saw it.
        client.enqueue("timed", 1, EnqueueOptions.defaults().withRunAt(Instant.now().minusSeconds(10))
            .withDelayTolerance(Duration.ofSeconds(1)));
        // Due now, with an hour of tolerance: on time.
        client.enqueue("timed", 2, EnqueueOptions.defaults().withDelayTolerance(Duration.ofHours(1)));

        this.nodes.start(TestWorkers.settings("node-1").build(), telemetry, task);
        await().atMost(Duration.ofSeconds(30)).until(() -> ran.get() == 2);

        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
            assertThat(registry.get(QueueMeterNames.DEADLINE_MISSED).tag("task", "timed").counter().count()).isEqualTo(1);
            Timer wait = registry.get(QueueMeterNames.QUEUE_WAIT).tag("task", "timed").timer();
            assertThat(wait.count()).isEqualTo(2);
            assertThat(wait.max(TimeUnit.SECONDS)).as("the late job's wait, from due to start").isGreaterThanOrEqualTo(9.0);
        });
    }
}
