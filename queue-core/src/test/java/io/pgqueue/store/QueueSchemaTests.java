package io.pgqueue.store;

import java.sql.Connection;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.stream.IntStream;

import io.pgqueue.CancelResult;
import io.pgqueue.JobFailure;
import io.pgqueue.JobState;
import io.pgqueue.QueueConfig;
import io.pgqueue.QueueSchemaException;
import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.JobStatements;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.internal.store.NewJob;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.internal.store.StoreSupport;
import io.pgqueue.testing.TestDatabase;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class QueueSchemaTests {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.perClass();

    @Test
    void migratesIntoItsOwnSchemaWithItsOwnHistoryAndIsIdempotent() {
        // 32 versioned migrations (the tables) and 7 repeatable ones (the functions).
        assertThat(QueueSchema.migrate(db.dataSource(), "jobs_a").migrationsExecuted).isEqualTo(39);
        assertThat(QueueSchema.migrate(db.dataSource(), "jobs_a").migrationsExecuted).isZero();

        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        List<String> tables = jdbc.queryForList(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'jobs_a' ORDER BY 1", String.class);
        assertThat(tables).containsExactly("balancer_decision", "balancer_leader", "installation", "job", "job_awaiter",
                "job_dependency", "job_end_pending", "job_finished", "job_moving", "job_outbox", "job_relayed", "job_result", "job_step", "job_waiting", "message", "message_dedup", "message_group", "message_move_task", "message_moving", "message_queue",
                "message_queue_history", "move_applied", "node", "partition_load", "partition_map",
                "partition_map_version", "partition_move", "pgqueue_schema_history", "queue_action", "schedule", "shard", "shard_partition",
                "stats_snapshot", "task_control", "task_definition", "task_group_cursor", "task_history", "task_rate", "workflow",
                "workflow_total");
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

        assertThat(QueueSchema.migrate(db.dataSource(), "shared").migrationsExecuted).isEqualTo(39);

        assertThat(jdbc.queryForObject("SELECT count(*) FROM shared.flyway_schema_history", Long.class)).isEqualTo(1);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM shared.customer", Long.class)).isZero();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM shared.job", Long.class)).isZero();
    }

    @Test
    void requireMigratedFindsASchemaThatMissedTheLatestMigration() {
        QueueSchema.migrate(db.dataSource(), "partly");
        QueueSchema.requireMigrated(db.dataSource(), "partly");

        // As if separate tooling had applied V1-V23 only.
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.queue_action");
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.task_history");
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.message_queue_history");
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.task_definition CASCADE");
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.message_move_task");
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.message_moving");
        new JdbcTemplate(db.dataSource()).execute("ALTER TABLE partly.message DROP COLUMN partition");
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.job_step");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 32 (missing: table partly.queue_action, table partly.task_history, "
                    + "table partly.message_queue_history, table partly.task_definition, table partly.message_move_task, "
                    + "table partly.message_moving, table partly.job_step, column partly.message.partition). ");
        new JdbcTemplate(db.dataSource()).execute("CREATE TABLE partly.queue_action (id bigint)");
        new JdbcTemplate(db.dataSource()).execute("CREATE TABLE partly.task_history (id bigint)");
        new JdbcTemplate(db.dataSource()).execute("CREATE TABLE partly.message_queue_history (id bigint)");
        new JdbcTemplate(db.dataSource()).execute("CREATE TABLE partly.task_definition (id bigint)");
        new JdbcTemplate(db.dataSource()).execute("CREATE TABLE partly.message_move_task (id bigint)");
        new JdbcTemplate(db.dataSource()).execute("CREATE TABLE partly.message_moving (id bigint)");
        new JdbcTemplate(db.dataSource()).execute("ALTER TABLE partly.message ADD COLUMN partition integer");
        new JdbcTemplate(db.dataSource()).execute("CREATE TABLE partly.job_step (id bigint, resolved text)");

        // V1-V22 only.
        new JdbcTemplate(db.dataSource()).execute("ALTER TABLE partly.job DROP COLUMN history");
        new JdbcTemplate(db.dataSource()).execute("ALTER TABLE partly.job_finished DROP COLUMN history");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 32 (missing: column partly.job.history, "
                    + "column partly.job_finished.history). ");

        // V1-V20 only.
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.job_awaiter");
        new JdbcTemplate(db.dataSource()).execute("ALTER TABLE partly.message DROP COLUMN fair_group");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 32 (missing: table partly.job_awaiter, "
                    + "column partly.message.fair_group, column partly.job.history, "
                    + "column partly.job_finished.history). ");

        // As if separate tooling had applied V1-V17 only.
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.workflow, partly.job_waiting, partly.job_dependency, "
                + "partly.job_result, partly.workflow_total, partly.job_end_pending CASCADE");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 32 (missing: table partly.workflow, "
                    + "table partly.job_waiting, table partly.job_dependency, table partly.job_result, "
                    + "table partly.workflow_total, table partly.job_end_pending, table partly.job_awaiter, "
                    + "column partly.message.fair_group, column partly.job.history, "
                    + "column partly.job_finished.history). ");

        // V1-V16 only.
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.schedule");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 32 (missing: table partly.schedule, table partly.workflow, ");

        // V1-V15 only.
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.task_group_cursor");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 32 (missing: table partly.task_group_cursor, "
                    + "table partly.schedule, table partly.workflow, ");

        // V1-V14 only.
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.task_rate");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 32 (missing: table partly.task_rate, "
                    + "table partly.task_group_cursor, table partly.schedule, table partly.workflow, ");

        // V1-V13 only.
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.message_queue, partly.message, "
                + "partly.message_group, partly.message_dedup");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 32 (missing: table partly.message_queue, "
                    + "table partly.message, table partly.message_group, table partly.message_dedup, table partly.task_rate, table partly.task_group_cursor, "
                    + "table partly.schedule, table partly.workflow, ");

        // V1-V12 only.
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.partition_load, partly.balancer_leader, "
                + "partly.balancer_decision");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 32 (missing: table partly.partition_load, "
                    + "table partly.balancer_leader, table partly.balancer_decision, table partly.message_queue, ");

        // V1-V11 only.
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.partition_move, partly.job_moving, partly.move_applied");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 32 (missing: table partly.partition_move, "
                    + "table partly.job_moving, table partly.move_applied, ");

        // V1-V10 only.
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.job_outbox, partly.job_relayed");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 32 (missing: table partly.job_outbox, "
                    + "table partly.job_relayed, table partly.partition_move, ");

        // V1-V9 only.
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.installation, partly.shard_partition");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 32 (missing: table partly.installation, "
                    + "table partly.shard_partition, table partly.job_outbox, table partly.job_relayed, ");

        // V1-V7 only.
        new JdbcTemplate(db.dataSource()).execute("DROP TABLE partly.stats_snapshot");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 32 (missing: table partly.stats_snapshot, "
                    + "table partly.installation, table partly.shard_partition, table partly.job_outbox, "
                    + "table partly.job_relayed, ");

        // V1-V6 only.
        new JdbcTemplate(db.dataSource()).execute("DROP FUNCTION partly.complete_jobs(bigint[], integer[], boolean), "
                + "partly.complete_jobs(bigint[], integer[], boolean, text[])");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 32 (missing: function partly.complete_jobs(bigint[], "
                    + "integer[], boolean), function partly.complete_jobs(bigint[], integer[], boolean, text[]), "
                    + "table partly.stats_snapshot, ");

        // V1-V4 only.
        new JdbcTemplate(db.dataSource()).execute("DROP FUNCTION partly.record_outcomes(bigint[], integer[], text[], bigint[], text[], text[], boolean), "
                + "partly.record_outcomes(bigint[], integer[], text[], bigint[], text[], text[], boolean, text[]), partly.renew_leases, "
                + "partly.mark_running, partly.held_leases");

        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'partly' is not migrated to version 32 (missing: function partly.held_leases(bigint[], "
                    + "integer[], text[]), function partly.mark_running(")
            .hasMessageContaining("QueueSchema.migrate");

        // V1-V3 only.
        new JdbcTemplate(db.dataSource()).execute("DROP FUNCTION partly.claim_jobs(text[], integer[], text, text, bigint), "
                + "partly.claim_jobs(text[], integer[], text, text, bigint, jsonb)");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "partly"))
            .hasMessageContaining("(missing: function partly.claim_jobs(text[], integer[], text, text, bigint, jsonb), ");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "absent"))
            .isInstanceOf(QueueSchemaException.class);
    }

    @Test
    void requireMigratedFindsFunctionsLeftFromAnOlderRelease() {
        QueueSchema.migrate(db.dataSource(), "stale");
        QueueSchema.requireMigrated(db.dataSource(), "stale");

        // As if tooling had applied an older release's repeatable migrations and not this one's.
        new JdbcTemplate(db.dataSource()).execute("COMMENT ON FUNCTION stale.record_outcomes(bigint[], integer[], "
                + "text[], bigint[], text[], text[], boolean) IS NULL");

        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "stale"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("'stale' holds functions of an older release (stale.record_outcomes(bigint[], ")
            .hasMessageContaining("repeatable migrations");
        new JdbcTemplate(db.dataSource()).execute("COMMENT ON FUNCTION stale.record_outcomes(bigint[], integer[], "
                + "text[], bigint[], text[], text[], boolean) IS 'pgqueue record_outcomes revision 3: an older body'");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "stale"))
            .hasMessageContaining("'stale' holds functions of an older release (stale.record_outcomes(bigint[], ");

        // The next release's revision serves this release's nodes too: both run on the newer schema.
        new JdbcTemplate(db.dataSource()).execute("COMMENT ON FUNCTION stale.record_outcomes(bigint[], integer[], "
                + "text[], bigint[], text[], text[], boolean) IS 'pgqueue record_outcomes revision 9: a newer body'");
        QueueSchema.requireMigrated(db.dataSource(), "stale");

        new JdbcTemplate(db.dataSource()).execute("UPDATE stale.pgqueue_schema_history SET checksum = 0 "
                + "WHERE script = 'R__fenced_writes.sql'");
        QueueSchema.migrate(db.dataSource(), "stale");
        QueueSchema.requireMigrated(db.dataSource(), "stale");
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
            .extracting(JobFailure::id).containsExactly(4985L, 9970L, 14955L, 19940L, 24925L, 29910L);
    }

    @Test
    void theArchivedRowIsInlinedIntoEveryStatementThatArchives() throws Exception {
        QueueConfig config = QueueConfig.defaults().withSchema("inlined");
        QueueSchema.migrate(db.dataSource(), "inlined");
        // Due when the transaction below begins (its now()).
        new JobStore(db.dataSource(), config)
            .insert(IntStream.range(0, 5).mapToObj(i -> new NewJob("t", "{}", "{}", 0, null, 0, null, 3, null)).toList());
        String calls = "SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions "
                + "WHERE schemaname = 'inlined' AND funcname = ?";
        try (Connection connection = db.dataSource().getConnection()) {
            SingleConnectionDataSource oneConnection = new SingleConnectionDataSource(connection, true);
            JdbcTemplate jdbc = new JdbcTemplate(oneConnection);
            JobStore store = new JobStore(oneConnection, config);
            new TransactionTemplate(new DataSourceTransactionManager(oneConnection)).executeWithoutResult(status -> {
                // 'all' counts the calls of SQL functions too, those PostgreSQL did not inline.
                jdbc.execute("SET LOCAL track_functions = 'all'");
                List<Lease> leases = store.claim(List.of(new ClaimLimit("t", 4)), "w", JobState.RUNNING, Duration.ofMinutes(1))
                    .stream()
                    .map(ClaimedJob::lease)
                    .sorted(Comparator.comparingLong(Lease::jobId))
                    .toList();
                assertThat(store.record(List.of(Outcome.completed(leases.get(0)))).count(JobState.COMPLETED)).isOne();
                assertThat(store.record(List.of(Outcome.failed(leases.get(1), "no"), Outcome.released(leases.get(2), "stop")))
                    .applied()).hasSize(2);
                jdbc.update("UPDATE inlined.job SET cancel_requested = true WHERE id = ?", leases.get(3).jobId());
                assertThat(store.record(List.of(Outcome.failed(leases.get(3), "no"))).count(JobState.CANCELLED)).isOne();
                long ready = jdbc.queryForObject("SELECT max(id) FROM inlined.job WHERE state = 'READY'", Long.class);
                assertThat(store.cancel(ready).result()).isEqualTo(CancelResult.CANCELLED);

                // Batches without history entries, each through the signature without them, which calls the other.
                assertThat(jdbc.queryForObject(calls, Long.class, "complete_jobs")).isEqualTo(2);
                assertThat(jdbc.queryForObject(calls, Long.class, "record_outcomes")).isEqualTo(4);
                assertThat(jdbc.queryForObject("SELECT count(*) FROM inlined.job_finished", Long.class)).isEqualTo(4);
                assertThat(jdbc.queryForObject(calls, Long.class, "finished_job")).as("calls not inlined").isZero();
                // Called in a select list, where PostgreSQL cannot inline it, each call counts.
                jdbc.queryForList("SELECT inlined.finished_job(j, 'CANCELLED', j.attempt, j.last_error, j.progress) "
                        + "FROM inlined.job AS j");
                assertThat(jdbc.queryForObject(calls, Long.class, "finished_job")).isOne();
            });
        }
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
