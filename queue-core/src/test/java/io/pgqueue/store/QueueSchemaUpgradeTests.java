package io.pgqueue.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import io.pgqueue.CancelResult;
import io.pgqueue.JobState;
import io.pgqueue.QueueConfig;
import io.pgqueue.QueueSchemaException;
import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.FencedResult;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.internal.store.NewJob;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.testing.TestDatabase;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Installations migrated to version 9 before the functions moved to repeatable migrations: they
 * migrate on, keep their jobs, and the current functions write what the versioned ones wrote.
 */
class QueueSchemaUpgradeTests {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.perClass();

    private static final Duration LEASE = Duration.ofSeconds(30);

    @Test
    void anInstallationAtVersion9KeepsItsJobsAndWorksOnOnceMigrated() {
        migrateToVersion9("legacy");
        migrateToVersion9("upgraded");
        assertThatThrownBy(() -> QueueSchema.requireMigrated(db.dataSource(), "upgraded"))
            .isInstanceOf(QueueSchemaException.class)
            .hasMessageContaining("missing: function upgraded.claim_jobs(text[], integer[], text, text, bigint, jsonb), "
                    + "function upgraded.claim_group_ids(text, integer, boolean, integer), "
                    + "function upgraded.record_outcomes(bigint[], integer[], text[], bigint[], text[], text[], boolean, "
                    + "text[]), function upgraded.complete_jobs(bigint[], integer[], boolean, text[]), function upgraded.finished_job(upgraded.job, text, integer, text, text), "
                    + "function upgraded.finished_job(upgraded.job, text, integer, text, text, jsonb), "
                    + "function upgraded.with_attempt(jsonb, text, integer), "
                    + "function upgraded.end_jobs(bigint[], bigint[]), function upgraded.add_waiting_jobs(jsonb), "
                    + "function upgraded.cancel_waiting_job(bigint), "
                    + "function upgraded.search_jobs(text, text, timestamptz, timestamptz, text, text, bigint[], jsonb, "
                    + "text[], timestamptz, bigint, integer), "
                    + "function upgraded.count_jobs(text, text, timestamptz, timestamptz, text, text, bigint[], jsonb, "
                    + "text[]), "
                    + "table upgraded.installation, table upgraded.shard_partition, table upgraded.job_outbox, "
                    + "table upgraded.job_relayed, table upgraded.partition_move, table upgraded.job_moving, "
                    + "table upgraded.move_applied, table upgraded.partition_load, table upgraded.balancer_leader, "
                    + "table upgraded.balancer_decision, table upgraded.message_queue, table upgraded.message, "
                    + "table upgraded.message_group, table upgraded.message_dedup, table upgraded.task_rate, "
                    + "table upgraded.task_group_cursor, table upgraded.schedule, table upgraded.workflow, "
                    + "table upgraded.job_waiting, table upgraded.job_dependency, table upgraded.job_result, "
                    + "table upgraded.workflow_total, table upgraded.job_end_pending, table upgraded.job_awaiter, "
                    + "table upgraded.queue_action, table upgraded.task_history, table upgraded.message_queue_history, "
                    + "table upgraded.task_definition, table upgraded.message_move_task, table upgraded.message_moving, "
                    + "table upgraded.job_step, column upgraded.job.history, column upgraded.job_finished.history, column upgraded.node.schema_version)");
        JobStore legacy = store("legacy");
        JobStore upgraded = store("upgraded");
        List<Lease> legacyLeases = jobsInEveryState(legacy, "legacy");
        List<Lease> upgradedLeases = jobsInEveryState(upgraded, "upgraded");
        List<String> stored = rows("upgraded");

        MigrateResult result = QueueSchema.migrate(db.dataSource(), "upgraded");

        assertThat(result.migrationsExecuted).as("V10 to V32 and the repeatable migrations").isEqualTo(30);
        QueueSchema.requireMigrated(db.dataSource(), "upgraded");
        assertThat(rows("upgraded")).as("jobs untouched by the migration").isEqualTo(stored);
        assertThat(jdbc().queryForList("SELECT DISTINCT partition = CASE WHEN dedup_key IS NULL THEN 0 "
                + "ELSE upgraded.partition_of(dedup_key, 1024) END FROM upgraded.job", Boolean.class))
            .as("jobs in the partitions of their dedup keys").containsExactly(true);
        assertThat(QueueSchema.migrate(db.dataSource(), "upgraded").migrationsExecuted).as("migrating again").isZero();
        QueueSchema.migrate(db.dataSource(), "fresh");
        assertThat(functions("upgraded")).as("the functions of a new installation").isEqualTo(functions("fresh"))
            .extracting(function -> function.substring(0, function.indexOf('(')))
            .containsExactly("CREATE OR REPLACE FUNCTION S.add_waiting_jobs", "CREATE OR REPLACE FUNCTION S.apply_job_ends",
                    "CREATE OR REPLACE FUNCTION S.cancel_waiting_job", "CREATE OR REPLACE FUNCTION S.cancelled_waiting_job",
                    "CREATE OR REPLACE FUNCTION S.claim_group_ids", "CREATE OR REPLACE FUNCTION S.claim_jobs",
                    "CREATE OR REPLACE FUNCTION S.claim_jobs",
                    "CREATE OR REPLACE FUNCTION S.complete_jobs", "CREATE OR REPLACE FUNCTION S.complete_jobs",
                    "CREATE OR REPLACE FUNCTION S.count_jobs", "CREATE OR REPLACE FUNCTION S.doctor",
                    "CREATE OR REPLACE FUNCTION S.drop_finished_steps", "CREATE OR REPLACE FUNCTION S.end_jobs", "CREATE OR REPLACE FUNCTION S.enqueue_job",
                    "CREATE OR REPLACE FUNCTION S.finished_holder",
                    "CREATE OR REPLACE FUNCTION S.finished_job", "CREATE OR REPLACE FUNCTION S.finished_job",
                    "CREATE OR REPLACE FUNCTION S.held_leases", "CREATE OR REPLACE FUNCTION S.job_search_clause",
                    "CREATE OR REPLACE FUNCTION S.lease_position", "CREATE OR REPLACE FUNCTION S.list_jobs",
                    "CREATE OR REPLACE FUNCTION S.mark_running",
                    "CREATE OR REPLACE FUNCTION S.note_job_end", "CREATE OR REPLACE FUNCTION S.partition_of",
                    "CREATE OR REPLACE FUNCTION S.record_outcomes", "CREATE OR REPLACE FUNCTION S.record_outcomes",
                    "CREATE OR REPLACE FUNCTION S.renew_leases", "CREATE OR REPLACE FUNCTION S.require_ascending",
                    "CREATE OR REPLACE FUNCTION S.search_jobs", "CREATE OR REPLACE FUNCTION S.signal_job",
                    "CREATE OR REPLACE FUNCTION S.with_attempt");

        // Every write the workers make, through the versioned functions and through the current ones.
        assertThat(finishEveryWay(upgraded, "upgraded", upgradedLeases))
            .isEqualTo(finishEveryWay(legacy, "legacy", legacyLeases));
        assertThat(comparable("upgraded")).isEqualTo(comparable("legacy"));
        assertThat(comparable("upgraded")).filteredOn(row -> row.startsWith("job_finished"))
            .extracting(row -> row.split(" \\| ")[3])
            .contains("COMPLETED", "FAILED", "CANCELLED");

        // Left: the rescued job, claimed and completed here, and the scheduled one, which the cancel
        // statement archives through the current schema's finished_job.
        List<Lease> rescued = upgraded.claim(List.of(new ClaimLimit("mail", 10)), "node-c", JobState.RUNNING, LEASE)
            .stream()
            .map(ClaimedJob::lease)
            .toList();
        assertThat(upgraded.record(List.of(Outcome.completed(rescued.get(0)))).count(JobState.COMPLETED)).isOne();
        long scheduled = jdbc().queryForObject("SELECT id FROM upgraded.job WHERE schedule_time > now()", Long.class);
        assertThat(upgraded.cancel(scheduled).result()).isEqualTo(CancelResult.CANCELLED);
        assertThat(upgraded.find(scheduled).orElseThrow()).extracting(snapshot -> snapshot.state(), snapshot -> snapshot.attempt())
            .containsExactly(JobState.CANCELLED, 0);
        assertThat(jdbc().queryForObject("SELECT count(*) FROM upgraded.job", Long.class)).isZero();
    }

