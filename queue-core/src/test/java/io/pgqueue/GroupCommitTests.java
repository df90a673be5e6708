package io.pgqueue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Concurrent single enqueues outside a transaction share INSERT transactions; each caller still
 * gets its own id once committed, and its own error.
 */
class GroupCommitTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(TestQueue.task("push"));

    static ExecutorService threads;

    @BeforeAll
    static void startThreadsAndRejectPoison() {
        threads = Executors.newFixedThreadPool(16);
        // A database-side failure for one payload, to prove error isolation inside a group.
        queue.jdbc().execute("""
                CREATE FUNCTION pgqueue.reject_poison() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    IF NEW.payload = '"poison"'::jsonb THEN RAISE EXCEPTION 'poison payload'; END IF;
                    RETURN NEW;
                END $$""");
        queue.jdbc().execute("CREATE TRIGGER reject_poison BEFORE INSERT ON pgqueue.job FOR EACH ROW "
                + "EXECUTE FUNCTION pgqueue.reject_poison()");
    }

    @AfterAll
    static void stop() {
        threads.shutdownNow();
    }

    @Test
    void concurrentCallsShareTransactionsAndEachGetsItsCommittedJob() throws Exception {
        Set<Long> ids = ConcurrentHashMap.newKeySet();
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
            int thread = t;
            futures.add(threads.submit(() -> {
                start.await();
                for (int i = 0; i < 200; i++) {
                    long id = queue.client().enqueue("push", thread * 1000 + i).jobId();
                    // Committed by the time the call returns: visible on another connection.
                    assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.job WHERE id = ?", Long.class, id))
                        .isEqualTo(1);
                    ids.add(id);
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> future : futures) {
            future.get(60, TimeUnit.SECONDS);
        }

        assertThat(ids).hasSize(3200);
        assertThat(queue.activeJobs()).isEqualTo(3200);
        long transactions = queue.jdbc().queryForObject("SELECT count(DISTINCT xmin::text) FROM pgqueue.job", Long.class);
        assertThat(transactions).as("INSERT transactions for 3200 jobs").isLessThan(3200);
    }

    @Test
    void onlyTheOffendingCallFails() throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Object>> futures = new ArrayList<>();
        for (int t = 0; t < 16; t++) {
            int thread = t;
            futures.add(threads.submit(() -> {
                start.await();
                try {
                    return queue.client().enqueue("push", thread == 7 ? "poison" : "fine-" + thread).jobId();
                }
                catch (RuntimeException ex) {
                    return ex;
                }
            }));
        }
        start.countDown();
        List<Object> results = new ArrayList<>();
        for (Future<Object> future : futures) {
            results.add(future.get(30, TimeUnit.SECONDS));
        }

        assertThat(results.get(7)).isInstanceOf(RuntimeException.class).asString().contains("poison payload");
        assertThat(results.stream().filter(Long.class::isInstance)).hasSize(15);
        assertThat(queue.activeJobs()).isEqualTo(15);
    }

    @Test
    void callsInsideATransactionStillJoinIt() {
        TransactionTemplate tx = new TransactionTemplate(new DataSourceTransactionManager(queue.dataSource()));
        tx.executeWithoutResult(status -> {
            queue.client().enqueue("push", 1);
            status.setRollbackOnly();
        });
        assertThat(queue.activeJobs()).isZero();
    }
}
