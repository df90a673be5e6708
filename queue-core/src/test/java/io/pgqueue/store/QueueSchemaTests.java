package io.pgqueue.store;

import java.util.List;

import io.pgqueue.QueueConfig;
import io.pgqueue.QueueSchemaException;
import io.pgqueue.testing.TestDatabase;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class QueueSchemaTests {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.perClass();

    @Test
    void migratesIntoItsOwnSchemaWithItsOwnHistoryAndIsIdempotent() {
        assertThat(QueueSchema.migrate(db.dataSource(), "jobs_a").migrationsExecuted).isEqualTo(9);
        assertThat(QueueSchema.migrate(db.dataSource(), "jobs_a").migrationsExecuted).isZero();

        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        List<String> tables = jdbc.queryForList(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'jobs_a' ORDER BY 1", String.class);
        assertThat(tables).containsExactly("job", "job_finished", "node", "pgqueue_schema_history", "stats_snapshot",
                "task_control");
        assertThat(jdbc.queryForList("SELECT reloptions::text FROM pg_class WHERE relname = 'job' "
                + "AND relnamespace = 'jobs_a'::regnamespace", String.class).get(0))
            .contains("autovacuum_vacuum_scale_factor=0");
    }

    @Test
    void coexistsWithTheApplicationsFlywayInASharedSchema() {
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        jdbc.execute("CREATE SCHEMA shared");
        // The application's own Flyway ran first and owns the default history table.
        Flyway.configure()
            .dataSource(db.dataSource())
            .schemas("shared")
            .locations("classpath:io/pgqueue/store/appmigration")
            .load()
            .migrate();

        assertThat(QueueSchema.migrate(db.dataSource(), "shared").migrationsExecuted).isEqualTo(9);

        assertThat(jdbc.queryForObject("SELECT count(*) FROM shared.flyway_schema_history", Long.class)).isEqualTo(1);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM shared.customer", Long.class)).isZero();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM shared.job", Long.class)).isZero();
    }

    @Test
    void requireMigratedFindsASchemaThatMissedTheLatestMigration() {
        QueueSchema.migrate(db.dataSource(), "partly");
        QueueSchema.requireMigrated(db.dataSource(), "partly");

        // As if separate tooling had applied V1-V7 only.
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.stats_snapshot");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 8 (missing: table partly.stats_snapshot). ");

        // V1-V6 only.
        new JdbcTemplate(db.dataSource()).execute("DROP FUNCTION partly.complete_jobs");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 8 (missing: function partly.complete_jobs(bigint[], "
                    + "integer[], boolean), table partly.stats_snapshot)");

        // V1-V4 only.
        new JdbcTemplate(db.dataSource()).execute("DROP FUNCTION partly.record_outcomes, partly.renew_leases, "
                + "partly.mark_running, partly.held_leases");

        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 8 (missing: function partly.held_leases(bigint[], "
                    + "integer[], text[]), function partly.mark_running(")
            .hasMessageContaining("QueueSchema.migrate");

        // V1-V3 only.
        new JdbcTemplate(db.dataSource()).execute("DROP FUNCTION partly.claim_jobs");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .hasMessageContaining("(missing: function partly.claim_jobs(text[], integer[], text, text, bigint), ");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "absent"))
            .isInstanceOf(QueueSchemaException.class);
    }

    @Test
    void archivedCompletedJobsEnterOnlyThePrimaryKeyAndTheRetentionIndex() {
        QueueSchema.migrate(db.dataSource(), "archive");
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        // An index without a predicate takes an entry for every archived job, completed ones included.
        assertThat(jdbc.queryForList("SELECT CAST(CAST(indexrelid AS regclass) AS text) FROM pg_index "
                + "WHERE indrelid = CAST('archive.job_finished' AS regclass) AND indpred IS NULL ORDER BY 1", String.class))
            .containsExactly("archive.job_finished_pkey", "archive.job_finished_retention_idx");

        // A task's failures are still found through an index, however many completed jobs are kept.
        jdbc.update("INSERT INTO archive.job_finished (id, task, state, priority, payload, headers, schedule_time, "
                + "attempt, max_attempts, created_at, started_at, finished_at) "
                + "SELECT g, 'task-' || g % 5, CASE WHEN g % 997 = 0 THEN 'FAILED' ELSE 'COMPLETED' END, 0, '1', '{}', "
                + "now(), 1, 3, now(), now(), now() - g * interval '1 millisecond' FROM generate_series(1, 30000) AS g");
        jdbc.execute("VACUUM ANALYZE archive.job_finished");
        String plan = new NamedParameterJdbcTemplate(jdbc).queryForObject("EXPLAIN (FORMAT JSON) "
                + StoreSupport.sql(JobStatements.RECENT_FAILURES, QueueConfig.defaults().withSchema("archive")),
                new MapSqlParameterSource("task", "task-0").addValue("limit", 20), String.class);
        assertThat(plan).contains("\"Index Name\": \"job_finished_failed_idx\"");
        assertThat(new JobStore(db.dataSource(), QueueConfig.defaults().withSchema("archive")).recentFailures("task-0", 20))
            .extracting(JobStore.Failure::id).containsExactly(4985L, 9970L, 14955L, 19940L, 24925L, 29910L);
    }

    @Test
    void vacuumKeepsTheEmptiedPagesOfTheJobTable() {
        QueueSchema.migrate(db.dataSource(), "churn");
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        jdbc.update("INSERT INTO churn.job (task, payload, max_attempts) SELECT 't', '1', 3 FROM generate_series(1, 5000)");
        long filled = jdbc.queryForObject("SELECT pg_relation_size('churn.job')", Long.class);
        jdbc.update("DELETE FROM churn.job");

        // Truncating the empty tail would take an ACCESS EXCLUSIVE lock on the queue's busiest table.
        jdbc.execute("VACUUM churn.job");

        assertThat(jdbc.queryForObject("SELECT pg_relation_size('churn.job')", Long.class)).isEqualTo(filled);
    }

    @Test
    void rejectsSchemaNamesThatAreNotPlainIdentifiers() {
        assertThatThrownBy(() -> QueueSchema.migrate(db.dataSource(), "x; DROP TABLE y"))
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("lower-case identifier");
        assertThatThrownBy(() -> QueueSchema.migrate(db.dataSource(), "Jobs")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void constraintsRejectImpossibleRows() {
        QueueSchema.migrate(db.dataSource(), "checks");
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());

        assertThatThrownBy(() -> jdbc.update("INSERT INTO checks.job (task, payload, max_attempts, state, started_at, "
                + "lease_owner, expected_status_change_time) VALUES ('t', '1', 3, 'COMPLETED', now(), 'w', now())")).hasMessageContaining("job_state_active");
        assertThatThrownBy(() -> jdbc.update("INSERT INTO checks.job (task, payload, max_attempts, priority) "
                + "VALUES ('t', '1', 3, 5000)")).hasMessageContaining("job_priority_range");
        assertThatThrownBy(() -> jdbc.update("INSERT INTO checks.job (task, payload, max_attempts, state, started_at) "
                + "VALUES ('t', '1', 3, 'RUNNING', now())")).hasMessageContaining("job_lease");
        assertThatThrownBy(() -> jdbc.update("INSERT INTO checks.job (task, payload, max_attempts, attempt) "
                + "VALUES ('t', '1', 3, 4)")).hasMessageContaining("job_attempts");
        assertThatThrownBy(() -> jdbc.update("INSERT INTO checks.job_finished (id, task, state, priority, payload, "
                + "headers, schedule_time, attempt, max_attempts, created_at) "
                + "VALUES (1, 't', 'COMPLETED', 0, '1', '{}', now(), 1, 1, now())")).hasMessageContaining("job_finished_ran");
    }
}
