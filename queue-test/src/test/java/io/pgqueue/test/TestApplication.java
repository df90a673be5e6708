package io.pgqueue.test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.pgqueue.QueueClient;
import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import io.pgqueue.TaskSnoozedException;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Component;

/** An application with a few tasks, to test the test kit against. */
@SpringBootApplication
public class TestApplication {

    /** What the handlers did, in order. */
    @Component
    static class Journal {

        final List<String> entries = new CopyOnWriteArrayList<>();

        final AtomicInteger flakyCalls = new AtomicInteger();

        final AtomicInteger snoozyCalls = new AtomicInteger();
    }

    record Mail(String to) {
    }

    record Entry(String text) {
    }

    /** Sends a mail and audits it: a job that enqueues a job. */
    @Component
    @QueueTask(name = "welcome-mail")
    static class WelcomeMail implements TaskHandler<Mail> {

        private final Journal journal;

        private final QueueClient queue;

        WelcomeMail(Journal journal, QueueClient queue) {
            this.journal = journal;
            this.queue = queue;
        }

        @Override
        public void handle(Mail mail, TaskContext context) {
            this.journal.entries.add("mail " + mail.to());
            this.queue.enqueue("audit", new Entry("mailed " + mail.to()));
        }
    }

    @Component
    @QueueTask(name = "audit")
    static class Audit implements TaskHandler<Entry> {

        private final Journal journal;

        Audit(Journal journal) {
            this.journal = journal;
        }

        @Override
        public void handle(Entry entry, TaskContext context) {
            this.journal.entries.add("audit " + entry.text());
            context.recordResult(entry.text().length());
        }
    }

    /** Fails its first attempt; retried a minute later. */
    @Component
    @QueueTask(name = "flaky", maxAttempts = 3, retry = @QueueTask.Backoff(kind = QueueTask.Backoff.Kind.FIXED,
            delay = "1m"))
    static class Flaky implements TaskHandler<Entry> {

        private final Journal journal;

        Flaky(Journal journal) {
            this.journal = journal;
        }

        @Override
        public void handle(Entry entry, TaskContext context) {
            if (this.journal.flakyCalls.incrementAndGet() == 1) {
                throw new IllegalStateException("first attempt fails");
            }
            this.journal.entries.add("flaky " + entry.text() + " on attempt " + context.attempt());
        }
    }

    /** Snoozes its first run for ten minutes; one attempt only, which the snooze does not spend. */
    @Component
    @QueueTask(name = "snoozy", maxAttempts = 1)
    static class Snoozy implements TaskHandler<Entry> {

        private final Journal journal;

        Snoozy(Journal journal) {
            this.journal = journal;
        }

        @Override
        public void handle(Entry entry, TaskContext context) {
            if (this.journal.snoozyCalls.incrementAndGet() == 1) {
                throw new TaskSnoozedException(Duration.ofMinutes(10));
            }
            this.journal.entries.add("snoozy " + entry.text() + " on attempt " + context.attempt());
        }
    }

    /** Charges, waits for the signal 'shipped', sleeps a day durably, then follows up: each step once. */
    @Component
    @QueueTask(name = "durable-order", maxAttempts = 1)
    static class DurableOrder implements TaskHandler<Entry> {

        private final Journal journal;

        DurableOrder(Journal journal) {
            this.journal = journal;
        }

        @Override
        public void handle(Entry entry, TaskContext context) {
            String charge = context.step("charge", String.class, () -> {
                this.journal.entries.add("charged " + entry.text());
                return "receipt-" + entry.text();
            });
            String carrier = context.awaitSignal("shipped", String.class, Duration.ofDays(7)).orElse("nobody");
            context.sleep("cool-off", Duration.ofDays(1));
            context.step("follow-up", () -> this.journal.entries.add("followed up " + charge + " shipped by " + carrier));
        }
    }

    /** Runs every night at 03:00 UTC. */
    @Component
    @QueueTask(name = "nightly", cron = "0 0 3 * * *")
    static class Nightly implements TaskHandler<java.util.Map<String, Object>> {

        private final Journal journal;

        Nightly(Journal journal) {
            this.journal = journal;
        }

        @Override
        public void handle(java.util.Map<String, Object> run, TaskContext context) {
            this.journal.entries.add("nightly");
        }
    }

    /** Audits an entry whose payload is encrypted at rest. */
    @Component
    @QueueTask(name = "secret-audit", encrypted = true)
    static class SecretAudit implements TaskHandler<Entry> {

        private final Journal journal;

        SecretAudit(Journal journal) {
            this.journal = journal;
        }

        @Override
        public void handle(Entry entry, TaskContext context) {
            this.journal.entries.add("secret " + entry.text());
        }
    }

    /** Reads the results of the steps it runs after. */
    @Component
    @QueueTask(name = "report")
    static class Report implements TaskHandler<Entry> {

        private final Journal journal;

        Report(Journal journal) {
            this.journal = journal;
        }

        @Override
        public void handle(Entry entry, TaskContext context) {
            this.journal.entries.add("report " + context.dependencyResults(Integer.class) + " a="
                    + context.dependencyResult("a", Integer.class).orElse(-1));
        }
    }

    /** Enqueues itself again, for ever. */
    @Component
    @QueueTask(name = "forever")
    static class Forever implements TaskHandler<Entry> {

        private final QueueClient queue;

        Forever(QueueClient queue) {
            this.queue = queue;
        }

        @Override
        public void handle(Entry entry, TaskContext context) {
            this.queue.enqueue("forever", entry);
        }
    }

    /** Reports its progress, then waits longer than its timeout allows. */
    @Component
    @QueueTask(name = "slow", timeout = "200ms", maxAttempts = 1)
    static class Slow implements TaskHandler<Entry> {

        @Override
        public void handle(Entry entry, TaskContext context) throws InterruptedException {
            context.progress("started " + entry.text());
            Thread.sleep(10_000);
        }
    }
}
