package io.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.pgqueue.JobQuery.Group;
import io.pgqueue.JobQuery.JsonMatch;
import io.pgqueue.QueueAdminException.Reason;
import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.testing.TestShards;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Bulk actions on every job a filter matches ({@link QueueAdmin#startBulk}): batch after batch,
 * each job changed only while it is in a group the action applies to, progress and the audit trail
 * recorded, on one database and over shards.
 */
class BulkActionTests {

    private static final TaskRegistry TASKS = TaskRegistry.of(List.of(TaskDefinition.builder("mail").build(),
            TaskDefinition.builder("report").build()));

    @RegisterExtension
    final TestShards databases = TestShards.perTest("bulk", 2);

    private final List<PgQueue> queues = new ArrayList<>();

    @AfterEach
    void stop() {
        this.queues.forEach(PgQueue::stop);
    }

    @Test
    void aBulkCancelRacingClaimsLeavesNoMatchingJobDueAndCountsEveryJobItChanged() throws Exception {
        PgQueue queue = unsharded();
        List<JobRequest> requests = new ArrayList<>();
        for (int i = 0; i < 4_000; i++) {
            requests.add(JobRequest.of("mail", Map.of("n", i), i % 4 == 0 ? EnqueueOptions.defaults()
                    : EnqueueOptions.defaults().withTags("campaign-7")));
        }
        queue.client().enqueueAll(requests);
        JobStore store = Engines.of(queue).stores().jobs();
        AtomicBoolean acting = new AtomicBoolean(true);
        AtomicInteger claimed = new AtomicInteger();
        Thread claimer = new Thread(() -> {
            while (acting.get()) {
                claimed.addAndGet(store.claim(List.of(new ClaimLimit("mail", 40)), "node-x", JobState.RUNNING,
                        Duration.ofMinutes(5)).size());
            }
        });
        QueueAdmin admin = queue.admin().as("alice");
        QueueAction started = admin.startBulk(JobQuery.of(Group.READY).withTags(List.of("campaign-7")), BulkAction.cancel());
        claimer.start();
        assertThat(started.state()).isEqualTo(QueueAction.State.RUNNING);
        assertThat(started.matched()).isEqualTo(3_000);
        QueueAction done = await().atMost(Duration.ofSeconds(60)).until(() -> admin.action(started.id()).orElseThrow(),
                action -> action.state() != QueueAction.State.RUNNING);
        acting.set(false);
        claimer.join();

        assertThat(done.state()).isEqualTo(QueueAction.State.DONE);
        assertThat(done.actor()).isEqualTo("alice");
        JdbcTemplate jdbc = new JdbcTemplate(this.databases.get(0).dataSource());
        long cancelled = jdbc.queryForObject("SELECT count(*) FROM pgqueue.job_finished WHERE state = 'CANCELLED' "
                + "AND headers ->> 'pgqueue.tags' = 'campaign-7'", Long.class);
        long asked = jdbc.queryForObject("SELECT count(*) FROM pgqueue.job WHERE cancel_requested", Long.class);
        assertThat(done.acted()).as("cancelled at once, or asked to stop once claimed").isEqualTo(cancelled + asked);
        assertThat(done.acted() + done.skipped()).isLessThanOrEqualTo(3_000);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM pgqueue.job WHERE state = 'READY' "
                + "AND headers ->> 'pgqueue.tags' = 'campaign-7'", Long.class)).as("no matching job left due").isZero();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM pgqueue.job_finished WHERE headers ->> 'pgqueue.tags' "
                + "IS NULL", Long.class)).as("jobs without the tag untouched").isZero();
        assertThat(cancelled + claimed.get()).as("every tagged job cancelled or claimed, or an untagged one claimed")
            .isGreaterThanOrEqualTo(3_000);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM pgqueue.job_finished f JOIN pgqueue.job j USING (id)",
                Long.class)).as("no job both cancelled and active").isZero();

        QueueAction again = admin.bulk(JobQuery.of(Group.READY).withTags(List.of("campaign-7")), BulkAction.cancel());
        assertThat(again.matched()).isZero();
        assertThat(again.acted()).as("repeated, it finds nothing left").isZero();
    }

    @Test
    void eachActionChangesItsGroupsJobsOnceAndARepeatActsOnNothingMore() {
        PgQueue queue = unsharded();
        QueueAdmin admin = queue.admin();
        JobStore store = Engines.of(queue).stores().jobs();
        List<Long> failed = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            failed.add(queue.client().enqueue("report", Map.of("region", i % 2 == 0 ? "north" : "south")).jobId());
        }
        for (ClaimedJob job : store.claim(List.of(new ClaimLimit("report", 30)), "node-x", JobState.RUNNING,
                Duration.ofMinutes(5))) {
            store.record(List.of(Outcome.failed(job.lease(), "boom")));
        }
        JobQuery north = JobQuery.of(Group.FAILED).withMatch(JsonMatch.parse("payload.region=north"));

        QueueAction rerun = admin.bulk(north, BulkAction.rerun());
        assertThat(rerun.acted()).isEqualTo(15);
        assertThat(admin.count(JobQuery.of(Group.READY).withTask("report"))).isEqualTo(15);
        assertThat(admin.bulk(north, BulkAction.rerun()).acted()).isZero();

        Instant later = Instant.now().plus(Duration.ofHours(3)).truncatedTo(ChronoUnit.SECONDS);
        QueueAction deferred = admin.bulk(JobQuery.of(Group.READY).withTask("report"), BulkAction.runAt(later));
        assertThat(deferred.acted()).isEqualTo(15);
        assertThat(admin.count(JobQuery.of(Group.SCHEDULED).withTask("report"))).isEqualTo(15);
        assertThat(queue.client().find(failed.get(0)).orElseThrow().scheduleTime()).isEqualTo(later);

        QueueAction prioritized = admin.bulk(JobQuery.of(Group.SCHEDULED), BulkAction.priority(7));
        assertThat(prioritized.acted()).isEqualTo(15);
        assertThat(admin.bulk(JobQuery.of(Group.SCHEDULED), BulkAction.priority(7)).acted()).as("already 7").isZero();
        assertThat(queue.client().find(failed.get(0)).orElseThrow().priority()).isEqualTo(7);

        assertThat(admin.bulk(JobQuery.of(Group.SCHEDULED), BulkAction.runNow()).acted()).isEqualTo(15);
        assertThat(admin.count(JobQuery.of(Group.READY))).isEqualTo(15);

        QueueAction deleted = admin.bulk(JobQuery.of(Group.FAILED), BulkAction.delete());
        assertThat(deleted.acted()).isEqualTo(15);
        assertThat(deleted.message()).isEqualTo("delete: 15 jobs, 0 skipped");
        assertThat(admin.count(JobQuery.of(Group.FAILED))).isZero();
        assertThat(admin.count(JobQuery.of(Group.READY))).as("other groups untouched").isEqualTo(15);
    }

    @Test
    void anActionOutsideItsGroupsIsRefusedAndRecordsNothing() {
        QueueAdmin admin = unsharded().admin();
        assertThatThrownBy(() -> admin.startBulk(JobQuery.of(Group.RUNNING), BulkAction.delete()))
            .isInstanceOfSatisfying(QueueAdminException.class, ex -> assertThat(ex.reason()).isEqualTo(Reason.INVALID))
            .hasMessageContaining("A delete action applies to")
            .hasMessageContaining("not RUNNING");
        assertThatThrownBy(() -> admin.bulk(JobQuery.of(Group.COMPLETED), BulkAction.rerun()))
            .isInstanceOf(QueueAdminException.class).hasMessageContaining("not COMPLETED");
        assertThatThrownBy(() -> BulkAction.of("run-at", "tomorrow", null))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("is not an instant");
        assertThatThrownBy(() -> BulkAction.of("priority", null, "high"))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("whole-number priority");
        assertThatThrownBy(() -> BulkAction.priority(QueueDefaults.MAX_PRIORITY + 1))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must be between");
        assertThatThrownBy(() -> BulkAction.of("purge", null, null))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("Unknown bulk action 'purge'");
        assertThat(admin.actions(null, 10)).isEmpty();
    }

    @Test
    void everyActionIsRecordedWithWhoTookItWhatAndHowManyJobs() {
        PgQueue queue = unsharded();
        QueueAdmin bob = queue.admin().as("bob");
        long job = queue.client().enqueue("mail", Map.of()).jobId();

        bob.pause("mail");
        bob.resume("mail");
        bob.cancel(job);
        queue.admin().rescueNow();

        List<QueueAction> trail = bob.actions(null, 10);
        assertThat(trail).extracting(QueueAction::action).containsExactly("rescue", "cancel", "resume", "pause");
        assertThat(trail).extracting(QueueAction::actor).containsExactly(null, "bob", "bob", "bob");
        assertThat(trail.get(1)).satisfies(cancel -> {
            assertThat(cancel.target()).isEqualTo("job " + job);
            assertThat(cancel.acted()).isOne();
            assertThat(cancel.state()).isEqualTo(QueueAction.State.DONE);
            assertThat(cancel.finishedAt()).isNotNull();
        });
        assertThat(bob.actions(trail.get(1).id(), 10)).extracting(QueueAction::action).containsExactly("resume", "pause");
        assertThat(bob.action(trail.get(3).id())).get().extracting(QueueAction::message).isEqualTo("Paused");
    }

    @Test
    void aRunningActionWhoseNodeWentSilentReadsStopped() {
        QueueAdmin admin = unsharded().admin();
        JdbcTemplate jdbc = new JdbcTemplate(this.databases.get(0).dataSource());
        long silent = jdbc.queryForObject("INSERT INTO pgqueue.queue_action (action, target, state, matched, node, updated_at) "
                + "VALUES ('cancel', 'READY jobs', 'RUNNING', 10, 'gone', now() - interval '6 minutes') RETURNING id", Long.class);
        long alive = jdbc.queryForObject("INSERT INTO pgqueue.queue_action (action, target, state, matched, node) "
                + "VALUES ('cancel', 'READY jobs', 'RUNNING', 10, 'busy') RETURNING id", Long.class);

        assertThat(admin.action(silent)).get().satisfies(action -> {
            assertThat(action.state()).isEqualTo(QueueAction.State.STOPPED);
            assertThat(action.message()).startsWith("No sign of its node since ").endsWith("it stopped. Running the "
                    + "action again acts on the jobs left");
        });
        assertThat(admin.action(alive)).get().extracting(QueueAction::state).isEqualTo(QueueAction.State.RUNNING);
        assertThat(admin.actions(null, 10)).extracting(QueueAction::state)
            .containsExactly(QueueAction.State.RUNNING, QueueAction.State.STOPPED);
    }

    @Test
    void aBulkActionOverShardsCountsAndActsOnEveryShard() {
        PgQueue queue = PgQueue.builder(this.databases.get(0).dataSource())
            .tasks(TASKS)
            .shard("b", this.databases.get(1).dataSource())
            .migrateSchema(true)
            .build();
        this.queues.add(queue);
        queue.start();
        List<JobRequest> requests = new ArrayList<>();
        for (int i = 0; i < 600; i++) {
            requests.add(JobRequest.of("report", Map.of("n", i), EnqueueOptions.defaults().withPartitionKey("tenant-" + i)
                    .withDelay(Duration.ofHours(1))));
        }
        queue.client().enqueueAll(requests);
        await().atMost(Duration.ofSeconds(30)).until(() -> queue.admin().count(JobQuery.of(Group.SCHEDULED)) == 600);
        JdbcTemplate b = new JdbcTemplate(this.databases.get(1).dataSource());
        assertThat(b.queryForObject("SELECT count(*) FROM pgqueue.job", Long.class)).as("jobs on shard b").isPositive();

        QueueAction done = queue.admin().bulk(JobQuery.of(Group.SCHEDULED), BulkAction.priority(3));

        assertThat(done.matched()).isEqualTo(600);
        assertThat(done.acted()).isEqualTo(600);
        assertThat(b.queryForObject("SELECT count(*) FROM pgqueue.job WHERE priority <> 3", Long.class)).isZero();
        assertThat(new JdbcTemplate(this.databases.get(0).dataSource())
            .queryForObject("SELECT count(*) FROM pgqueue.job WHERE priority <> 3", Long.class)).isZero();
    }

    private PgQueue unsharded() {
        PgQueue queue = PgQueue.builder(this.databases.get(0).dataSource()).tasks(TASKS).migrateSchema(true).build();
        this.queues.add(queue);
        return queue;
    }
}
