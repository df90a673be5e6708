package io.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Uniqueness over time on a real PostgreSQL: a job that finished in one of the policy's states
 * within its period holds its key as an active one does, exactly under concurrent enqueues from
 * many threads and two nodes; the period and the states bound it; bad windows write nothing.
 */
class UniqueJobsTests {

    static final DedupPolicy TEN_MINUTES_COMPLETED = DedupPolicy.unique(Duration.ofMinutes(10), JobState.COMPLETED);

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(TaskDefinition.builder("import").dedupPolicy(TEN_MINUTES_COMPLETED)
        .build(), TestQueue.task("plain"));

    @Test
    void aCompletedJobHoldsItsKeyForThePeriodAndAFailedOneDoesNotUnlessListed() {
        long first = queue.client().enqueue("import", "a.csv", key("a.csv")).jobId();
        finish(first, true);

        EnqueueResult again = queue.client().enqueue("import", "a.csv again", key("a.csv"));
        assertThat(again).isEqualTo(new EnqueueResult(first, EnqueueOutcome.KEPT_EXISTING));
        assertThat(queue.client().enqueue("import", "b.csv", key("b.csv")).created()).as("another key").isTrue();

        long failed = queue.client().enqueue("import", "c.csv", key("c.csv")).jobId();
        finish(failed, false);
        assertThat(queue.client().enqueue("import", "c.csv again", key("c.csv")).created())
            .as("FAILED is not among the task's states").isTrue();
        long failedAgain = queue.client().enqueue("plain", "c.csv", EnqueueOptions.defaults()
            .withDedup("c.csv", DedupPolicy.unique(Duration.ofMinutes(10), JobState.FAILED, JobState.COMPLETED))).jobId();
        finish(failedAgain, false);
        assertThat(queue.client().enqueue("plain", "c.csv", EnqueueOptions.defaults()
            .withDedup("c.csv", DedupPolicy.unique(Duration.ofMinutes(10), JobState.FAILED))))
            .as("the enqueue's own policy lists FAILED").isEqualTo(new EnqueueResult(failedAgain, EnqueueOutcome.KEPT_EXISTING));
    }

    @Test
    void theKeyIsFreeOnceThePeriodSinceTheHoldersEnqueuePassed() {
        DedupPolicy shortWindow = DedupPolicy.unique(Duration.ofMillis(400), JobState.COMPLETED);
        long first = queue.client().enqueue("plain", "x", EnqueueOptions.defaults().withDedup("w", shortWindow)).jobId();
        finish(first, true);
        assertThat(queue.client().enqueue("plain", "x", EnqueueOptions.defaults().withDedup("w", shortWindow)).jobId())
            .isEqualTo(first);

        queue.jdbc().update("UPDATE " + queue.config().schema() + ".job_finished SET created_at = created_at - interval '1 second' "
                + "WHERE id = ?", first);

        EnqueueResult later = queue.client().enqueue("plain", "x", EnqueueOptions.defaults().withDedup("w", shortWindow));
        assertThat(later.created()).isTrue();
        assertThat(later.jobId()).isNotEqualTo(first);
    }

