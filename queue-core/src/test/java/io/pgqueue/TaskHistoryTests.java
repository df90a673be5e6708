package io.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.pgqueue.QueueAdminException.Reason;
import io.pgqueue.message.MessageQueueAttributes;
import io.pgqueue.message.MessageQueueHistory;
import io.pgqueue.message.OutgoingMessage;
import io.pgqueue.message.ReceiveRequest;
import io.pgqueue.message.ReceivedMessage;
import io.pgqueue.observe.TaskHistory;
import io.pgqueue.retry.RetryPolicy;
import io.pgqueue.testing.TestShards;
import io.pgqueue.testing.TestWorkers;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The task history the queue keeps in its database: what every worker node's handlers did, added
 * up per minute and per hour, readable from any node after the nodes are gone.
 */
class TaskHistoryTests {

    @RegisterExtension
    final TestShards databases = TestShards.perTest("history", 1);

    private final List<PgQueue> queues = new ArrayList<>();

    @AfterEach
    void stop() {
        this.queues.forEach(PgQueue::stop);
    }

    @Test
    void whatTwoNodesDidIsAddedUpPerMinuteAndPerHourAndOutlivesThem() {
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        TaskHandler<String> handler = (payload, context) -> {
            int run = runs.computeIfAbsent(payload, key -> new AtomicInteger()).incrementAndGet();
            if (payload.startsWith("flaky") && run == 1) {
                throw new IllegalStateException("first try fails");
            }
            if (payload.startsWith("bad")) {
                throw new TerminalTaskException("never works");
            }
            Thread.sleep(20);
        };
        WorkerTask report = WorkerTask.of(TaskDefinition.builder("report").maxAttempts(3)
            .retryPolicy(RetryPolicy.fixed(Duration.ofMillis(10))).build(), handler, String.class, 4, Duration.ofSeconds(30),
                "default");
        PgQueue a = node("node-a", report);
        PgQueue b = node("node-b", report);
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            jobs.add(JobRequest.of("report", (i < 10 ? "flaky-" : i < 15 ? "bad-" : "fine-") + i));
        }
        a.client().enqueueAll(jobs);
        await().atMost(Duration.ofSeconds(30)).until(() -> a.admin().count(JobQuery.of(JobQuery.Group.READY)
            .withTask("report")) + a.admin().count(JobQuery.of(JobQuery.Group.SCHEDULED).withTask("report"))
            + a.admin().count(JobQuery.of(JobQuery.Group.RUNNING).withTask("report")) == 0);
        a.stop();
        b.stop();

