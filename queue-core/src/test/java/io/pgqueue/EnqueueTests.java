package io.pgqueue;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.observation.ObservationRegistry;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EnqueueTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(TestQueue.task("send-push"), TestQueue.task("copy-folder"));

    record Upload(String fileId, int sizeKb) {
    }

    @Test
    void enqueuesOneJobWithTheTaskDefaults() {
        EnqueueResult result = queue.client().enqueue("send-push", new Upload("f-1", 12));

        assertThat(result.created()).isTrue();
        JobSnapshot job = queue.job(result.jobId());
        assertThat(job.task()).isEqualTo("send-push");
        assertThat(job.state()).isEqualTo(JobState.READY);
        assertThat(job.payload()).isEqualTo("{\"fileId\": \"f-1\", \"sizeKb\": 12}");
        assertThat(job.priority()).isEqualTo(QueueDefaults.PRIORITY);
        assertThat(job.maxAttempts()).isEqualTo(QueueDefaults.MAX_ATTEMPTS);
        assertThat(job.attempt()).isZero();
        assertThat(job.delayToleranceDeadline()).isNull();
        assertThat(job.scheduleTime()).isBeforeOrEqualTo(Instant.now().plusSeconds(1));
    }

    @Test
    void appliesEveryOption() {
        Instant runAt = Instant.parse("2030-01-01T10:00:00Z");
        EnqueueResult result = queue.client().enqueue("send-push", Map.of("a", 1), EnqueueOptions.defaults()
            .withPriority(7)
            .withRunAt(runAt)
            .withDelayTolerance(Duration.ofSeconds(10))
            .withMaxAttempts(3)
            .withDedupKey("user-42")
            .withHeader("traceparent", "00-abc-def-01"));

        JobSnapshot job = queue.job(result.jobId());
        assertThat(job.priority()).isEqualTo(7);
        assertThat(job.scheduleTime()).isEqualTo(runAt);
        assertThat(job.delayToleranceDeadline()).isEqualTo(runAt.plusSeconds(10));
        assertThat(job.maxAttempts()).isEqualTo(3);
        assertThat(job.dedupKey()).isEqualTo("user-42");
        assertThat(job.headers()).isEqualTo("{\"traceparent\": \"00-abc-def-01\"}");
    }

    @Test
    void delaySchedulesByTheDatabaseClock() {
        long id = queue.client().enqueue("send-push", 1, EnqueueOptions.defaults().withDelay(Duration.ofMinutes(5))).jobId();

        assertThat(queue.secondsUntilDue(id)).isBetween(295.0, 300.5);
        assertThat(queue.claim("send-push", 10)).isEmpty();
    }

    @Test
    void batchInsertsManyJobsInOrder() {
        List<JobRequest> requests = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            EnqueueOptions options = EnqueueOptions.defaults().withPriority(i % 7).withMaxAttempts(1 + i % 5);
            if (i % 3 == 1) {
                options = options.withDelay(Duration.ofMinutes(i));
            }
            requests.add(JobRequest.of(i % 2 == 0 ? "send-push" : "copy-folder", Map.of("n", i), options));
        }

        List<EnqueueResult> results = queue.client().enqueueAll(requests);

        assertThat(results).hasSize(1000).allMatch(EnqueueResult::created);
        assertThat(results.stream().map(EnqueueResult::jobId).distinct()).hasSize(1000);
        Map<Long, Integer> inputOf = new HashMap<>();
        for (int i = 0; i < results.size(); i++) {
            inputOf.put(results.get(i).jobId(), i);
        }
        // Every job carries the columns of the request whose result holds its id.
        List<String> mismatches = queue.jdbc().query("""
                SELECT id, task, priority, max_attempts, CAST(payload ->> 'n' AS integer) AS n,
                       schedule_time > statement_timestamp() AS delayed
                FROM %s.job""".formatted(queue.config().schema()), (rs, row) -> {
            int i = inputOf.get(rs.getLong("id"));
            boolean matches = rs.getInt("n") == i && rs.getString("task").equals(i % 2 == 0 ? "send-push" : "copy-folder")
                    && rs.getInt("priority") == i % 7 && rs.getInt("max_attempts") == 1 + i % 5
                    && rs.getBoolean("delayed") == (i % 3 == 1);
            return matches ? null : "job " + rs.getLong("id") + " for request " + i;
        }).stream().filter(Objects::nonNull).toList();
        assertThat(mismatches).isEmpty();
        assertThat(queue.activeJobs()).isEqualTo(1000);
    }

    @Test
    void batchWithADedupKeyMapsEveryJobToItsRequest() {
        List<JobRequest> requests = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            EnqueueOptions options = i == 10 ? EnqueueOptions.defaults().withDedupKey("only-keyed") : EnqueueOptions.defaults();
            requests.add(JobRequest.of(i % 2 == 0 ? "send-push" : "copy-folder", Map.of("n", i), options));
        }

        List<EnqueueResult> results = queue.client().enqueueAll(requests);

        for (int i = 0; i < results.size(); i++) {
            JobSnapshot job = queue.job(results.get(i).jobId());
            assertThat(job.payload()).isEqualTo("{\"n\": " + i + "}");
            assertThat(job.dedupKey()).isEqualTo(i == 10 ? "only-keyed" : null);
        }
    }

    @Test
    void joinsTheCallersTransactionCommit() {
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(queue.dataSource()));

        long id = tx.execute(status -> {
            long jobId = queue.client().enqueue("send-push", "committed").jobId();
            // Not visible to other connections before the caller commits.
            assertThat(countFromAnotherConnection()).isZero();
            return jobId;
        });

        assertThat(queue.state(id)).isEqualTo(JobState.READY);
    }

    @Test
    void joinsTheCallersTransactionRollback() {
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(queue.dataSource()));

        tx.executeWithoutResult(status -> {
            queue.client().enqueue("send-push", "rolled back");
            queue.client().enqueueAll(List.of(JobRequest.of("copy-folder", 1), JobRequest.of("copy-folder", 2)));
            queue.client().enqueue("send-push", "deduped", EnqueueOptions.defaults().withDedupKey("k"));
            status.setRollbackOnly();
        });

        assertThat(queue.totalJobs()).isZero();
    }

    @Test
    void enqueuesAreCountedWhenTheyCommitNotWhenTheyRollBack() {
        List<String> counted = new CopyOnWriteArrayList<>();
        QueueEvents events = new QueueEvents() {
            @Override
            public void enqueued(String task, EnqueueOutcome outcome) {
                counted.add(task + ":" + outcome);
            }
        };
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(queue.dataSource()));
        try (QueueClient client = PgQueue.builder(queue.dataSource()).config(queue.config())
            .tasks(TaskRegistry.of(TestQueue.task("send-push"))).telemetry(new QueueTelemetry(events, ObservationRegistry.NOOP))
            .build().client()) {
            tx.executeWithoutResult(status -> {
                client.enqueue("send-push", "rolled back");
                assertThat(counted).as("counted before the commit").isEmpty();
                status.setRollbackOnly();
            });
            assertThat(counted).as("counted after a rollback").isEmpty();

            tx.executeWithoutResult(status -> client.enqueue("send-push", "committed"));
            assertThat(counted).containsExactly("send-push:CREATED");

            client.enqueue("send-push", "no transaction");
            assertThat(counted).hasSize(2);
        }
    }

    @Test
    void notifiesOncePerBatchAndTaskOnCommit() throws Exception {
        try (HikariDataSource pool = queue.database().newDataSource(1); Connection listener = pool.getConnection()) {
            listener.createStatement().execute("LISTEN \"pgqueue.send-push\"; LISTEN \"pgqueue.copy-folder\"");
            PGConnection pg = listener.unwrap(PGConnection.class);

            List<JobRequest> batch = new ArrayList<>();
            for (int i = 0; i < 50; i++) {
                batch.add(JobRequest.of("send-push", i));
            }
            batch.add(JobRequest.of("copy-folder", "later", EnqueueOptions.defaults().withDelay(Duration.ofHours(1))));
            queue.client().enqueueAll(batch);

            List<String> channels = new ArrayList<>();
            for (PGNotification n : receive(pg)) {
                channels.add(n.getName());
            }
            // One notification for the 50 due send-push jobs, none for the scheduled copy-folder job.
            assertThat(channels).containsExactly("pgqueue.send-push");

            TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(queue.dataSource()));
            tx.executeWithoutResult(status -> {
                queue.client().enqueue("copy-folder", 1);
                queue.client().enqueue("copy-folder", 2);
                status.setRollbackOnly();
            });
            assertThat(receive(pg)).isEmpty();
        }
    }

    private static List<PGNotification> receive(PGConnection pg) throws Exception {
        PGNotification[] notifications = pg.getNotifications(500);
        return notifications == null ? List.of() : List.of(notifications);
    }

    @Test
    void rejectsBadInputAndWritesNothing() {
        class NotSerializable {
            private final Object self = this;

            public Object getSelf() {
                return this.self;
            }
        }
        EnqueueOptions none = EnqueueOptions.defaults();
        assertThatThrownBy(() -> queue.client().enqueue(" ", 1)).isInstanceOf(InvalidJobException.class)
            .hasMessageContaining("must not be blank");
        assertThatThrownBy(() -> queue.client().enqueue((String) null, 1)).isInstanceOf(InvalidJobException.class);
        assertThatThrownBy(() -> queue.client().enqueue("send-pushh", 1)).isInstanceOf(UnknownTaskException.class)
            .hasMessageContaining("Unknown task 'send-pushh'")
            .hasMessageContaining("[copy-folder, send-push]");
        assertThatThrownBy(() -> queue.client().enqueue("send-push", new NotSerializable()))
            .isInstanceOf(InvalidJobException.class)
            .hasMessageContaining("cannot be written as JSON");
        assertThatThrownBy(() -> queue.client().enqueue("send-push", "x".repeat(QueueDefaults.MAX_PAYLOAD_BYTES)))
            .isInstanceOf(PayloadTooLargeException.class)
            .hasMessageContaining("over the limit of 262144 bytes");
        assertThatThrownBy(() -> queue.client().enqueue("send-push", 1, none.withDelay(Duration.ofSeconds(-1))))
            .isInstanceOf(InvalidJobException.class).hasMessageContaining("delay of a 'send-push' job must not be negative");
        assertThatThrownBy(() -> queue.client().enqueue("send-push", 1, none.withDelayTolerance(Duration.ofSeconds(-1))))
            .isInstanceOf(InvalidJobException.class).hasMessageContaining("delay tolerance");
        assertThatThrownBy(() -> queue.client().enqueue("send-push", 1, none.withPriority(1001)))
            .isInstanceOf(InvalidJobException.class).hasMessageContaining("between -1000 and 1000");
        assertThatThrownBy(() -> queue.client().enqueue("send-push", 1, none.withPriority(-1001)))
            .isInstanceOf(InvalidJobException.class);
        assertThatThrownBy(() -> queue.client().enqueue("send-push", 1, none.withMaxAttempts(0)))
            .isInstanceOf(InvalidJobException.class).hasMessageContaining("at least 1");
        assertThatThrownBy(() -> queue.client().enqueue("send-push", 1, none.withDedupKey(" ")))
            .isInstanceOf(InvalidJobException.class).hasMessageContaining("Dedup key");
        // One bad job spoils the whole batch.
        assertThatThrownBy(() -> queue.client().enqueueAll(List.of(JobRequest.of("send-push", 1),
                JobRequest.of("nope", 2)))).isInstanceOf(UnknownTaskException.class);

        assertThat(queue.totalJobs()).isZero();
    }

    @Test
    void acceptsAPayloadJustUnderTheLimit() {
        QueueConfig small = QueueConfig.defaults().withMaxPayloadBytes(100);
        TestQueue limited = TestQueue.on(queue.dataSource(), small, TestQueue.task("send-push"));

        // 98 characters plus the JSON quotes: exactly 100 bytes.
        assertThat(limited.client().enqueue("send-push", "é".repeat(49)).created()).isTrue();
        assertThatThrownBy(() -> limited.client().enqueue("send-push", "é".repeat(50)))
            .isInstanceOf(PayloadTooLargeException.class).hasMessageContaining("is 102 bytes");
    }

    private static long countFromAnotherConnection() {
        try (HikariDataSource pool = queue.database().newDataSource(1); Connection other = pool.getConnection()) {
            var rs = other.createStatement().executeQuery("SELECT count(*) FROM pgqueue.job");
            rs.next();
            return rs.getLong(1);
        }
        catch (Exception ex) {
            throw new IllegalStateException(ex);
        }
    }
}