    @Test
    void concurrentEnqueuesOfAKeyWhileItsJobCompletesCreateNoSecondJob() throws Exception {
        long first = queue.client().enqueue("import", "d.csv", key("d.csv")).jobId();
        ClaimedJob claimed = queue.claim("import", 1).get(0);
        // A second node's client on the same database.
        QueueClient other = PgQueue.builder(queue.dataSource()).config(queue.config())
            .tasks(TaskRegistry.of(TaskDefinition.builder("import").dedupPolicy(TEN_MINUTES_COMPLETED).build())).build()
            .client();
        ExecutorService threads = Executors.newFixedThreadPool(16);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<EnqueueResult>> results = new ArrayList<>();
            for (int i = 0; i < 400; i++) {
                QueueClient client = i % 2 == 0 ? queue.client() : other;
                results.add(threads.submit(() -> {
                    start.await();
                    return client.enqueue("import", "d.csv", key("d.csv"));
                }));
            }
            start.countDown();
            // The job completes while the enqueues run.
            queue.store().record(List.of(Outcome.completed(claimed.lease())));
            Set<Long> ids = ConcurrentHashMap.newKeySet();
            for (Future<EnqueueResult> result : results) {
                ids.add(result.get(30, TimeUnit.SECONDS).jobId());
            }
            assertThat(ids).containsExactly(first);
        }
        finally {
            threads.shutdownNow();
            other.close();
        }
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM " + queue.config().schema() + ".job WHERE task = 'import'",
                Long.class)).isZero();
    }

    @Test
    void anEnqueueInsideATransactionWaitsForAnotherOfTheSameKeyAndSeesItsJob() throws Exception {
        TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(queue.dataSource()));
        CountDownLatch enqueued = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            Future<Long> inside = thread.submit(() -> transaction.execute(status -> {
                long id = queue.client().enqueue("import", "e.csv", key("e.csv")).jobId();
                enqueued.countDown();
                try {
                    release.await(10, TimeUnit.SECONDS);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                }
                return id;
            }));
            assertThat(enqueued.await(10, TimeUnit.SECONDS)).isTrue();
            Future<EnqueueResult> outside = Executors.newSingleThreadExecutor().submit(() ->
                    queue.client().enqueue("import", "e.csv", key("e.csv")));
            Thread.sleep(300);
            assertThat(outside).as("waits for the transaction that holds the key").isNotDone();
            release.countDown();
            assertThat(outside.get(10, TimeUnit.SECONDS)).isEqualTo(new EnqueueResult(inside.get(), EnqueueOutcome.KEPT_EXISTING));
        }
        finally {
            thread.shutdownNow();
        }
    }

    @Test
    void aWindowThatCannotWorkIsRefusedAndWritesNothing() {
        assertThatThrownBy(() -> DedupPolicy.unique(Duration.ZERO, JobState.COMPLETED))
            .isInstanceOf(InvalidJobException.class).hasMessageContaining("period of a unique dedup policy must be positive");
        assertThatThrownBy(() -> DedupPolicy.unique(Duration.ofMinutes(1)))
            .isInstanceOf(InvalidJobException.class).hasMessageContaining("needs the final states");
        assertThatThrownBy(() -> DedupPolicy.unique(Duration.ofMinutes(1), JobState.RUNNING))
            .isInstanceOf(InvalidJobException.class).hasMessageContaining("RUNNING is not one: active jobs hold their key always");
        assertThatThrownBy(() -> DedupPolicy.unique(Duration.ofMinutes(1), JobState.FAILED, JobState.FAILED))
            .isInstanceOf(InvalidJobException.class).hasMessageContaining("lists each state once");

        QueueClient notKeepingCompleted = PgQueue.builder(queue.dataSource())
            .config(queue.config().withRetention(new Retention(Duration.ZERO, Duration.ofDays(7), Duration.ofDays(7))))
            .tasks(TaskRegistry.of(TaskDefinition.builder("import").build())).build().client();
        try {
            assertThatThrownBy(() -> notKeepingCompleted.enqueueAll(List.of(JobRequest.of("import", "f", key("f")),
                    JobRequest.of("import", "g", EnqueueOptions.defaults().withDedup("g", TEN_MINUTES_COMPLETED)))))
                .isInstanceOf(InvalidJobException.class)
                .hasMessageContaining("completed jobs are not kept (pgqueue.retention.completed is 0)");
        }
        finally {
            notKeepingCompleted.close();
        }
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM " + queue.config().schema() + ".job", Long.class)).isZero();
    }

    /** Claims the job and writes its outcome: completed, or failed for good. */
    private static void finish(long id, boolean completed) {
        String task = queue.job(id).task();
        ClaimedJob job = queue.claim(task, 100).stream().filter(claimed -> claimed.id() == id).findFirst().orElseThrow();
        queue.store().record(List.of(completed ? Outcome.completed(job.lease()) : Outcome.failed(job.lease(), "bad rows")));
    }

    private static EnqueueOptions key(String key) {
        return EnqueueOptions.defaults().withDedupKey(key);
    }
}
