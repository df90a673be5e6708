package io.pgqueue.store;

import java.util.List;
import java.util.Map;

import io.pgqueue.QueueConfig;
import io.pgqueue.observe.TaskStats;
import io.pgqueue.testing.TestDatabase;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

class StatsStoreTests {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.perClass();

    static JdbcTemplate jdbc;

    @BeforeAll
    static void fill() {
        QueueSchema.migrate(db.dataSource(), "pgqueue");
        jdbc = new JdbcTemplate(db.dataSource());
        // Completed jobs kept for their retention (1 h by default) that no figure counts: the
        // snapshot runs on every node every 10 s and must not read them.
        finished("push", "COMPLETED", "10 minutes", 60_000);
        finished("push", "COMPLETED", "10 seconds", 3);
        finished("push", "FAILED", "10 seconds", 1);
        finished("mail", "FAILED", "2 days", 2);
        finished("mail", "CANCELLED", "10 seconds", 1);
        JobStore jobs = new JobStore(db.dataSource(), QueueConfig.defaults());
        jobs.insert(List.of(new NewJob("push", "1", "{}", 0, null, 0, null, 3, null),
                new NewJob("push", "2", "{}", 0, null, 3_600_000, null, 3, null)));
        jdbc.execute("VACUUM ANALYZE pgqueue.job_finished");
    }

    @Test
    void countsPerTask() {
        Map<String, TaskStats> stats = new StatsStore(db.dataSource(), QueueConfig.defaults()).snapshot();

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
        String plan = jdbc.queryForObject("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "
                + StoreSupport.sql(StatsStore.SNAPSHOT, QueueConfig.defaults()), String.class);
        long pages = jdbc.queryForObject("SELECT (p -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint "
                + "+ (p -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint FROM CAST(? AS json) AS p", Long.class, plan);

        // Reading all 60,000 rows, from the table or a whole index, takes 300 pages; the two ranges 8.
        assertThat(pages).as("pages read, plan: %s", plan).isLessThan(60);
    }

    private static void finished(String task, String state, String ago, int count) {
        jdbc.update("INSERT INTO pgqueue.job_finished (id, task, state, priority, payload, headers, schedule_time, "
                + "attempt, max_attempts, created_at, started_at, finished_at) "
                + "SELECT nextval('pgqueue.job_id_seq'), ?, ?, 0, '1', '{}', now(), 1, 3, now(), now(), "
                + "now() - CAST(? AS interval) - g * interval '1 millisecond' FROM generate_series(1, ?) AS g", task, state, ago,
                count);
    }
}
