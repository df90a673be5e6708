package io.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.pgqueue.QueueAdminException.Reason;
import io.pgqueue.internal.shard.PartitionHash;
import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.schedule.Schedule;
import io.pgqueue.testing.TestShards;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The reasons {@link QueueAdmin} gives for refusing an operator's request — what an HTTP front
 * turns into 404, 409 or 400 — and that a refused request changes nothing.
 */
class QueueAdminTests {

    private static final TaskRegistry TASKS = TaskRegistry.of(List.of(TaskDefinition.builder("mail").build()));

    @RegisterExtension
    final TestShards databases = TestShards.perTest("admin", 2);

    private final List<PgQueue> queues = new ArrayList<>();

    @AfterEach
    void stop() {
        this.queues.forEach(PgQueue::stop);
    }

    @Test
    void anUnknownJobOrTaskIsNotFound() {
        QueueAdmin admin = unsharded().admin();

        assertRefused(() -> admin.rerun(987654L), Reason.NOT_FOUND, "No job has id 987654");
        assertRefused(() -> admin.cancel(987654L), Reason.NOT_FOUND, "No job has id 987654");
        assertRefused(() -> admin.pause("no-such-task"), Reason.NOT_FOUND, "Unknown task 'no-such-task'");
        assertRefused(() -> admin.rerunFailed("no-such-task"), Reason.NOT_FOUND, "Unknown task 'no-such-task'");
        assertRefused(() -> admin.recentFailures("no-such-task", 5), Reason.NOT_FOUND, "Unknown task 'no-such-task'");
    }

    @Test
    void aJobWhoseStateForbidsTheActionIsAConflictAndStaysAsItWas() {
        PgQueue queue = unsharded();
        QueueAdmin admin = queue.admin();
        long ready = queue.client().enqueue("mail", Map.of()).jobId();

        assertRefused(() -> admin.rerun(ready), Reason.CONFLICT, "is READY; only FAILED jobs can be re-run");
        assertThat(queue.client().find(ready)).get().extracting(JobSnapshot::state).isEqualTo(JobState.READY);
        assertThat(admin.cancel(ready)).isEqualTo(CancelResult.CANCELLED);
        assertRefused(() -> admin.cancel(ready), Reason.CONFLICT, "has already finished");

        // A failed job whose dedup key a newer active job holds is not re-run.
        long failed = fail(queue, "order-1");
        long holder = queue.client().enqueue("mail", Map.of(), EnqueueOptions.defaults().withDedupKey("order-1")).jobId();
        assertRefused(() -> admin.rerun(failed), Reason.CONFLICT, "an active job holds its dedup key 'order-1'");
        assertThat(queue.client().find(failed)).get().extracting(JobSnapshot::state).isEqualTo(JobState.FAILED);
        assertThat(queue.client().find(holder)).get().extracting(JobSnapshot::state).isEqualTo(JobState.READY);
    }

    @Test
    void aScheduleOfAnUnknownTaskIsNotFoundAConfiguredOneAConflictAndABadPayloadInvalid() {
        PgQueue queue = unsharded();
        QueueAdmin admin = queue.admin();
        Engines.of(queue).scheduler().configure(List.of(Schedule.of("configured", "mail", "@daily")), List.of("mail"));

        assertRefused(() -> admin.putSchedule(Schedule.of("configured", "mail", "@hourly")), Reason.CONFLICT,
                "is configured with its task");
        assertRefused(() -> admin.removeSchedule("configured"), Reason.CONFLICT, "is configured with its task");
        assertRefused(() -> admin.putSchedule(Schedule.of("elsewhere", "no-such-task", "@daily")), Reason.NOT_FOUND,
                "Unknown task 'no-such-task'");
        assertRefused(() -> admin.putSchedule(Schedule.of("garbled", "mail", "@daily").withPayload("not json")),
                Reason.INVALID, "is not JSON");
        assertThat(admin.schedules()).extracting(info -> info.schedule().name()).containsExactly("configured");
        assertThat(admin.schedules().get(0).schedule().cron()).isEqualTo("@daily");
    }

    @Test
    void aPartitionMoveInAnUnshardedQueueIsInvalid() {
        QueueAdmin admin = unsharded().admin();

        assertRefused(() -> admin.movePartition(0, "b"), Reason.INVALID, "The queue is unsharded");
    }

    @Test
    void aPartitionMoveTellsAnUnknownPartitionOrShardFromAPartitionThatIsThereAlready() {
        PgQueue queue = PgQueue.builder(this.databases.get(0).dataSource())
            .tasks(TASKS)
            .shard("b", this.databases.get(1).dataSource())
            .migrateSchema(true)
            .build();
        this.queues.add(queue);
        QueueAdmin admin = queue.admin();
        int partition = PartitionHash.partitionOf("order-1", Engines.of(queue).shards().partitions());
        String holder = Engines.of(queue).shards().shardOf(partition).name();

        assertRefused(() -> admin.movePartition(Engines.of(queue).shards().partitions(), "b"), Reason.NOT_FOUND,
                "There is no partition " + Engines.of(queue).shards().partitions());
        assertRefused(() -> admin.movePartition(-1, "b"), Reason.NOT_FOUND, "There is no partition -1");
        assertRefused(() -> admin.movePartition(partition, "nowhere"), Reason.NOT_FOUND, "There is no shard 'nowhere'");
        assertRefused(() -> admin.movePartition(partition, holder), Reason.CONFLICT,
                "Partition " + partition + " is on shard '" + holder + "' already");
        assertThat(Engines.of(queue).shards().shardOf(partition).name()).isEqualTo(holder);
    }

    private PgQueue unsharded() {
        PgQueue queue = PgQueue.builder(this.databases.get(0).dataSource()).tasks(TASKS).migrateSchema(true).build();
        this.queues.add(queue);
        return queue;
    }

    /** Enqueues a job with the dedup key and has it fail for good; @return its id */
    private static long fail(PgQueue queue, String dedupKey) {
        long id = queue.client().enqueue("mail", Map.of(), EnqueueOptions.defaults().withDedupKey(dedupKey)).jobId();
        JobStore jobs = Engines.of(queue).shards().main().stores().jobs();
        ClaimedJob claimed = jobs.claim(List.of(new ClaimLimit("mail", 1)), "node/p", JobState.RUNNING,
                Duration.ofMinutes(1)).get(0);
        assertThat(claimed.id()).isEqualTo(id);
        jobs.record(List.of(Outcome.failed(claimed.lease(), "boom")));
        return id;
    }

    private static void assertRefused(ThrowingCallable request, Reason reason, String message) {
        assertThatThrownBy(request).isInstanceOfSatisfying(QueueAdminException.class,
                ex -> assertThat(ex.reason()).isEqualTo(reason)).hasMessageContaining(message);
    }
}
