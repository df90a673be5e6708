package io.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.pgqueue.EnqueueOptions;
import io.pgqueue.EnqueueResult;
import io.pgqueue.JobRequest;
import io.pgqueue.JobState;
import io.pgqueue.PgQueue;
import io.pgqueue.QueueAdmin;
import io.pgqueue.QueueAdminException;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.observe.QueueMeterBinder;
import io.pgqueue.observe.QueueStatistics;
import io.pgqueue.observe.QueueStats;
import io.pgqueue.schedule.Schedules;
import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The queues endpoint, the queue health and the metrics on a real PostgreSQL, with jobs in every
 * state. Workers are off, except for the pools' meters, so that jobs stay where the test puts them;
 * a "worker" that claims and then stops heartbeating produces the stuck leases.
 */
@Order(1)
class QueueMonitoringTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withInitializer(new TestDatabaseInitializer())
        .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JacksonAutoConfiguration.class,
                QueueAutoConfiguration.class, QueueMetricsAutoConfiguration.class, QueueEndpointAutoConfiguration.class,
                QueueHealthAutoConfiguration.class, MetricsAutoConfiguration.class))
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withPropertyValues("pgqueue.workers.enabled=false", "pgqueue.tasks.push.max-attempts=3",
                "pgqueue.tasks.copy.max-attempts=1", "pgqueue.rescue.interval=500ms", "pgqueue.stats.interval=1h",
                "management.endpoints.web.exposure.include=queues,health");

    @Test
    void endpointHealthAndGaugesSeeEveryState() {
        this.runner.run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(QueueEndpoint.class).hasSingleBean(QueueHealthIndicator.class);
            QueueClient client = context.getBean(QueueClient.class);
            JobStore store = jobStore(context.getBean(PgQueue.class));
            QueueStatistics stats = context.getBean(QueueStatistics.class);
            QueueEndpoint endpoint = context.getBean(QueueEndpoint.class);
            QueueHealthIndicator health = context.getBean(QueueHealthIndicator.class);

            client.enqueueAll(List.of(JobRequest.of("push", 1), JobRequest.of("push", 2), JobRequest.of("push", 3),
                    JobRequest.of("push", 4, EnqueueOptions.defaults().withDelay(Duration.ofHours(1)))));
            for (int i = 0; i < 3; i++) {
                client.enqueue("copy", i);
            }
            // copy: one running, one failed (its only attempt), one stuck (claimed, then silence).
            List<ClaimedJob> running = store.claim(List.of(new ClaimLimit("copy", 1)), "worker-1", JobState.RUNNING,
                    Duration.ofHours(1));
            List<ClaimedJob> failing = store.claim(List.of(new ClaimLimit("copy", 1)), "worker-1", JobState.RUNNING,
                    Duration.ofHours(1));
            store.record(List.of(Outcome.failed(failing.get(0).lease(), "disk full")));
            store.claim(List.of(new ClaimLimit("copy", 1)), "worker-2", JobState.STARTING, Duration.ofMillis(1));
            await().atMost(Duration.ofSeconds(5)).until(() -> stats.refresh().task("copy").stuck() == 1);

            Map<String, Object> all = endpoint.queues();
            Map<String, Object> push = map(map(all.get("tasks")).get("push"));
            assertThat(map(push.get("counts"))).containsEntry("ready", 3L).containsEntry("scheduled", 1L);
            assertThat((double) push.get("oldestDueAgeSeconds")).isGreaterThanOrEqualTo(0.0);
            Map<String, Object> copy = map(map(all.get("tasks")).get("copy"));
            assertThat(map(copy.get("counts"))).containsEntry("running", 1L).containsEntry("starting", 1L)
                .containsEntry("failed", 1L).containsEntry("ready", 0L);
            assertThat(copy.get("stuckLeases")).isEqualTo(1L);
            assertThat(copy.get("paused")).isEqualTo(false);
            Map<String, Object> copyDetail = endpoint.task("copy");
            assertThat(copyDetail.get("recentFailures")).asString().contains("disk full");

            // Gauges read the same cached numbers.
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            assertThat(meters.get("pgqueue.jobs").tags("task", "push", "state", "ready").gauge().value()).isEqualTo(3);
            assertThat(meters.get("pgqueue.jobs").tags("task", "copy", "state", "failed").gauge().value()).isEqualTo(1);
            assertThat(meters.get("pgqueue.jobs.stuck").tags("task", "copy").gauge().value()).isEqualTo(1);

            // The stuck lease outlives one rescue interval: the health turns DOWN and says why.
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                stats.refresh();
                return health.health().getStatus().equals(Status.DOWN);
            });
            Health down = health.health();
            assertThat(down.getDetails()).containsKey("stuckLeases");
            assertThat(down.getDetails().get("stuckLeases")).isEqualTo(Map.of("copy", 1L));

            // Rescue now: the stuck job goes back (its only attempt spent: FAILED), health is UP again.
            Map<String, Object> rescued = endpoint.taskAction("copy", "rescue");
            assertThat(rescued.get("rescued")).isEqualTo(Map.of(JobState.FAILED, 1L));
            assertThat(health.health().getStatus()).isEqualTo(Status.UP);

            // Re-run every failed copy job; then one by id is no longer FAILED.
            Map<String, Object> rerun = endpoint.taskAction("copy", "rerun-failed");
            assertThat((List<?>) rerun.get("rerun")).hasSize(2);
            assertThat(client.find(failing.get(0).id()).orElseThrow().state()).isEqualTo(JobState.READY);
            assertThatThrownBy(() -> endpoint.jobAction("copy", failing.get(0).id(), "rerun"))
                .isInstanceOf(InvalidEndpointRequestException.class).hasMessageContaining("only FAILED jobs can be re-run")
                .cause().isInstanceOfSatisfying(QueueAdminException.class,
                        refused -> assertThat(refused.reason()).isEqualTo(QueueAdminException.Reason.CONFLICT));

            // Cancel a waiting job; cancelling it again is a bad request.
            long waiting = failing.get(0).id();
            assertThat(endpoint.jobAction("copy", waiting, "cancel")).containsEntry("result",
                    io.pgqueue.CancelResult.CANCELLED);
            assertThatThrownBy(() -> endpoint.jobAction("copy", waiting, "cancel"))
                .isInstanceOf(InvalidEndpointRequestException.class).hasMessageContaining("already finished");
            assertThat(running).hasSize(1);
        });
    }

    @Test
    void pauseResumeAndBadInputChangeNothingElse() {
        this.runner.run(context -> {
            QueueEndpoint endpoint = context.getBean(QueueEndpoint.class);
            context.getBean(QueueClient.class).enqueue("push", 1);

            assertThat(endpoint.taskAction("push", "pause")).containsEntry("changed", true);
            assertThat(endpoint.taskAction("push", "pause")).containsEntry("changed", false);
            assertThat(map(map(endpoint.queues().get("tasks")).get("push")).get("paused")).isEqualTo(true);
            assertThat(endpoint.taskAction("push", "resume")).containsEntry("changed", true);

            assertThatThrownBy(() -> endpoint.taskAction("no-such-task", "pause"))
                .isInstanceOf(InvalidEndpointRequestException.class).hasMessageContaining("Unknown task 'no-such-task'");
            assertThatThrownBy(() -> endpoint.taskAction("push", "explode"))
                .isInstanceOf(InvalidEndpointRequestException.class).hasMessageContaining("Unknown action 'explode'");
            assertThatThrownBy(() -> endpoint.taskAction("push", null))
                .isInstanceOf(InvalidEndpointRequestException.class).hasMessageContaining("Missing 'action'");
            assertThatThrownBy(() -> endpoint.jobAction("push", 987654L, "rerun"))
                .isInstanceOf(InvalidEndpointRequestException.class).hasMessageContaining("No job has id 987654");
            assertThatThrownBy(() -> endpoint.task("nope")).isInstanceOf(InvalidEndpointRequestException.class);
            assertThat(map(map(endpoint.queues().get("tasks")).get("push")).get("paused")).isEqualTo(false);
        });
    }

    @Test
    void writesOverHttpAnswerNotFoundConflictOrBadRequestByWhatWasWrong() {
        this.runner.run(context -> {
            QueueEndpointWebExtension web = context.getBean(QueueEndpointWebExtension.class);
            long waiting = context.getBean(QueueClient.class).enqueue("push", 1).jobId();
            String id = String.valueOf(waiting);

            assertRejected(web.jobAction("push", "987654", "rerun"), 404, "No job has id 987654");
            assertRejected(web.jobAction("push", "987654", "cancel"), 404, "No job has id 987654");
            assertRejected(web.jobAction("no-such-task", id, "rerun"), 404, "Unknown task 'no-such-task'");
            assertRejected(web.taskAction("no-such-task", "pause", null, null, null, null, null), 404,
                    "Unknown task 'no-such-task'");
            assertRejected(web.task("no-such-task"), 404, "Unknown task 'no-such-task'");
            assertRejected(web.shardAction("shards", "shard", "nowhere", "drain", null), 404,
                    "There is no shard 'nowhere'");

            assertRejected(web.jobAction("push", id, "rerun"), 409, "Job " + waiting + " is READY; only FAILED jobs "
                    + "can be re-run");
            // Another task's path does not reach the job.
            assertRejected(web.jobAction("copy", id, "cancel"), 404, "Job " + waiting + " is a job of task 'push', not "
                    + "of 'copy'");
            assertThat(context.getBean(QueueClient.class).find(waiting)).hasValueSatisfying(
                    job -> assertThat(job.state()).isEqualTo(JobState.READY));
            assertThat(web.jobAction("push", id, "cancel").getStatus()).isEqualTo(200);
            assertRejected(web.jobAction("push", id, "cancel"), 409, "Job " + waiting + " has already finished");

            assertRejected(web.jobAction("push", "abc", "rerun"), 400, "Job id 'abc' is not a number");
            assertRejected(web.jobAction("push", id, "explode"), 400, "Unknown action 'explode' for a job");
            assertRejected(web.taskAction("push", null, null, null, null, null, null), 400, "Missing 'action'");
            assertRejected(web.taskAction("push", "schedule", "bad", "nightly", null, null, null), 400,
                    "'nightly' for 'cron'");
            assertRejected(web.shardAction("shards", "partitions", "x", "move", "b"), 400, "Partition 'x' is not a number");
            assertRejected(web.shardAction("shards", "partitions", "3", "move", "b"), 400, "The queue is unsharded");
        });
    }

    @Test
    void aNulCharacterInAnyWriteIsAClientErrorNamingTheFieldAndWritesNothing() {
        this.runner.run(context -> {
            QueueEndpointWebExtension web = context.getBean(QueueEndpointWebExtension.class);

            assertRejected(web.taskAction("pu\u0000sh", "pause", null, null, null, null, null), 404, "Unknown task");
            assertRejected(web.task("pu\u0000sh"), 404, "Unknown task");
            assertRejected(web.jobAction("pu\u0000sh", "1", "cancel"), 404, "Unknown task");
            assertRejected(web.taskAction("push", "pa\u0000use", null, null, null, null, null), 400, "Unknown action");
            assertRejected(web.jobAction("push", "x\u0000", "cancel"), 400, "is not a number");
            assertRejected(web.taskAction("push", "schedule", "n\u0000", "@daily", null, null, null), 400, "'name'");
            assertRejected(web.taskAction("push", "schedule", "n", "@daily\u0000", null, null, null), 400, "'cron'");
            assertRejected(web.taskAction("push", "schedule", "n", "@daily", "UTC\u0000", null, null), 400,
                    "not a time zone");
            assertRejected(web.taskAction("push", "schedule", "n", "@daily", null, "\"a\u0000\"", null), 400,
                    "is not JSON");
            assertRejected(web.taskAction("push", "schedule", "n", "@daily", null, "\"a\\u0000\"", null), 400,
                    "U+0000");
            assertRejected(web.taskAction("push", "schedule", "n", "@daily", null, Map.of("a", "\u0000"), null), 400,
                    "U+0000");
            assertRejected(web.taskAction("push", "schedule", "n", "@daily", null, null, "skip\u0000"), 400, "catchUp");
            assertThat(web.taskAction("push", "unschedule", "n\u0000", null, null, null, null).getBody())
                .containsEntry("removed", false);
            assertRejected(web.shardAction("shards", "shard", "a\u0000", "drain", null), 404, "no shard");
            assertThat(context.getBean(QueueAdmin.class).schedules()).isEmpty();
            assertThat(map(map(web.queues().getBody().get("tasks")).get("push")).get("paused")).isEqualTo(false);
        });
    }

    private static void assertRejected(WebEndpointResponse<Map<String, Object>> response, int status, String message) {
        String error = switch (status) {
            case 404 -> "Not Found";
            case 409 -> "Conflict";
            default -> "Bad Request";
        };
        assertThat(response.getStatus()).as(message).isEqualTo(status);
        assertThat(response.getBody()).containsOnlyKeys("status", "error", "message").containsEntry("status", status)
            .containsEntry("error", error);
        assertThat((String) response.getBody().get("message")).contains(message);
    }

    @Test
    void healthIsDownWithoutTheSchema() {
        // The later initializer's database is the one the context uses.
        this.runner.withInitializer(TestDatabaseInitializer.empty()).withPropertyValues("pgqueue.flyway.enabled=false")
            .run(context -> {
                context.getBean(QueueStatistics.class).refresh();
                Health health = context.getBean(QueueHealthIndicator.class).health();
                assertThat(health.getStatus()).isEqualTo(Status.DOWN);
                assertThat(health.getDetails().get("error")).asString().contains("does not exist");
            });
    }

    @Test
    void healthReportsLagPerTaskWithTheConfiguredStatus() {
        this.runner.withPropertyValues("pgqueue.health.status=out_of_service", "pgqueue.tasks.push.max-lag=1s")
            .run(context -> {
                context.getBean(QueueClient.class).enqueue("push", 1,
                        EnqueueOptions.defaults().withRunAt(java.time.Instant.now().minusSeconds(60)));
                context.getBean(QueueClient.class).enqueue("copy", 1,
                        EnqueueOptions.defaults().withRunAt(java.time.Instant.now().minusSeconds(60)));
                context.getBean(QueueStatistics.class).refresh();
                Health health = context.getBean(QueueHealthIndicator.class).health();
                assertThat(health.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
                assertThat(map(health.getDetails().get("lagSeconds"))).containsOnlyKeys("push");
            });
    }

    @Test
    void jobsWaitingOnTheirTasksLimitAreShownAndNotCalledLagging() {
        this.runner.withPropertyValues("pgqueue.tasks.push.global-concurrency=1", "pgqueue.tasks.push.max-lag=1s",
                "pgqueue.tasks.copy.rate=1/1h", "pgqueue.tasks.copy.max-lag=1s", "pgqueue.tasks.ledger.groups=sequence",
                "pgqueue.tasks.ledger.max-lag=1s")
            .run(context -> {
                QueueClient client = context.getBean(QueueClient.class);
                JobStore store = jobStore(context.getBean(PgQueue.class));
                EnqueueOptions late = EnqueueOptions.defaults().withRunAt(java.time.Instant.now().minusSeconds(60));
                client.enqueueAll(List.of(JobRequest.of("push", 1, late), JobRequest.of("push", 2, late)));
                client.enqueueAll(List.of(JobRequest.of("copy", 1, late), JobRequest.of("copy", 2, late),
                        JobRequest.of("copy", 3, late)));
                // ledger: one sequence, its first job running, the second waiting for it.
                client.enqueueAll(List.of(JobRequest.of("ledger", 1, late.withGroup("acct-1")),
                        JobRequest.of("ledger", 2, late.withGroup("acct-1"))));
                QueueTaskBindings.Binding ledger = context.getBean(QueueTaskBindings.class).all().get("ledger");
                assertThat(store.claim(List.of(new ClaimLimit("ledger", 5, 0, null, ledger.definition().groups())),
                        "worker-1", JobState.RUNNING, Duration.ofHours(1))).hasSize(1);
                // push: its one slot taken by a running job, the other job due for a minute.
                List<ClaimedJob> slot = store.claim(List.of(new ClaimLimit("push", 5, 1, null)), "worker-1",
                        JobState.RUNNING, Duration.ofHours(1));
                assertThat(slot).hasSize(1);
                context.getBean(QueueStatistics.class).refresh();

                Health health = context.getBean(QueueHealthIndicator.class).health();
                assertThat(health.getStatus()).isEqualTo(Status.UP);
                assertThat(health.getDetails()).doesNotContainKey("lagSeconds");
                assertThat(map(health.getDetails().get("waitingOnLimit")))
                    .containsEntry("push", "global concurrency 1 taken (1 claimed)")
                    .containsEntry("copy", "rate 1 per 1h: 3 due jobs take 10800.0 s")
                    .containsEntry("ledger", "sequences: one job per group at a time (1 claimed)");

                QueueEndpoint endpoint = context.getBean(QueueEndpoint.class);
                Map<String, Object> push = map(map(endpoint.queues().get("tasks")).get("push"));
                assertThat(map(push.get("limits"))).containsEntry("globalConcurrency", 1).containsEntry("claimed", 1L)
                    .containsEntry("waitingJobs", 1L);
                assertThat(map(map(map(endpoint.queues().get("tasks")).get("ledger")).get("limits")))
                    .containsEntry("groups", "SEQUENCE").containsEntry("sequenceOnFailure", "SKIP")
                    .containsEntry("claimed", 1L).containsEntry("waitingJobs", 1L);
                Map<String, Object> copy = map(map(endpoint.queues().get("tasks")).get("copy"));
                assertThat(map(copy.get("limits"))).containsEntry("rate", "1/1h").containsEntry("rateBurst", 1)
                    .containsEntry("waitingJobs", 3L);

                MeterRegistry meters = context.getBean(MeterRegistry.class);
                assertThat(meters.get("pgqueue.tasks.limit").tags("task", "push", "limit", "concurrency").gauge()
                    .value()).isEqualTo(1);
                assertThat(meters.get("pgqueue.tasks.limit").tags("task", "copy", "limit", "rate").gauge().value())
                    .isEqualTo(1 / 3600.0);
                assertThat(meters.get("pgqueue.jobs.waiting.limit").tags("task", "push").gauge().value()).isEqualTo(1);

                // The slot frees and nothing claims the due job: the limit no longer explains its lag.
                store.record(List.of(Outcome.completed(slot.get(0).lease())));
                context.getBean(QueueStatistics.class).refresh();
                Health lagging = context.getBean(QueueHealthIndicator.class).health();
                assertThat(lagging.getStatus()).isEqualTo(Status.DOWN);
                assertThat(map(lagging.getDetails().get("lagSeconds"))).containsOnlyKeys("push");
                assertThat(map(lagging.getDetails().get("waitingOnLimit"))).containsOnlyKeys("copy", "ledger");
            });
    }

    @Test
    void withoutSpringSecurityTheEndpointShowsNoJobDataUnlessTheApplicationAllowsIt() {
        for (boolean allowed : List.of(false, true)) {
            this.runner.withClassLoader(new FilteredClassLoader("org.springframework.security"))
                .withPropertyValues("pgqueue.endpoint.allow-unauthenticated-job-data=" + allowed)
                .run(context -> {
                    QueueEndpoint endpoint = context.getBean(QueueEndpoint.class);
                    JobStore store = jobStore(context.getBean(PgQueue.class));
                    context.getBean(QueueClient.class).enqueue("copy", 1);
                    List<ClaimedJob> failing = store.claim(List.of(new ClaimLimit("copy", 1)), "worker-1",
                            JobState.RUNNING, Duration.ofHours(1));
                    store.record(List.of(Outcome.failed(failing.get(0).lease(), "card 4111-1111 declined")));
                    endpoint.taskAction("push", "schedule", "push-nightly", "0 0 3 * * *", null,
                            "{\"email\": \"ann@example.com\"}", null);

                    String task = String.valueOf(endpoint.task("copy").get("recentFailures"));
                    String schedules = String.valueOf(endpoint.queues().get("schedules"));
                    if (allowed) {
                        assertThat(task).contains("card 4111-1111 declined");
                        assertThat(schedules).contains("ann@example.com");
                    }
                    else {
                        assertThat(task).doesNotContain("4111").contains(QueueEndpoint.HIDDEN);
                        assertThat(schedules).doesNotContain("ann@example.com").contains(QueueEndpoint.HIDDEN);
                    }
                });
        }
    }

    @Test
    void schedulesAreAddedListedAndRemovedThroughTheEndpoint() {
        this.runner.run(context -> {
            QueueEndpoint endpoint = context.getBean(QueueEndpoint.class);
            Map<String, Object> added = endpoint.taskAction("push", "schedule", "push-nightly", "0 0 3 * * *",
                    "Europe/Amsterdam", Map.of("all", true), "run_all");
            assertThat(map(added.get("schedule"))).containsEntry("name", "push-nightly").containsEntry("task", "push")
                .containsEntry("zone", "Europe/Amsterdam").containsEntry("catchUp", "RUN_ALL")
                .containsEntry("payload", "{\"all\": true}").containsEntry("configured", false)
                .containsEntry("lastJob", null).containsKey("nextFire");
            assertThat((List<?>) endpoint.queues().get("schedules")).hasSize(1);
            assertThat((List<?>) endpoint.task("push").get("schedules")).hasSize(1);
            assertThat((List<?>) endpoint.task("copy").get("schedules")).isEmpty();

            assertThatThrownBy(() -> endpoint.taskAction("push", "schedule", "bad", "nightly", null, null, null))
                .isInstanceOf(InvalidEndpointRequestException.class).hasMessageContaining("'nightly' for 'cron'");
            assertThatThrownBy(() -> endpoint.taskAction("push", "schedule", "bad", "@daily", "Mars/Olympus", null, null))
                .isInstanceOf(InvalidEndpointRequestException.class).hasMessageContaining("'Mars/Olympus' is not a time zone");
            assertThatThrownBy(() -> endpoint.taskAction("push", "schedule", null, "@daily", null, null, null))
                .isInstanceOf(InvalidEndpointRequestException.class).hasMessageContaining("Missing 'name'");

            assertThat(endpoint.taskAction("push", "unschedule", "push-nightly", null, null, null, null))
                .containsEntry("removed", true);
            assertThat((List<?>) endpoint.queues().get("schedules")).isEmpty();
        });
    }

    @Test
    void theEndpointShowsTheLastSlotOfAScheduleAndItsJobOnceItCompleted() {
        this.runner.run(context -> {
            QueueEndpoint endpoint = context.getBean(QueueEndpoint.class);
            endpoint.taskAction("push", "schedule", "push-every-second", "* * * * * *", null, null, null);
            Schedules schedules = context.getBean(PgQueue.class).schedules();
            List<EnqueueResult> fired = new ArrayList<>();
            // The workers are off: the test fires the due slot as the scheduler would.
            await().atMost(Duration.ofSeconds(5)).until(() -> fired.addAll(schedules.fireDue()));
            assertThat(fired).hasSize(1);
            JobStore store = jobStore(context.getBean(PgQueue.class));
            List<ClaimedJob> claimed = store.claim(List.of(new ClaimLimit("push", 10)), "worker-1", JobState.RUNNING,
                    Duration.ofMinutes(1));
            assertThat(claimed).singleElement().satisfies(job -> assertThat(job.id()).isEqualTo(fired.get(0).jobId()));
            store.record(List.of(Outcome.completed(claimed.get(0).lease())));

            List<?> listed = (List<?>) endpoint.queues().get("schedules");
            assertThat(listed).hasSize(1);
            Map<String, Object> schedule = map(listed.get(0));
            assertThat(schedule).containsEntry("name", "push-every-second")
                .containsEntry("lastFire", claimed.get(0).scheduleTime());
            assertThat(map(schedule.get("lastJob"))).containsEntry("id", fired.get(0).jobId())
                .containsEntry("state", JobState.COMPLETED);
            assertThat((List<?>) endpoint.task("push").get("schedules")).singleElement()
                .satisfies(each -> assertThat(map(map(each).get("lastJob"))).containsEntry("state", JobState.COMPLETED));
        });
    }

    @Test
    void poolGaugesAndClaimCountersFollowTheWorkers() {
        this.runner.withBean(TestHandlers.SendPush.class)
            .withBean(TestHandlers.SyncFolder.class)
            .withPropertyValues("pgqueue.workers.enabled=true")
            .run(context -> {
                MeterRegistry meters = context.getBean(MeterRegistry.class);
                assertThat(meters.get("pgqueue.jobs.claimed").tags("task", "send-push", "pool", "default").counter()
                    .count()).isZero();
                assertThat(meters.get("pgqueue.jobs.claimed").tags("task", "sync-folder", "pool", "slow").counter()
                    .count()).isZero();
                await().atMost(Duration.ofSeconds(10))
                    .until(() -> meters.get("pgqueue.pool.capacity").tags("pool", "default").gauge().value() == 3);
                assertThat(meters.get("pgqueue.pool.busy").tags("pool", "slow").gauge().value()).isZero();
                assertThat(meters.get("pgqueue.pool.buffered").tags("pool", "slow").gauge().value()).isZero();
                assertThat(meters.find("pgqueue.pool.prefetch").tags("pool", "default", "task", "send-push").gauge())
                    .isNotNull();
            });
    }

    @Test
    void hungHandlersAreAHealthDetailAGaugeAndInTheEndpoint() {
        HangingHandler handler = new HangingHandler();
        this.runner.withBean(HangingHandler.class, () -> handler)
            .withPropertyValues("pgqueue.workers.enabled=true", "pgqueue.lease.duration=600ms",
                    "pgqueue.lease.heartbeat-interval=150ms", "pgqueue.rescue.interval=100ms")
            .run(context -> {
                try {
                    QueueStatistics stats = context.getBean(QueueStatistics.class);
                    QueueHealthIndicator health = context.getBean(QueueHealthIndicator.class);
                    MeterRegistry meters = context.getBean(MeterRegistry.class);
                    context.getBean(QueueClient.class).enqueue("hang", 1);

                    // Past its timeout and a lease the handler is hung: a detail, the status stays UP.
                    await().atMost(Duration.ofSeconds(10)).until(() -> {
                        stats.refresh();
                        Health report = health.health(true);
                        return report.getStatus().equals(Status.UP) && report.getDetails().containsKey("hungHandlers");
                    });
                    assertThat(health.health(true).getDetails().get("hungHandlers")).isEqualTo(Map.of("hang", 1));
                    assertThat(meters.get("pgqueue.pool.hung").tags("pool", "default").gauge().value()).isEqualTo(1);
                    Map<String, Object> pool = map(map(context.getBean(QueueEndpoint.class).queues().get("pools"))
                        .get("default"));
                    assertThat(pool.get("hung")).isEqualTo(1);
                    assertThat(map(pool.get("tasks")).get("hang")).extracting("hung").isEqualTo(1);

                    handler.release.countDown();
                    await().atMost(Duration.ofSeconds(10))
                        .until(() -> meters.get("pgqueue.pool.hung").tags("pool", "default").gauge().value() == 0);
                    assertThat(health.health(true).getDetails()).doesNotContainKey("hungHandlers");
                }
                finally {
                    handler.release.countDown();
                }
            });
    }

    @Test
    void aTransactionHoldingBackCleanupTurnsTheHealthAndIsMeasured() {
        this.runner.withPropertyValues("pgqueue.health.max-transaction-age=1s").run(context -> {
            QueueStatistics stats = context.getBean(QueueStatistics.class);
            QueueHealthIndicator health = context.getBean(QueueHealthIndicator.class);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            javax.sql.DataSource dataSource = context.getBean(javax.sql.DataSource.class);
            assertThat(stats.refresh().oldestTransaction()).isLessThan(Duration.ofSeconds(1));
            assertThat(health.health(true).getStatus()).isEqualTo(Status.UP);

            // A forgotten transaction with a snapshot: REPEATABLE READ keeps it while idle.
            try (java.sql.Connection forgotten = dataSource.getConnection()) {
                forgotten.setAutoCommit(false);
                forgotten.setTransactionIsolation(java.sql.Connection.TRANSACTION_REPEATABLE_READ);
                forgotten.createStatement().execute("SELECT 1");
                await().atMost(Duration.ofSeconds(10))
                    .until(() -> stats.refresh().oldestTransaction().compareTo(Duration.ofMillis(1500)) > 0);

                Health report = health.health(true);
                assertThat(report.getStatus()).isEqualTo(Status.DOWN);
                assertThat(report.getDetails()).containsKey("oldestTransactionSeconds");
                assertThat(meters.get("pgqueue.db.oldest.transaction").gauge().value()).isGreaterThan(1.0);
                forgotten.rollback();
            }
            await().atMost(Duration.ofSeconds(10))
                .until(() -> stats.refresh().oldestTransaction().compareTo(Duration.ofSeconds(1)) < 0);
            assertThat(health.health(true).getStatus()).isEqualTo(Status.UP);
        });
    }

    @Test
    void metersBindNothingWhenTheQueueIsOffAndGiveWayToTheApplicationsBinder() {
        this.runner.withPropertyValues("pgqueue.enabled=false").run(context -> {
            assertThat(context).hasNotFailed().getBean(QueueMeterBinder.class).isSameAs(QueueMeterBinder.NONE);
            assertThat(context.getBean(MeterRegistry.class).find("pgqueue.jobs.completed").counters()).isEmpty();
        });
        QueueMeterBinder own = QueueMeterBinder.NONE.withTasks(List.of("push"), () -> QueueStats.NONE);
        this.runner.withBean("ownQueueMeterBinder", QueueMeterBinder.class, () -> own).run(context -> {
            assertThat(context).hasSingleBean(QueueMeterBinder.class).getBean(QueueMeterBinder.class).isSameAs(own);
            MeterRegistry meters = context.getBean(MeterRegistry.class);
            assertThat(meters.find("pgqueue.jobs.completed").tags("task", "push").counter()).isNotNull();
            assertThat(meters.find("pgqueue.jobs.completed").tags("task", "copy").counter()).isNull();
        });
    }

    /** Its first run ignores the interrupt of its timeout and blocks until released. */
    @QueueTask(name = "hang", timeout = "100ms", maxAttempts = 3)
    static class HangingHandler implements TaskHandler<Integer> {

        final CountDownLatch release = new CountDownLatch(1);

        private final AtomicBoolean ran = new AtomicBoolean();

        @Override
        public void handle(Integer payload, TaskContext context) {
            if (!this.ran.compareAndSet(false, true)) {
                return;
            }
            while (this.release.getCount() > 0) {
                try {
                    this.release.await();
                }
                catch (InterruptedException ignored) {
                    // keeps waiting
                }
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value) {
        return (Map<String, Object>) value;
    }

    @Test
    void messageQueuesAppearInTheEndpointTheHealthAndTheGauges() {
        this.runner.withPropertyValues("pgqueue.stats.interval=200ms").run(context -> {
            io.pgqueue.message.MessageQueues messages = context.getBean(io.pgqueue.message.MessageQueues.class);
            messages.createQueue("inbox", io.pgqueue.message.MessageQueueAttributes.defaults(), Map.of());
            messages.send("inbox", io.pgqueue.message.OutgoingMessage.of("one"));
            messages.send("inbox", io.pgqueue.message.OutgoingMessage.of("two"));
            messages.receive("inbox", io.pgqueue.message.ReceiveRequest.of(1).withWaitTime(Duration.ZERO));
            QueueEndpoint endpoint = context.getBean(QueueEndpoint.class);
            // The periodic count (every 200 ms here) catches up with the sends and the receive.
            await().atMost(Duration.ofSeconds(10)).ignoreExceptions().untilAsserted(() -> assertThat(
                    map(map(map(endpoint.queues().get("messageQueues")).get("queues")).get("inbox")))
                .containsEntry("visible", 1L).containsEntry("inFlight", 1L).containsEntry("delayed", 0L));
            Health health = context.getBean(QueueHealthIndicator.class).health();
            assertThat(health.getStatus()).isEqualTo(Status.UP);
            assertThat(map(map(health.getDetails().get("messageQueues")).get("inbox"))).containsEntry("inFlight", 1L);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.get("pgqueue.messages.visible").tag("queue", "inbox").gauge().value()).isEqualTo(1);
            assertThat(registry.get("pgqueue.messages.sent").tag("queue", "inbox").counter().count()).isEqualTo(2);
        });
    }


    /** A job store of its own on the queue's database: the test claims and records as a worker would. */
    private static JobStore jobStore(PgQueue queue) {
        return new JobStore(queue.dataSource(), queue.config());
    }
}
