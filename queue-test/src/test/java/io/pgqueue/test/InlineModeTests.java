package io.pgqueue.test;

import io.pgqueue.QueueClient;
import io.pgqueue.test.TestApplication.Journal;
import io.pgqueue.test.TestApplication.Mail;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/** The inline mode: an enqueue runs the jobs at once, after its transaction commits. */
@SpringBootTest(classes = TestApplication.class)
@AutoConfigurePgQueueTest(mode = QueueTestMode.INLINE)
class InlineModeTests {

    @Autowired
    QueueTester queue;

    @Autowired
    QueueClient client;

    @Autowired
    Journal journal;

    @Autowired
    PlatformTransactionManager transactions;

    @Test
    void anEnqueueReturnsAfterItsJobAndTheJobsItEnqueuedRan() {
        this.journal.entries.clear();

        this.client.enqueue("welcome-mail", new Mail("cy@example.com"));

        assertThat(this.journal.entries).containsExactly("mail cy@example.com", "audit mailed cy@example.com");
        this.queue.refuteEnqueued("welcome-mail");
        this.queue.refuteEnqueued("audit");
    }

    @Test
    void insideATransactionTheJobsRunAfterItCommits() {
        this.journal.entries.clear();

        new TransactionTemplate(this.transactions).executeWithoutResult(status -> {
            this.client.enqueue("welcome-mail", new Mail("dee@example.com"));
            assertThat(this.journal.entries).as("not before the commit").isEmpty();
        });

        assertThat(this.journal.entries).containsExactly("mail dee@example.com", "audit mailed dee@example.com");
    }

    @Test
    void aWorkflowRunsToItsEndAtItsEnqueue() {
        this.journal.entries.clear();

        this.client.workflow("inline").add("a", "audit", new TestApplication.Entry("abcd"))
            .add("report", "report", new TestApplication.Entry("r"), io.pgqueue.Workflow.after("a"))
            .enqueue();

        assertThat(this.journal.entries).containsExactly("audit abcd", "report {a=4} a=4");
    }

    @Test
    void aDurableHandlerRunsOnAtOnceWhenItsSignalComesAndItsSleepIsPassed() {
        this.journal.entries.clear();

        long id = this.client.enqueue("durable-order", new TestApplication.Entry("o-9")).jobId();
        assertThat(this.journal.entries).as("charged, then waiting for the signal").containsExactly("charged o-9");

        assertThat(this.queue.signal(id, "shipped", "dhl")).isEqualTo(io.pgqueue.SignalResult.WOKEN);
        assertThat(this.journal.entries).as("signalled, then asleep for a day").containsExactly("charged o-9");
        this.queue.advance(java.time.Duration.ofDays(1));

        // A day of queue time passes the nightly schedule's slot too, which runs as well.
        assertThat(this.journal.entries).contains("followed up receipt-o-9 shipped by dhl")
            .filteredOn(entry -> entry.startsWith("charged")).containsExactly("charged o-9");
    }

    @Test
    void movingTheQueuesTimeRunsTheJobsThatBecameDue() {
        this.journal.entries.clear();
        this.client.enqueue(io.pgqueue.JobRequest.of("audit", new TestApplication.Entry("later"),
                io.pgqueue.EnqueueOptions.defaults().withDelay(java.time.Duration.ofHours(1))));
        assertThat(this.journal.entries).isEmpty();

        this.queue.advance(java.time.Duration.ofHours(1));

        // The hour may pass the nightly schedule's 03:00, whose job then runs too.
        assertThat(this.journal.entries).filteredOn(entry -> !entry.equals("nightly")).containsExactly("audit later");
    }
}