    /** Migrates a schema as a release without repeatable migrations did: V1 to V9. */
    private static void migrateToVersion9(String schema) {
        MigrateResult result = QueueSchema.flywayConfiguration(db.dataSource(), schema)
            .target("9")
            // Flyway applies repeatable migrations whatever the target: leave them out by name.
            .repeatableSqlMigrationPrefix("no_repeatable_migrations")
            .load()
            .migrate();
        assertThat(result.migrationsExecuted).isEqualTo(9);
    }

    private static JobStore store(String schema) {
        return new JobStore(db.dataSource(), QueueConfig.defaults().withSchema(schema));
    }

    private static JdbcTemplate jdbc() {
        return new JdbcTemplate(db.dataSource());
    }

    /**
     * Leaves jobs READY (due and scheduled), STARTING, RUNNING (with progress, a re-run and a
     * cancellation requested), COMPLETED and FAILED.
     * @return the leases of the claimed jobs still active, by job id
     */
    private static List<Lease> jobsInEveryState(JobStore store, String schema) {
        insertAsVersion9(schema, IntStream.range(0, 10)
            .mapToObj(i -> new NewJob("mail", "{\"n\":" + i + "}", "{}", i % 3, null, 0, i % 4 == 0 ? 60_000L : null,
                    i == 6 ? 1 : 3, i % 5 == 0 ? "key-" + i : null))
            .toList());
        insertAsVersion9(schema, List.of(new NewJob("report", "{}", "{}", 0, null, 0, null, 3, null),
                new NewJob("report", "{}", "{}", 0, null, 0, null, 3, "daily"),
                new NewJob("report", "{}", "{}", 0, null, 3_600_000, 1_000L, 3, null)));
        // Claimed as a release of version 9 did, through the claim function of its day.
        List<Lease> leases = new ArrayList<>(jdbc().query("SELECT id, lease_epoch FROM " + schema + ".claim_jobs("
                + "ARRAY['mail'], ARRAY[10], 'STARTING', 'node-a', 30000) ORDER BY id",
                (rs, row) -> new Lease(rs.getLong("id"), rs.getInt("lease_epoch"))));
        assertThat(leases).hasSize(10);
        List<Lease> running = leases.subList(0, 7);
        assertThat(store.markRunning(running, LEASE).applied()).hasSize(7);
        assertThat(store.heartbeat(running, running.stream().map(lease -> lease.jobId() % 2 == 0 ? "at " + lease.jobId() : null)
            .toList(), LEASE).applied()).hasSize(7);
        assertThat(store.record(List.of(Outcome.completed(leases.get(0)))).applied()).hasSize(1);
        assertThat(store.record(List.of(Outcome.failed(leases.get(1), "broken")))).extracting(FencedResult::applied)
            .isEqualTo(Map.of(leases.get(1).jobId(), JobState.FAILED));
        leases.subList(0, 2).clear();
        // Running: 0-4; starting: 5-7.
        assertThat(store.requestRerun(leases.get(0).jobId(), "{\"n\":\"again\"}")).isTrue();
        assertThat(store.requestRerun(leases.get(4).jobId(), "{\"n\":\"again\"}")).isTrue();
        jdbc().update("UPDATE " + schema + ".job SET cancel_requested = true WHERE id IN (?, ?)", leases.get(2).jobId(),
                leases.get(5).jobId());
        return leases;
    }

