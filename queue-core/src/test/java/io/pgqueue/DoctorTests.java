package io.pgqueue;

import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.Map;

import io.pgqueue.testing.TestShards;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The doctor finds what makes a queue slow or stuck that an operator can fix: a schema that missed
 * its migrations, a missing index, autovacuum switched off for a job table, a transaction held open.
 */
class DoctorTests {

    @RegisterExtension
    final TestShards databases = TestShards.perTest("doctor", 1);

    @Test
    void aHealthyQueuePassesAndEachProblemIsFoundWithWhatToDo() throws Exception {
        PgQueue queue = PgQueue.builder(this.databases.get(0).dataSource()).tasks(TaskRegistry.of(List.of()))
            .migrateSchema(true).build();
        JdbcTemplate jdbc = new JdbcTemplate(this.databases.get(0).dataSource());

        assertThat(queue.admin().doctor()).extracting(DoctorCheck::check).containsExactly("schema", "indexes", "dead rows",
                "long transactions", "autovacuum", "idle in transaction", "node releases", "connections");
        assertThat(queue.admin().doctor()).filteredOn(check -> !check.check().equals("autovacuum"))
            .allSatisfy(check -> assertThat(check.ok()).as(check.toString()).isTrue());

        // Worker nodes of two releases: a rolling deploy in progress.
        jdbc.update("INSERT INTO pgqueue.node (id, host, pools, schema_version) VALUES ('old', 'h', '{}', 27), "
                + "('new', 'h', '{}', 28), ('older', 'h', '{}', NULL)");
        assertThat(check(queue, "node releases")).satisfies(check -> {
            assertThat(check.status()).isEqualTo("WARN");
            assertThat(check.detail()).contains("schema 27: 1 node(s)", "schema 28: 1 node(s)",
                    "a schema before 28: 1 node(s)");
            assertThat(check.advice()).contains("finish the rolling deploy");
        });
        jdbc.update("DELETE FROM pgqueue.node WHERE id IN ('old', 'older')");
        assertThat(check(queue, "node releases").ok()).isTrue();

        jdbc.execute("DROP INDEX pgqueue.job_lease_idx");
        jdbc.execute("ALTER TABLE pgqueue.job SET (autovacuum_enabled = false)");
        assertThat(check(queue, "indexes")).satisfies(check -> {
            assertThat(check.status()).isEqualTo("FAIL");
            assertThat(check.detail()).isEqualTo("missing: job_lease_idx");
            assertThat(check.advice()).contains("docs/schema.sql", "REINDEX INDEX CONCURRENTLY");
        });
        assertThat(check(queue, "autovacuum").status()).isEqualTo("FAIL");
        assertThat(check(queue, "autovacuum").detail()).satisfiesAnyOf(
                detail -> assertThat(detail).isEqualTo("autovacuum is off for job"),
                detail -> assertThat(detail).isEqualTo("autovacuum is off"));

        // A transaction left open, idle: reported once older than the doctor's threshold.
        try (Connection open = this.databases.get(0).dataSource().getConnection(); Statement statement = open.createStatement()) {
            open.setAutoCommit(false);
            statement.execute("SELECT txid_current()");
            int pid = new JdbcTemplate(new SingleConnectionDataSource(open, true))
                .queryForObject("SELECT pg_backend_pid()", Integer.class);
            Thread.sleep(50);
            List<Map<String, Object>> rows = jdbc.queryForList("SELECT * FROM pgqueue.doctor(interval '10 milliseconds')");
            // Tests running beside this one may hold transactions of their own longer than 10 ms.
            assertThat(rows).filteredOn(row -> row.get("check_name").equals("long transactions")
                    && ((String) row.get("detail")).startsWith("pid " + pid + " ")).singleElement()
                .satisfies(row -> {
                    assertThat(row.get("status")).isEqualTo("WARN");
                    assertThat((String) row.get("detail")).contains("has held a transaction open for");
                });
            assertThat(rows).filteredOn(row -> row.get("check_name").equals("idle in transaction")).singleElement()
                .satisfies(row -> assertThat((String) row.get("advice")).contains("idle_in_transaction_session_timeout"));
            assertThat(check(queue, "long transactions").ok()).as("not 5 minutes old").isTrue();
            open.rollback();
        }
        queue.stop();
    }

    @Test
    void aSchemaThatMissedItsMigrationsIsReportedAndNotCheckedFurther() {
        PgQueue queue = PgQueue.builder(this.databases.get(0).dataSource()).tasks(TaskRegistry.of(List.of()))
            .config(QueueConfig.defaults().withSchema("never_migrated")).build();

        assertThat(queue.admin().doctor()).singleElement().satisfies(check -> {
            assertThat(check.check()).isEqualTo("schema");
            assertThat(check.status()).isEqualTo("FAIL");
            assertThat(check.detail()).contains("is not migrated to version");
            assertThat(check.shard()).isEqualTo("main");
        });
    }

    private static DoctorCheck check(PgQueue queue, String name) {
        return queue.admin().doctor().stream().filter(check -> check.check().equals(name)).findFirst().orElseThrow();
    }
}
