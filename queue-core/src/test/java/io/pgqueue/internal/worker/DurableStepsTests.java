package io.pgqueue.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.pgqueue.AttemptResult;
import io.pgqueue.DedupPolicy;
import io.pgqueue.EnqueueOptions;
import io.pgqueue.JobSnapshot;
import io.pgqueue.JobState;
import io.pgqueue.JobStep;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueDefaults;
import io.pgqueue.StepRetry;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskHandler;
import io.pgqueue.internal.observe.QueueStatsPoller;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.internal.store.StepStore;
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
 * Durable handlers: completed steps return their records when the job runs again, a durable sleep
 * ends the attempt without spending it, step records are fenced by the lease, a changed step list
 * fails the job naming the step, and the records live and die with their job.
 */
class DurableStepsTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass().withPoolSize(12);

    @RegisterExtension
    final TestWorkers nodes = TestWorkers.on(queue);

    /** A step's value, read back from its record as the class it was. */
    record Receipt(String id, long cents) {
    }

    @Test
    void completedStepsReturnTheirRecordsInsteadOfRunningWhenTheJobRunsAgain() {
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        Queue<Object> seen = new ConcurrentLinkedQueue<>();
        WorkerTask order = task("order", 3, (payload, context) -> {
            Receipt receipt = context.step("charge", () -> {
                count(runs, "charge");
                return new Receipt(context.stepKey("charge"), 1250);
            });
            Integer reserved = context.step("reserve", Integer.class, () -> count(runs, "reserve"));
            context.step("notify", () -> {
                if (count(runs, "notify") == 1) {
                    throw new IllegalStateException("mail server away");
                }
            });
            seen.add(receipt);
            seen.add(reserved);
            context.recordResult(receipt.id());
        });
        QueueClient client = this.nodes.client(order);
        long id = client.enqueue("order", "o-1").jobId();
        this.nodes.start(settings("node").build(), order);

        assertThat(client.await(id, String.class, Duration.ofSeconds(30))).isEqualTo("pgqueue-" + id + "-charge");
        assertThat(runs).as("each completed step ran once; the failed one again on the retry")
            .containsOnlyKeys("charge", "reserve", "notify");
        assertThat(runs.get("charge")).hasValue(1);
        assertThat(runs.get("reserve")).hasValue(1);
        assertThat(runs.get("notify")).hasValue(2);
        assertThat(List.copyOf(seen)).as("the second attempt read the records back as their types")
            .containsExactly(new Receipt("pgqueue-" + id + "-charge", 1250), 1);
        JobSnapshot job = client.find(id).orElseThrow();
        assertThat(job.attempt()).isEqualTo(2);
        List<JobStep> steps = client.steps(id).orElseThrow();
        assertThat(client.steps(id + 1000)).as("no such job").isEmpty();
        assertThat(steps).extracting(JobStep::name).containsExactly("charge", "reserve", "notify");
        assertThat(steps).extracting(JobStep::attempt).containsExactly(1, 1, 2);
        assertThat(steps.get(0).resultType()).isEqualTo(Receipt.class.getName());
        assertThat(steps.get(0).result()).contains("\"cents\": 1250");
        assertThat(steps.get(2).result()).as("a step without a value").isNull();
        assertThat(steps.get(0).finishedAt()).isAfterOrEqualTo(steps.get(0).startedAt());
    }

    @Test
    void aDurableSleepEndsTheAttemptHoldingNoThreadAndSpendsNoAttempt() {
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        Queue<AttemptResult> outcomes = new ConcurrentLinkedQueue<>();
        // One attempt only: were the sleep an attempt, the job would fail after it.
        WorkerTask order = task("sleeper", 1, (payload, context) -> {
            context.step("charge", () -> count(runs, "charge"));
            context.sleep(Duration.ofMillis(700));
            context.step("follow-up", () -> count(runs, "follow-up"));
        });
        QueueClient client = this.nodes.client(order);
        long id = client.enqueue("sleeper", "o-2").jobId();
        Instant enqueued = Instant.now();
        this.nodes.start(settings("node").build(), TestWorkers.recordingOutcomes(outcomes), order);

        await().atMost(Duration.ofSeconds(5)).until(() -> client.find(id).map(JobSnapshot::state).orElseThrow()
                == JobState.READY);
        JobSnapshot sleeping = client.find(id).orElseThrow();
        assertThat(sleeping.attempt()).as("the sleep gave its attempt back").isZero();
        assertThat(sleeping.leaseOwner()).as("no one holds a sleeping job").isNull();
        assertThat(sleeping.scheduleTime()).isAfter(enqueued.plusMillis(500));
        QueueStatsPoller poller = new QueueStatsPoller(queue.stores().stats(), Duration.ofMillis(100));
        poller.start();
        try {
            await().atMost(Duration.ofSeconds(5)).until(() -> poller.latest().suspended().getOrDefault("sleep", 0L) == 1L);
        }
        finally {
            poller.stop();
        }

        await().atMost(Duration.ofSeconds(10)).until(() -> client.find(id).map(JobSnapshot::state).orElseThrow()
                == JobState.COMPLETED);
        JobSnapshot done = client.find(id).orElseThrow();
        assertThat(done.attempt()).isEqualTo(1);
        assertThat(done.finishedAt()).isAfter(enqueued.plusMillis(700));
        assertThat(runs.get("charge")).hasValue(1);
        assertThat(runs.get("follow-up")).hasValue(1);
        assertThat(List.copyOf(outcomes)).containsExactly(AttemptResult.SNOOZED, AttemptResult.COMPLETED);
        List<JobStep> steps = queue.store().steps().steps(id);
        assertThat(steps).extracting(JobStep::name).containsExactly("charge", "sleep-1", "follow-up");
        assertThat(steps.get(1).kind()).isEqualTo(JobStep.Kind.SLEEP);
        assertThat(steps.get(1).wakeAt()).isAfter(steps.get(1).finishedAt().plusMillis(650));
    }

    @Test
    void aJobThatRunsBeforeItsSleepEndsSleepsTheRestAndItsStepsDoNotRunAgain() {
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        WorkerTask order = task("early", 1, (payload, context) -> {
            context.step("charge", () -> count(runs, "charge"));
            context.sleepUntil("cool-off", Instant.now().plusSeconds(3600));
            context.step("follow-up", () -> count(runs, "follow-up"));
        });
        QueueClient client = this.nodes.client(order);
        long id = client.enqueue("early", "o-3").jobId();
        this.nodes.start(settings("node").build(), order);
        await().atMost(Duration.ofSeconds(5)).until(() -> client.find(id).map(JobSnapshot::state).orElseThrow()
                == JobState.READY);

        // As if the sleep's snooze were lost (a crash after the record): the job runs at once.
        queue.makeDue(id);
        await().atMost(Duration.ofSeconds(5)).until(() -> client.find(id).map(JobSnapshot::attempt).orElseThrow() == 0
                && client.find(id).orElseThrow().scheduleTime().isAfter(Instant.now().plusSeconds(3000)));
        assertThat(runs.get("charge")).hasValue(1);
        assertThat(runs).doesNotContainKey("follow-up");
    }

    @Test
    void aStepIsTriedAgainWithinTheAttemptByItsOwnRetry() {
        AtomicInteger tries = new AtomicInteger();
        WorkerTask flaky = task("flaky-step", 1, (payload, context) -> {
            String value = context.step("call", StepRetry.of(3, RetryPolicy.fixed(Duration.ofMillis(20))), String.class,
                    () -> {
                        if (tries.incrementAndGet() < 3) {
                            throw new java.io.IOException("timeout");
                        }
                        return "ok";
                    });
            context.recordResult(value);
        });
        QueueClient client = this.nodes.client(flaky);
        long id = client.enqueue("flaky-step", "x").jobId();
        this.nodes.start(settings("node").build(), flaky);

        assertThat(client.await(id, String.class, Duration.ofSeconds(20))).isEqualTo("ok");
        assertThat(tries).hasValue(3);
        assertThat(client.find(id).orElseThrow().attempt()).isEqualTo(1);
    }

    @Test
    void aStepThatKeepsFailingFailsTheAttemptWithItsOwnException() {
        WorkerTask failing = task("failing-step", 1, (payload, context) -> context.step("call",
                StepRetry.of(2, RetryPolicy.fixed(Duration.ZERO)), () -> {
                    throw new java.io.IOException("host unreachable");
                }));
        QueueClient client = this.nodes.client(failing);
        long id = client.enqueue("failing-step", "x").jobId();
        this.nodes.start(settings("node").build(), failing);

        await().atMost(Duration.ofSeconds(10)).until(() -> client.find(id).map(JobSnapshot::state).orElseThrow()
                == JobState.FAILED);
        assertThat(client.find(id).orElseThrow().lastError()).startsWith("java.io.IOException: host unreachable");
        assertThat(queue.store().steps().steps(id)).isEmpty();
    }

    @Test
    void aChangedStepListFailsTheJobNamingTheStep() {
        AtomicBoolean newCode = new AtomicBoolean();
        WorkerTask changing = task("changing", 3, (payload, context) -> {
            if (newCode.get()) {
                context.step("fraud-check", () -> "clean");
            }
            context.step("charge", () -> "charged");
            context.sleep(Duration.ofHours(1));
        });
        QueueClient client = this.nodes.client(changing);
        long id = client.enqueue("changing", "x").jobId();
        this.nodes.start(settings("node").build(), changing);
        await().atMost(Duration.ofSeconds(10)).until(() -> queue.store().steps().steps(id).size() == 2
                && client.find(id).map(JobSnapshot::state).orElseThrow() == JobState.READY);

        // A deploy while it sleeps adds a step before the recorded ones.
        newCode.set(true);
        queue.makeDue(id);
        queue.jdbc().update("UPDATE " + queue.config().schema() + ".job_step SET wake_at = now() WHERE job_id = ?", id);

        await().atMost(Duration.ofSeconds(20)).until(() -> client.find(id).map(JobSnapshot::state).orElseThrow()
                == JobState.FAILED);
        assertThat(client.find(id).orElseThrow().lastError()).contains("StepMismatchException")
            .contains("reached step 'fraud-check' as step 0, where it recorded step 'charge'");
        assertThat(client.find(id).orElseThrow().attempt()).as("a mismatch is not retried").isEqualTo(1);
    }

    @Test
    void aStepNameReachedTwiceOrOutOfRangeIsRefusedSayingWhy() {
        Queue<String> errors = new ConcurrentLinkedQueue<>();
        CountDownLatch done = new CountDownLatch(1);
        WorkerTask twice = task("twice", 1, (payload, context) -> {
            try {
                context.step("a", () -> 1);
                try {
                    context.step("a", () -> 2);
                }
                catch (IllegalArgumentException ex) {
                    errors.add(ex.getMessage());
                }
                try {
                    context.step("", () -> 3);
                }
                catch (IllegalArgumentException ex) {
                    errors.add(ex.getMessage());
                }
            }
            finally {
                done.countDown();
            }
        });
        QueueClient client = this.nodes.client(twice);
        client.enqueue("twice", "x");
        this.nodes.start(settings("node").build(), twice);

        await().atMost(Duration.ofSeconds(10)).until(() -> done.getCount() == 0);
        assertThat(List.copyOf(errors)).hasSize(2);
        assertThat(List.copyOf(errors).get(0)).contains("reached step 'a' twice");
        assertThat(List.copyOf(errors).get(1)).contains("1 to 200 characters");
    }

    @Test
    void aStepRecordIsFencedByTheLeaseOfTheAttempt() {
        QueueClient client = this.nodes.client(task("fenced", 3, (payload, context) -> {
        }));
        long id = client.enqueue("fenced", "x").jobId();
        StepStore steps = queue.store().steps();
        ClaimedJob claimed = queue.claim("fenced", 1).get(0);
        Lease stale = claimed.lease();
        assertThat(steps.recordStep(stale, "first", 0, "1", Integer.class.getName(), Duration.ZERO)).isNotNull();

        // Rescued and claimed again: the first claim's lease records nothing more.
        queue.expireLease(id);
        queue.store().record(List.of(Outcome.rescued(stale, "expired")));
        Lease current = queue.claim("fenced", 1).get(0).lease();
        assertThat(steps.recordStep(stale, "second", 1, "2", null, Duration.ZERO)).isNull();
        assertThat(steps.recordSleep(stale, "nap", 1, null, Duration.ofMinutes(1))).isNull();
        assertThat(steps.recordStep(current, "second", 1, "2", null, Duration.ZERO)).isNotNull();
        assertThat(steps.steps(id)).extracting(JobStep::name).containsExactly("first", "second");
        assertThat(steps.steps(id)).extracting(JobStep::attempt).containsExactly(1, 2);

        // A READY job (snoozed) is held by no one.
        queue.store().record(List.of(Outcome.snoozed(current, Duration.ZERO)));
        assertThat(steps.recordStep(current, "third", 2, null, null, Duration.ZERO)).isNull();
    }

    @Test
    void stepRecordsLiveWithTheirJobAndGoWithIt() {
        WorkerTask kept = task("kept", 1, (payload, context) -> context.step("only", () -> payload));
        QueueClient client = this.nodes.client(kept);
        long keptId = client.enqueue("kept", "a").jobId();
        this.nodes.start(settings("node").build(), kept);
        await().atMost(Duration.ofSeconds(10)).until(() -> client.find(keptId).map(JobSnapshot::state).orElseThrow()
                == JobState.COMPLETED);
        assertThat(queue.store().steps().steps(keptId)).as("kept with the completed job").hasSize(1);

        // Retention (or a bulk delete) takes the finished job: its steps go with it.
        queue.jdbc().update("DELETE FROM " + queue.config().schema() + ".job_finished WHERE id = ?", keptId);
        assertThat(queue.store().steps().steps(keptId)).isEmpty();
    }

    @Test
    void aJobEndedUnkeptOrReRunDropsItsSteps() throws InterruptedException {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        WorkerTask unkept = task("unkept", 1, (payload, context) -> {
            context.step("only", () -> runs.incrementAndGet());
            if (runs.get() == 1) {
                release.await(10, TimeUnit.SECONDS);
            }
        });
        QueueClient client = this.nodes.client(unkept);
        long id = client.enqueue("unkept", "a", EnqueueOptions.defaults().withDedup("k", DedupPolicy.rerun())).jobId();
        this.nodes.start(queue.config().withCompletedRetention(Duration.ZERO), settings("node").build(), unkept);
        await().atMost(Duration.ofSeconds(10)).until(() -> queue.store().steps().steps(id).size() == 1);
        // A duplicate while it runs asks for a re-run: it starts again without the first run's steps.
        client.enqueue("unkept", "b", EnqueueOptions.defaults().withDedup("k", DedupPolicy.rerun()));
        release.countDown();

        await().atMost(Duration.ofSeconds(10)).until(() -> runs.get() == 2 && client.find(id).isEmpty());
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM " + queue.config().schema()
                + ".job_step WHERE job_id = ?", Long.class, id)).as("the unkept job left no steps").isZero();
    }

    private static int count(Map<String, AtomicInteger> runs, String step) {
        return runs.computeIfAbsent(step, name -> new AtomicInteger()).incrementAndGet();
    }


    private static WorkerTask task(String name, int maxAttempts, TaskHandler<String> handler) {
        return WorkerTask.of(TaskDefinition.builder(name).maxAttempts(maxAttempts).retryPolicy(RetryPolicy.fixed(
                Duration.ZERO)).build(), handler, String.class, 2, Duration.ofMinutes(1), QueueDefaults.POOL);
    }
}
