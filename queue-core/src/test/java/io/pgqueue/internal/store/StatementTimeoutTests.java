package io.pgqueue.internal.store;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.pgqueue.QueueConfig;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.dao.DataAccessException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

class StatementTimeoutTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass();

    @Test
    void aStatementThatRunsPastTheTimeoutIsCancelled() throws Exception {
        JobStore store = new JobStore(queue.dataSource(), QueueConfig.defaults().withStatementTimeout(Duration.ofMillis(500)));
        try (Connection blocker = queue.dataSource().getConnection()) {
            blocker.setAutoCommit(false);
            try (Statement statement = blocker.createStatement()) {
                statement.execute("LOCK TABLE pgqueue.job IN ACCESS EXCLUSIVE MODE");
            }
            long start = System.nanoTime();
            assertTimeoutPreemptively(Duration.ofSeconds(20), () -> assertThatExceptionOfType(DataAccessException.class)
                .isThrownBy(() -> store.insert(List.of(job()))));
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(500));
            blocker.rollback();
        }
        // The connection it ran on is usable again, and quick statements are not cancelled.
        assertThat(store.insert(List.of(job(), job()))).doesNotContainNull();
        assertThat(store.insert(List.of(job()))).doesNotContainNull();
    }

    @Test
    void withoutATimeoutAStatementWaitsAsLongAsItTakes() throws Exception {
        JobStore store = new JobStore(queue.dataSource(), QueueConfig.defaults().withStatementTimeout(Duration.ZERO));
        try (Connection blocker = queue.dataSource().getConnection()) {
            blocker.setAutoCommit(false);
            try (Statement statement = blocker.createStatement()) {
                statement.execute("LOCK TABLE pgqueue.job IN ACCESS EXCLUSIVE MODE");
            }
            CompletableFuture<List<Long>> insert = CompletableFuture.supplyAsync(() -> store.insert(List.of(job())));
            await().atMost(Duration.ofSeconds(10)).until(() -> queue.jdbc().queryForObject(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
                    Long.class) == 1);
            // Several sweeps of the timeout watcher pass over the waiting statement and leave it alone.
            await("waiting").during(Duration.ofMillis(StatementTimeouts.SWEEP_MILLIS * 4))
                .atMost(Duration.ofMillis(StatementTimeouts.SWEEP_MILLIS * 10))
                .until(() -> !insert.isDone());
            blocker.rollback();
            assertThat(insert.get(10, TimeUnit.SECONDS)).doesNotContainNull();
        }
    }

    private static NewJob job() {
        return new NewJob("copy", "1", "{}", 0, null, 0, null, 3, null);
    }
}