    /** Enqueues as a release of version 9 did: its job table has no partition column. */
    private static void insertAsVersion9(String schema, List<NewJob> jobs) {
        for (NewJob job : jobs) {
            jdbc().update("INSERT INTO " + schema + ".job (task, payload, headers, priority, schedule_time, "
                    + "delay_tolerance_deadline, max_attempts, dedup_key) SELECT ?, CAST(? AS jsonb), CAST(? AS jsonb), ?, s.t, "
                    + "s.t + CAST(? AS bigint) * interval '1 millisecond', ?, ? "
                    + "FROM (SELECT now() + CAST(? AS bigint) * interval '1 millisecond' AS t) s", job.task(), job.payload(),
                    job.headers(), job.priority(), job.toleranceMillis(), job.maxAttempts(), job.dedupKey(), job.delayMillis());
        }
    }

    /** Completes, fails, retries, releases and rescues the jobs; returns what each write reported. */
    private static List<FencedResult> finishEveryWay(JobStore store, String schema, List<Lease> leases) {
        List<FencedResult> results = new ArrayList<>();
        Lease stale = new Lease(leases.get(2).jobId(), leases.get(2).epoch() + 1);
        results.add(store.record(List.of(Outcome.completed(leases.get(0)), Outcome.completed(leases.get(1)),
                Outcome.completed(stale))));
        results.add(store.record(List.of(Outcome.failed(leases.get(2), "boom"),
                Outcome.retry(leases.get(3), Duration.ZERO, "again").withProgress("half"),
                Outcome.completed(leases.get(4)).withProgress("done"), Outcome.released(leases.get(5), "stopping"),
                Outcome.released(leases.get(6), "stopping"), Outcome.failed(leases.get(7), "fatal"))));
        List<Lease> claimed = schema.equals("legacy")
                ? jdbc().query("SELECT id, lease_epoch FROM legacy.claim_jobs(ARRAY['mail', 'report'], ARRAY[10, 10], "
                        + "'RUNNING', 'node-b', 30000) ORDER BY id", (rs, row) -> new Lease(rs.getLong("id"), rs.getInt("lease_epoch")))
                : store.claim(List.of(new ClaimLimit("mail", 10), new ClaimLimit("report", 10)), "node-b", JobState.RUNNING, LEASE)
                    .stream()
                    .map(ClaimedJob::lease)
                    .sorted(Comparator.comparingLong(Lease::jobId))
                    .toList();
        assertThat(claimed).hasSize(6);
        jdbc().update("UPDATE " + schema + ".job SET expected_status_change_time = now() - interval '1 second' WHERE id = ?",
                claimed.get(0).jobId());
        // The versioned functions know no RESCUED outcome: a rescue wrote a retry without delay there
        // (the job took a new schedule time; the current functions keep its place).
        results.add(schema.equals("legacy")
                ? store.record(List.of(Outcome.retry(claimed.get(0), Duration.ZERO, "Lease of node-b expired")))
                : store.rescueExpiredLeases(10));
        results.add(store.heartbeat(claimed.subList(1, 6), LEASE));
        results.add(store.record(claimed.subList(1, 6).stream().map(Outcome::completed).toList()));
        return results;
    }

