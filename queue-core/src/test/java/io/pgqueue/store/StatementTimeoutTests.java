package io.pgqueue.store;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;

import io.pgqueue.QueueConfig;
import io.pgqueue.testing.TestDatabase;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.dao.DataAccessException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

class StatementTimeoutTests {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.perClass();

    @BeforeAll
    static void migrate() {
        QueueSchema.migrate(db.dataSource(), QueueConfig.defaults().schema());
    }

    @Test
    void aStatementThatRunsPastTheTimeoutIsCancelled() throws Exception {
        JobStore store = new JobStore(db.dataSource(), QueueConfig.defaults().withStatementTimeout(Duration.ofMillis(500)));
        try (Connection blocker = db.dataSource().getConnection()) {
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
        JobStore store = new JobStore(db.dataSource(), QueueConfig.defaults().withStatementTimeout(Duration.ZERO));
        try (Connection blocker = db.dataSource().getConnection()) {
            blocker.setAutoCommit(false);
            try (Statement statement = blocker.createStatement()) {
                statement.execute("LOCK TABLE pgqueue.job IN ACCESS EXCLUSIVE MODE");
            }
            Thread release = new Thread(() -> {
                try {
                    Thread.sleep(StatementTimeouts.SWEEP_MILLIS * 4);
                    blocker.rollback();
                }
                catch (Exception ex) {
                    throw new IllegalStateException(ex);
                }
            });
            release.start();
            assertThat(store.insert(List.of(job()))).doesNotContainNull();
            release.join();
        }
    }

    private static NewJob job() {
        return new NewJob("copy", "1", "{}", 0, null, 0, null, 3, null);
    }
}
