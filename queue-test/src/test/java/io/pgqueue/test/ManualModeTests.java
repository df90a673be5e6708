package io.pgqueue.test;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;

import io.pgqueue.EnqueueOptions;
import io.pgqueue.JobRequest;
import io.pgqueue.JobSnapshot;
import io.pgqueue.JobState;
import io.pgqueue.PgQueue;
import io.pgqueue.QueueClient;
import io.pgqueue.SignalResult;
import io.pgqueue.Workflow;
import io.pgqueue.schedule.Schedule;
import io.pgqueue.test.TestApplication.Entry;
import io.pgqueue.test.TestApplication.Journal;
import io.pgqueue.test.TestApplication.Mail;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The test kit in its default mode: nothing runs until the test drains. */
@SpringBootTest(classes = TestApplication.class)
@AutoConfigurePgQueueTest
class ManualModeTests {

    @Autowired
    QueueTester queue;

    @Autowired
    QueueClient client;

    @Autowired
    Journal journal;

    @Autowired
    PlatformTransactionManager transactions;

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    PgQueue pgQueue;

    @BeforeEach
    void clearJournal() {
        this.journal.entries.clear();
        this.journal.flakyCalls.set(0);
        this.journal.snoozyCalls.set(0);
    }

    @Test
    void enqueuedJobsWaitUntilDrainedAndDrainRunsTheJobsTheyEnqueue() {
        this.client.enqueue("welcome-mail", new Mail("ann@example.com"));

        EnqueuedJob job = this.queue.assertEnqueued("welcome-mail", Mail.class, mail -> mail.to().startsWith("ann"));
        assertThat(job.state()).isEqualTo(JobState.READY);
        this.queue.assertEnqueued("welcome-mail", new Mail("ann@example.com"));
        assertThat(this.journal.entries).as("nothing ran").isEmpty();

        DrainResult drained = this.queue.drain();

        assertThat(drained.completed()).as("the mail and the audit it enqueued").isEqualTo(2);
        assertThat(this.journal.entries).containsExactly("mail ann@example.com", "audit mailed ann@example.com");
        this.queue.refuteEnqueued("welcome-mail");
        this.queue.refuteEnqueued("audit");
    }

    @Test
    void anEncryptedPayloadIsAssertedAndRunAsWrittenAndStoredEncrypted() {
        this.client.enqueue("secret-audit", new Entry("pin 1234"));

        this.queue.assertEnqueued("secret-audit", new Entry("pin 1234"));
        assertThat(this.jdbc.queryForObject("SELECT payload::text FROM pgqueue.job WHERE task = 'secret-audit'",
                String.class)).startsWith("{\"pgqueue.encrypted\"").doesNotContain("1234");
        this.queue.drain();
        assertThat(this.journal.entries).containsExactly("secret pin 1234");
    }

    @Test
    void assertionsSayWhatIsInTheQueue() {
        this.client.enqueue("welcome-mail", new Mail("bob@example.com"));

        assertThatThrownBy(() -> this.queue.assertEnqueued("welcome-mail", new Mail("ann@example.com")))
            .isInstanceOf(AssertionError.class)
            .hasMessageContaining("Expected a 'welcome-mail' job with payload {\"to\":\"ann@example.com\"}")
            .hasMessageContaining("bob@example.com");
        assertThatThrownBy(() -> this.queue.refuteEnqueued("welcome-mail")).isInstanceOf(AssertionError.class)
            .hasMessageContaining("bob@example.com");
        assertThatThrownBy(() -> this.queue.assertEnqueued("audit")).hasMessageContaining("there is none");
    }

    @Test
    void assertionsSeeTheTestsOwnUncommittedTransaction() {
        new TransactionTemplate(this.transactions).executeWithoutResult(status -> {
            this.client.enqueue(JobRequest.of("audit", new Entry("inside"), EnqueueOptions.defaults().withPriority(5)));
            this.queue.assertEnqueued("audit", job -> job.priority() == 5);
            status.setRollbackOnly();
        });

        this.queue.refuteEnqueued("audit");
    }

