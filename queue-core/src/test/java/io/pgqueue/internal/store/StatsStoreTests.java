package io.pgqueue.internal.store;

import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.pgqueue.QueueConfig;
import io.pgqueue.observe.TaskStats;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

class StatsStoreTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass();

    @BeforeEach
    void fill() {
        // Completed jobs kept for their retention (1 h by default) that no figure counts: the
        // count runs every few seconds and must not read them.
        finished("push", "COMPLETED", "10 minutes", 60_000);
        finished("push", "COMPLETED", "10 seconds", 3);
        finished("push", "FAILED", "10 seconds", 1);
        finished("mail", "FAILED", "2 days", 2);
        finished("mail", "CANCELLED", "10 seconds", 1);
        queue.store().insert(List.of(new NewJob("push", "1", "{}", 0, null, 0, null, 3, null),
                new NewJob("push", "2", "{}", 0, null, 3_600_000, null, 3, null)));
        queue.jdbc().execute("VACUUM ANALYZE pgqueue.job_finished");
    }

    @Test
    void countsPerTask() {
        Map<String, TaskStats> stats = new StatsStore(queue.dataSource(), QueueConfig.defaults()).snapshot(Duration.ZERO).tasks();

        TaskStats push = stats.get("push");
        assertThat(push.ready()).isEqualTo(1);
        assertThat(push.scheduled()).isEqualTo(1);
        assertThat(push.completedLastMinute()).isEqualTo(3);
        assertThat(push.failed()).isEqualTo(1);
        assertThat(push.failedLastMinute()).isEqualTo(1);
        TaskStats mail = stats.get("mail");
        assertThat(mail.failed()).as("failures are counted while retained, however old").isEqualTo(2);
        assertThat(mail.failedLastMinute()).isZero();
        assertThat(mail.completedLastMinute()).isZero();
        assertThat(mail.ready()).isZero();
    }

    @Test
    void readsOnlyTheRetainedFailuresAndTheLastMinutesFinishes() {
        String plan = queue.jdbc().queryForObject("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "
                + StoreSupport.sql(StatsStatements.SNAPSHOT, QueueConfig.defaults()), String.class);
        long pages = queue.jdbc().queryForObject("SELECT (p -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint "
                + "+ (p -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint FROM CAST(? AS json) AS p", Long.class, plan);

        // Reading all 60,000 rows, from the table or a whole index, takes 300 pages; the two ranges 8.
        assertThat(pages).as("pages read, plan: %s", plan).isLessThan(60);
    }

    @Test
    void aSnapshotYoungEnoughIsReadFromTheNodeThatCountedIt() {
        StatsStore nodeA = new StatsStore(queue.dataSource(), QueueConfig.defaults());
        StatsStore nodeB = new StatsStore(queue.dataSource(), QueueConfig.defaults());
        StatsStore.Snapshot counted = nodeA.snapshot(Duration.ZERO);
        assertThat(counted.age()).as("counted now").isEqualTo(counted.took());
        queue.store().insert(List.of(new NewJob("mail", "1", "{}", 0, null, 0, null, 3, null)));

        StatsStore.Snapshot shared = nodeB.snapshot(Duration.ofMinutes(1));
        assertThat(shared.tasks()).as("node A's count, not a new one").isEqualTo(counted.tasks());
        assertThat(shared.tasks().get("mail").ready()).isZero();
        assertThat(shared.took().toNanos()).isCloseTo(counted.took().toNanos(), within(1_000L));
        assertThat(shared.age()).isPositive().isLessThan(Duration.ofMinutes(1));

        // Older than node B accepts: it counts itself.
        StatsStore.Snapshot recounted = nodeB.snapshot(shared.age().dividedBy(2));
        assertThat(recounted.age()).isEqualTo(recounted.took());
        assertThat(recounted.tasks().get("mail").ready()).isEqualTo(1);
    }

    @Test
    void whileAnotherNodeCountsTheLastSnapshotIsReadWithoutWaiting() throws Exception {
        StatsStore store = new StatsStore(queue.dataSource(), QueueConfig.defaults());
        StatsStore.Snapshot counted = store.snapshot(Duration.ZERO);
        try (Connection counting = queue.dataSource().getConnection()) {
            counting.setAutoCommit(false);
            counting.createStatement().execute("SELECT * FROM pgqueue.stats_snapshot FOR UPDATE");
            // The stored snapshot is older than the 1 ms the read accepts.
            await().atMost(Duration.ofSeconds(5)).until(() -> queue.jdbc().queryForObject(
                    "SELECT clock_timestamp() - taken_at > interval '1 millisecond' FROM pgqueue.stats_snapshot",
                    Boolean.class));

            long start = System.nanoTime();
            StatsStore.Snapshot read = store.snapshot(Duration.ofMillis(1));
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("not blocked").isLessThan(Duration.ofSeconds(5));
            assertThat(read.tasks()).isEqualTo(counted.tasks());
            assertThat(read.age()).isGreaterThanOrEqualTo(Duration.ofMillis(1));
            counting.rollback();
        }
    }

    @Test
    void countingAtOnceWaitsForTheNodeCountingAndCountsAfterIt() throws Exception {
        StatsStore store = new StatsStore(queue.dataSource(), QueueConfig.defaults());
        store.snapshot(Duration.ZERO);
        CompletableFuture<StatsStore.Snapshot> refreshed;
        try (Connection counting = queue.dataSource().getConnection()) {
            counting.setAutoCommit(false);
            counting.createStatement().execute("SELECT * FROM pgqueue.stats_snapshot FOR UPDATE");
            refreshed = CompletableFuture.supplyAsync(() -> store.snapshot(Duration.ZERO));
            await().atMost(Duration.ofSeconds(10)).until(() -> queue.jdbc().queryForObject(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                            + "AND wait_event_type = 'Lock' AND query LIKE '%stats_snapshot%FOR UPDATE%'",
                    Long.class) == 1);
            assertThat(refreshed).as("waits for the count in progress").isNotDone();
            queue.store().insert(List.of(new NewJob("mail", "1", "{}", 0, null, 0, null, 3, null)));
            counting.commit();
        }
        assertThat(refreshed.get(10, TimeUnit.SECONDS).tasks().get("mail").ready()).as("counted after it").isEqualTo(1);
    }

    @Test
    void aDeletedSnapshotRowIsPutBack() {
        queue.jdbc().update("DELETE FROM pgqueue.stats_snapshot");
        StatsStore store = new StatsStore(queue.dataSource(), QueueConfig.defaults());

        assertThat(store.snapshot(Duration.ofMinutes(1)).tasks()).containsKey("push");
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.stats_snapshot WHERE taken_at IS NOT NULL",
                Long.class)).isEqualTo(1);
    }

    private static void finished(String task, String state, String ago, int count) {
        queue.jdbc().update("INSERT INTO pgqueue.job_finished (id, task, state, priority, payload, headers, schedule_time, "
                + "attempt, max_attempts, created_at, started_at, finished_at) "
                + "SELECT nextval('pgqueue.job_id_seq'), ?, ?, 0, '1', '{}', now(), 1, 3, now(), now(), "
                + "now() - CAST(? AS interval) - g * interval '1 millisecond' FROM generate_series(1, ?) AS g", task, state, ago,
                count);
    }
}
