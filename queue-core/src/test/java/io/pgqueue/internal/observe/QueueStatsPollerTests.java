package io.pgqueue.internal.observe;

import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;

import io.pgqueue.QueueConfig;
import io.pgqueue.internal.store.StatsStore;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class QueueStatsPollerTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass();

    @BeforeAll
    static void createSlowSchema() {
        // A schema whose statistics take 300 ms to read, as a huge backlog's would.
        JdbcTemplate jdbc = queue.jdbc();
        jdbc.execute("CREATE SCHEMA slow");
        jdbc.execute("CREATE VIEW slow.job AS SELECT j.* FROM pgqueue.job AS j RIGHT JOIN pg_sleep(0.3) ON true "
                + "WHERE j.id IS NOT NULL");
        jdbc.execute("CREATE VIEW slow.job_finished AS SELECT * FROM pgqueue.job_finished");
        jdbc.execute("CREATE VIEW slow.task_control AS SELECT * FROM pgqueue.task_control");
        jdbc.execute("CREATE TABLE slow.stats_snapshot (LIKE pgqueue.stats_snapshot INCLUDING ALL)");
        jdbc.execute("INSERT INTO slow.stats_snapshot (singleton) VALUES (true)");
    }

    @Test
    void countsAtTheIntervalWhileCountingIsQuick() {
        Duration interval = Duration.ofMillis(500);
        QueueStatsPoller poller = new QueueStatsPoller(queue.stores().stats(), interval);
        poller.start();
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> poller.latest().takenAt() != null);
            Instant first = countedAt();

            // The first count (a new connection, a new plan) may take more than 25 ms; the next ones do not.
            await().atMost(Duration.ofSeconds(10)).until(() -> countedAt().isAfter(first)
                    && poller.interval().equals(interval));
            Instant later = countedAt();
            await().atMost(Duration.ofSeconds(10)).until(() -> countedAt().isAfter(later));
        }
        finally {
            poller.stop();
        }
    }

    @Test
    void aCountPastTheStatementTimeoutIsNotTriedAgainAtOnce() {
        StatsStore store = new StatsStore(queue.dataSource(), QueueConfig.defaults().withSchema("slow")
            .withStatementTimeout(Duration.ofMillis(100)));
        QueueStatsPoller poller = new QueueStatsPoller(store, Duration.ofMillis(100));
        poller.start();
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> poller.latest().error() != null);
            assertThat(poller.interval()).as("this node waits").isGreaterThanOrEqualTo(Duration.ofSeconds(2));
            assertThat(queue.jdbc().queryForObject("SELECT took_ms FROM slow.stats_snapshot",
                    Double.class)).as("and so do the others").isGreaterThanOrEqualTo(100.0);
        }
        finally {
            poller.stop();
        }
    }

    private static Instant countedAt() {
        return queue.jdbc().queryForObject("SELECT taken_at FROM pgqueue.stats_snapshot",
                Timestamp.class).toInstant();
    }

    @Test
    void waitsTwentyTimesTheQuerysDurationWhileThatIsLongerThanTheInterval() {
        QueueStatsPoller poller = new QueueStatsPoller(new StatsStore(queue.dataSource(),
                QueueConfig.defaults().withSchema("slow")), Duration.ofMillis(100));
        poller.start();
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> poller.latest().takenAt() != null);
            assertThat(poller.latest().error()).isNull();
            await().atMost(Duration.ofSeconds(5)).until(() -> poller.interval().compareTo(Duration.ofMillis(100)) > 0);
            assertThat(poller.interval()).isGreaterThanOrEqualTo(Duration.ofMillis(300 * QueueStatsPoller.WAIT_PER_QUERY_TIME));
            Instant first = poller.latest().takenAt();

            await("no query within 20 times the last one's duration").during(Duration.ofSeconds(2))
                .atMost(Duration.ofSeconds(3)).until(() -> poller.latest().takenAt().equals(first));
        }
        finally {
            poller.stop();
        }
    }
}