    @Test
    void aRetryWaitsForItsBackoffUntilTheQueuesTimeMoves() {
        this.client.enqueue("flaky", new Entry("x"));

        assertThat(this.queue.drain().retried()).isEqualTo(1);
        EnqueuedJob retry = this.queue.assertEnqueued("flaky");
        assertThat(retry.attempt()).isEqualTo(1);
        assertThat(this.queue.drain().ran()).as("not due for a minute").isZero();

        this.queue.advance(Duration.ofMinutes(1));

        // Only the flaky task is drained: the minute may pass the nightly schedule's 03:00.
        assertThat(this.queue.drain("flaky").completed()).isEqualTo(1);
        assertThat(this.journal.entries).containsExactly("flaky x on attempt 2");
    }

    @Test
    void aSnoozedJobWaitsForItsDelayUntilTheQueuesTimeMovesWithoutSpendingItsAttempt() {
        this.client.enqueue("snoozy", new Entry("x"));

        DrainResult snoozed = this.queue.drain("snoozy");
        assertThat(snoozed.snoozed()).isEqualTo(1);
        assertThat(snoozed.retried()).as("a snooze is no retry").isZero();
        assertThat(this.queue.assertEnqueued("snoozy").attempt()).as("the snooze gave its attempt back").isZero();
        assertThat(this.queue.drain("snoozy").ran()).as("not due for ten minutes").isZero();

        this.queue.advance(Duration.ofMinutes(10));

        assertThat(this.queue.drain("snoozy").completed()).isEqualTo(1);
        assertThat(this.journal.entries).containsExactly("snoozy x on attempt 1");
    }

    @Test
    void aDurableHandlerWaitsForItsSignalAndSleepsUntilTheQueuesTimeMovesPastAndItsStepsRunOnce() {
        long id = this.client.enqueue("durable-order", new Entry("o-1")).jobId();

        assertThat(this.queue.drain("durable-order").snoozed()).as("charged, waiting for the signal").isEqualTo(1);
        assertThat(this.queue.drain("durable-order").ran()).as("nothing to do before the signal").isZero();
        assertThat(this.queue.signal(id, "shipped", "ups")).isEqualTo(SignalResult.WOKEN);
        assertThat(this.queue.drain("durable-order").snoozed()).as("signalled, asleep for a day").isEqualTo(1);
        this.queue.advance(Duration.ofHours(23));
        assertThat(this.queue.drain("durable-order").ran()).isZero();

        this.queue.advance(Duration.ofHours(1));

        assertThat(this.queue.drain("durable-order").completed()).isEqualTo(1);
        assertThat(this.journal.entries).containsExactly("charged o-1", "followed up receipt-o-1 shipped by ups");
    }

    @Test
    void anAdvancePastARecurringSlotAddsItsJobToWhatTheNextDrainRunsAndCounts() {
        this.pgQueue.schedules().put(Schedule.of("tick", "audit", "0 * * * * *").withPayload("{\"text\": \"tick\"}"));
        this.client.enqueue(JobRequest.of("audit", new Entry("later"), EnqueueOptions.defaults().withDelay(Duration.ofHours(1))));

        assertThat(this.queue.drain("audit").ran()).as("nothing is due yet").isZero();
        List<Long> fired = this.queue.advance(Duration.ofMinutes(30));

        // Thirty missed slots, caught up once (the default RUN_ONCE); the job due in an hour waits.
        // (Only the audit task is drained and counted: the hour may pass the nightly schedule's 03:00.)
        assertThat(fired.stream().map(id -> this.client.find(id).orElseThrow().task()).filter("audit"::equals)).hasSize(1);
        DrainResult drained = this.queue.drain("audit");
        assertThat(drained.completed()).as("the slot's job, counted with the others").isEqualTo(1);
        assertThat(this.journal.entries).containsExactly("audit tick");
        this.queue.advance(Duration.ofMinutes(30));
        assertThat(this.queue.drain("audit").completed()).as("the job due in an hour, and the latest slot's").isEqualTo(2);
    }

    @Test
    void jobsScheduledLaterRunWhenTheQueuesTimeReachesThem() {
        long id = this.client.enqueue(JobRequest.of("audit", new Entry("later"),
                EnqueueOptions.defaults().withDelay(Duration.ofHours(2)))).jobId();

        // Only the audit task is drained: the two hours may pass the nightly schedule's 03:00.
        assertThat(this.queue.drain("audit").ran()).isZero();
        this.queue.advance(Duration.ofHours(1));
        assertThat(this.queue.drain("audit").ran()).isZero();
        this.queue.advance(Duration.ofHours(1));
        assertThat(this.queue.drain("audit").completed()).isEqualTo(1);
        assertThat(this.jdbc.queryForObject("SELECT state FROM pgqueue.job_finished WHERE id = ?", String.class, id))
            .isEqualTo("COMPLETED");
    }