        PgQueue reader = PgQueue.builder(this.databases.get(0).dataSource()).tasks(TaskRegistry.of(List.of()))
            .migrateSchema(true).build();
        this.queues.add(reader);
        for (Duration window : List.of(Duration.ofHours(1), Duration.ofDays(7))) {
            TaskHistory history = reader.admin().history(window).get("report");
            assertThat(history.step()).isEqualTo(window.equals(Duration.ofHours(1)) ? Duration.ofMinutes(1)
                    : Duration.ofHours(1));
            long completed = history.points().stream().mapToLong(TaskHistory.Point::completed).sum();
            long failed = history.points().stream().mapToLong(TaskHistory.Point::failed).sum();
            long retried = history.points().stream().mapToLong(TaskHistory.Point::retried).sum();
            long started = history.points().stream().mapToLong(TaskHistory.Point::started).sum();
            long ran = history.points().stream().mapToLong(TaskHistory.Point::ran).sum();
            assertThat(completed).as("fine and flaky jobs, on either node").isEqualTo(35);
            assertThat(failed).isEqualTo(5);
            assertThat(retried).isEqualTo(10);
            assertThat(started).as("every attempt").isEqualTo(50);
            assertThat(ran).isEqualTo(50);
            TaskHistory.Point last = history.points().get(history.points().size() - 1);
            assertThat(last.runAvgMillis()).isGreaterThan(0.0);
            assertThat(last.runMaxMillis()).isGreaterThanOrEqualTo(20);
            assertThat(last.waitAvgMillis()).isNotNull();
        }
        assertThat(reader.admin().history(Duration.ofDays(7))).containsOnlyKeys("report");
        assertThatThrownBy(() -> reader.admin().history(Duration.ofDays(8)))
            .isInstanceOfSatisfying(QueueAdminException.class, ex -> assertThat(ex.reason()).isEqualTo(Reason.INVALID))
            .hasMessageContaining("at most 7 days");
        assertThat(new JdbcTemplate(this.databases.get(0).dataSource()).queryForObject(
                "SELECT count(DISTINCT step_seconds) FROM pgqueue.task_history", Integer.class)).isEqualTo(2);
    }

    @Test
    void whatIsDoneWithMessageQueuesIsCountedPerQueueOnEveryNode() {
        PgQueue a = PgQueue.builder(this.databases.get(0).dataSource()).tasks(TaskRegistry.of(List.of()))
            .migrateSchema(true).build();
        PgQueue b = PgQueue.builder(this.databases.get(0).dataSource()).tasks(TaskRegistry.of(List.of()))
            .migrateSchema(true).build();
        this.queues.add(a);
        this.queues.add(b);
        a.start();
        b.start();
        a.messages().createQueue("orders", MessageQueueAttributes.defaults(), Map.of());
        for (int i = 0; i < 3; i++) {
            a.messages().send("orders", OutgoingMessage.of("order " + i));
        }
        b.messages().send("orders", OutgoingMessage.of("order 3"));
        List<ReceivedMessage> received = b.messages().receive("orders", ReceiveRequest.of(10).withWaitTime(Duration.ZERO));
        b.messages().delete("orders", received.get(0).receiptHandle());
        a.stop();
        b.stop();

        PgQueue reader = PgQueue.builder(this.databases.get(0).dataSource()).tasks(TaskRegistry.of(List.of()))
            .migrateSchema(true).build();
        this.queues.add(reader);
        assertThat(reader.admin().messageCounts(Duration.ofMinutes(5))).containsEntry("orders",
                Map.of("sent", 4L, "received", (long) received.size(), "deleted", 1L));
        assertThatThrownBy(() -> reader.admin().messageCounts(Duration.ofDays(2)))
            .isInstanceOf(QueueAdminException.class).hasMessageContaining("1 minute to 24 hours");
        for (Duration window : List.of(Duration.ofHours(1), Duration.ofDays(7))) {
            MessageQueueHistory history = reader.admin().messageHistory("orders", window);
            assertThat(history.step()).isEqualTo(window.equals(Duration.ofHours(1)) ? Duration.ofMinutes(1)
                    : Duration.ofHours(1));
            assertThat(history.points().stream().mapToLong(MessageQueueHistory.Point::sent).sum()).isEqualTo(4);
            assertThat(history.points().stream().mapToLong(MessageQueueHistory.Point::received).sum())
                .isEqualTo(received.size());
            assertThat(history.points().stream().mapToLong(MessageQueueHistory.Point::deleted).sum()).isOne();
        }
        assertThat(reader.admin().messageHistory("nothing-here", Duration.ofHours(1)).points()).isEmpty();
        assertThatThrownBy(() -> reader.admin().messageHistory("orders", Duration.ofDays(8)))
            .isInstanceOf(QueueAdminException.class).hasMessageContaining("at most 7 days");
    }

    private PgQueue node(String name, WorkerTask task) {
        PgQueue queue = PgQueue.builder(this.databases.get(0).dataSource())
            .tasks(TaskRegistry.of(List.of(task.definition())))
            .workers(TestWorkers.settings(name).build(), List.of(task))
            .migrateSchema(true)
            .build();
        this.queues.add(queue);
        queue.start();
        return queue;
    }
}
