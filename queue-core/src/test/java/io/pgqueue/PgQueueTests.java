package io.pgqueue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.pgqueue.store.QueueSchema;
import io.pgqueue.testing.TestDatabase;
import io.pgqueue.worker.WorkerSettings;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The core's one entry point, used as an application without Spring Boot would: build, start,
 * enqueue, see the job run, stop and start again.
 */
class PgQueueTests {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.perClass();

    record Push(String owner, String message) {
    }

    @Test
    void buildsMigratesRunsJobsAndStops() throws Exception {
        CountDownLatch ran = new CountDownLatch(2);
        WorkerTask task = WorkerTask.of("send-push", (Push push, TaskContext context) -> {
            if (push.owner().equals("ann")) {
                ran.countDown();
            }
        }, Push.class);
        PgQueue queue = PgQueue.builder(db.dataSource())
            .migrateSchema(true)
            .workers(WorkerSettings.builder("node-1").pollInterval(Duration.ofMillis(200)).build(), List.of(task))
            .build();
        assertThat(Engines.of(queue).workers()).isEmpty();

        queue.start();
        try {
            assertThat(queue.isWorking()).isTrue();
            assertThat(Engines.of(queue).workers()).hasValueSatisfying(workers -> assertThat(workers.nodeId()).isEqualTo("node-1"));
            assertThat(queue.client().enqueue("send-push", new Push("ann", "hi")).created()).isTrue();
            queue.client().enqueue("send-push", new Push("ann", "again"));
            assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(queue.admin().knownTasks()).contains("send-push");
            assertThat(queue.admin().rescueNow()).isEmpty();
        }
        finally {
            queue.stop();
        }
        assertThat(queue.isWorking()).isFalse();
        queue.stop();
    }

    @Test
    void workersStartAgainAfterAStop() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        PgQueue queue = PgQueue.builder(db.dataSource())
            .migrateSchema(true)
            .workers(WorkerSettings.builder("node-2").pollInterval(Duration.ofMillis(200)).build(),
                    List.of(WorkerTask.of("restart", (String payload, TaskContext context) -> ran.countDown(), String.class)))
            .build();
        queue.startWorkers();
        queue.stopWorkers();

        queue.startWorkers();
        try {
            queue.client().enqueue("restart", "x");
            assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        }
        finally {
            queue.stop();
        }
    }

    @Test
    void anEnqueueOnlyQueueHasNoWorkersAndKnowsItsDeclaredTasks() {
        PgQueue queue = PgQueue.builder(db.dataSource())
            .migrateSchema(true)
            .tasks(TaskRegistry.of(TaskDefinition.builder("remote").maxAttempts(3).build()))
            .build();
        queue.start();
        try {
            assertThat(queue.workerSettings()).isEmpty();
            assertThat(Engines.of(queue).workers()).isEmpty();
            assertThat(queue.client().enqueue("remote", Map.of("a", 1)).created()).isTrue();
            assertThatThrownBy(() -> queue.client().enqueue("undeclared", "x")).isInstanceOf(UnknownTaskException.class);
            assertThat(Engines.of(queue).stores().jobs()).isSameAs(Engines.of(queue).stores().jobs());
        }
        finally {
            queue.stop();
        }
    }

    @Test
    void workersRefuseASchemaThatIsNotMigrated() {
        PgQueue queue = PgQueue.builder(db.dataSource())
            .config(QueueConfig.defaults().withSchema("never_migrated"))
            .workers(WorkerSettings.builder("node-3").build(),
                    List.of(WorkerTask.of("t", (String payload, TaskContext context) -> {
                    }, String.class)))
            .build();

        assertThatThrownBy(queue::startWorkers).isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining(QueueSchema.MIGRATION_LOCATION);
        assertThat(queue.isWorking()).isFalse();
    }
}