    @Test
    void aDayOfQueueTimeFiresTheNightlyScheduleOnce() {
        List<Long> fired = this.queue.advance(Duration.ofDays(1));

        assertThat(fired).hasSize(1);
        this.queue.assertEnqueued("nightly");
        assertThat(this.queue.drain().completed()).isEqualTo(1);
        assertThat(this.journal.entries).containsExactly("nightly");
        // Up to just before the next 03:00 nothing fires; that slot fires once more.
        Instant now = this.queue.clock().instant();
        Instant next = now.atZone(ZoneOffset.UTC).toLocalDate().atTime(3, 0).toInstant(ZoneOffset.UTC);
        if (!next.isAfter(now)) {
            next = next.plus(Duration.ofDays(1));
        }
        Duration untilJustBefore = Duration.between(now, next).minusSeconds(1);
        if (!untilJustBefore.isNegative() && !untilJustBefore.isZero()) {
            assertThat(this.queue.advance(untilJustBefore)).isEmpty();
        }
        assertThat(this.queue.advance(Duration.ofSeconds(2))).hasSize(1);
    }

    @Test
    void aWorkflowDrainsInOrderAndHandsResultsOn() {
        this.client.workflow("audit-and-report")
            .add("a", "audit", new Entry("abc"))
            .add("b", "audit", new Entry("de"))
            .add("report", "report", new Entry("r"), Workflow.after("a", "b"))
            .enqueue();
        assertThat(this.queue.assertEnqueued("report").state()).isEqualTo(JobState.WAITING);

        assertThat(this.queue.drain().completed()).isEqualTo(3);

        assertThat(this.journal.entries).last().isEqualTo("report {a=3, b=2} a=3");
    }

    @Test
    void runJobRunsOneJobNowAndRunHandlerRunsAHandlerWithoutTheQueue() throws Exception {
        long later = this.client.enqueue(JobRequest.of("audit", new Entry("now"),
                EnqueueOptions.defaults().withDelay(Duration.ofDays(3)))).jobId();

        assertThat(this.queue.runJob(later)).isEqualTo(JobState.COMPLETED);
        this.queue.runHandler("audit", new Entry("direct"));

        assertThat(this.journal.entries).containsExactly("audit now", "audit direct");
        assertThatThrownBy(() -> this.queue.runHandler("no-such-task", new Entry("x")))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("welcome-mail");
    }

    @Test
    void drainStopsJobsThatKeepEnqueuingJobs() {
        this.client.enqueue("forever", new Entry("again"));

        assertThatThrownBy(() -> this.queue.drain("forever", 5)).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("drain ran 5 jobs and more are due");
        this.queue.assertEnqueued("forever");
    }

    @Test
    void aStoppedDrainGivesBackTheJobsItClaimedAndDidNotRun() {
        this.client.enqueue("audit", new Entry("one"));
        this.client.enqueue("report", new Entry("two"));

        // One job of each task is claimed per round: the limit stops the drain after the first.
        assertThatThrownBy(() -> this.queue.drain(null, 1)).isInstanceOf(IllegalStateException.class);

        assertThat(this.journal.entries).hasSize(1);
        String left = this.journal.entries.get(0).startsWith("audit") ? "report" : "audit";
        assertThat(this.queue.assertEnqueued(left).state()).isEqualTo(JobState.READY);
        assertThat(this.queue.drain().ran()).isEqualTo(1);
    }

    @Test
    void aDrainedJobRunsAsOnAWorkerWithItsTimeoutAndProgress() {
        long id = this.client.enqueue("slow", new Entry("a")).jobId();

        long started = System.nanoTime();
        DrainResult result = this.queue.drain("slow");

        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
        assertThat(result.failed()).isEqualTo(1);
        JobSnapshot job = this.client.find(id).orElseThrow();
        assertThat(job.state()).isEqualTo(JobState.FAILED);
        assertThat(job.lastError()).contains("TaskTimeoutException");
        assertThat(job.progress()).isEqualTo("started a");
    }
}