    /** Every row of the job tables as stored, but for the partition that version 10 adds. */
    private static List<String> rows(String schema) {
        return jdbc().queryForList("SELECT CAST(to_jsonb(j) - 'partition' - 'limited' - 'tracked' - 'history' AS text) FROM " + schema + ".job AS j UNION ALL "
                + "SELECT CAST(to_jsonb(f) - 'partition' - 'history' AS text) FROM " + schema + ".job_finished AS f ORDER BY 1",
                String.class);
    }

    /** Every row of the job tables, with times as the facts that do not depend on when the test ran. */
    private static List<String> comparable(String schema) {
        return jdbc().queryForList("""
                SELECT concat_ws(' | ', 'job', id, task, state, priority, payload, headers, attempt, max_attempts,
                                 lease_owner, lease_epoch, dedup_key, rerun_requested, cancel_requested, last_error,
                                 progress, started_at IS NULL, expected_status_change_time IS NULL,
                                 schedule_time > now(), delay_tolerance_deadline - schedule_time)
                FROM %1$s.job
                UNION ALL
                SELECT concat_ws(' | ', 'job_finished', id, task, state, priority, payload, headers, attempt,
                                 max_attempts, lease_owner, lease_epoch, dedup_key, last_error, progress,
                                 started_at IS NULL, delay_tolerance_deadline - schedule_time)
                FROM %1$s.job_finished
                ORDER BY 1
                """.formatted(schema), String.class);
    }

    /** The definitions of the schema's functions, the schema's name replaced by S. */
    private static List<String> functions(String schema) {
        // The schema's name in qualified names and in the channel of awaited jobs' ends ('<schema>/ended').
        return jdbc().queryForList("SELECT replace(replace(pg_get_functiondef(oid), ? || '.', 'S.'), ? || '/', 'S/') "
                + "FROM pg_proc WHERE pronamespace = CAST(? AS regnamespace) ORDER BY proname, pronargs", String.class,
                schema, schema, schema);
    }
}
