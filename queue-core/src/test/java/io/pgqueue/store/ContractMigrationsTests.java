package io.pgqueue.store;

import java.util.ArrayList;
import java.util.List;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.pgqueue.internal.store.ContractMigrations;
import io.pgqueue.testing.TestDatabase;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A contract migration ({@code V<n>__contract_<what>.sql}) and those after it wait while worker
 * nodes built for an older schema run, and run once they are gone; expand migrations before it
 * run at once. The probe release's migrations (V101 expand, V102 contract, V103 after) come on top
 * of the queue's own.
 */
class ContractMigrationsTests {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.perClass();

    private static final String PROBE_LOCATION = "classpath:io/pgqueue/db/contract-probe";

    @Test
    void aContractMigrationWaitsUntilTheNodesOfAnOlderReleaseAreGone() {
        String schema = "contracted";
        QueueSchema.migrate(db.dataSource(), schema);
        JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
        jdbc.update("INSERT INTO contracted.node (id, host, schema_version) VALUES ('old-a', 'h', 28), "
                + "('current', 'h', 103)");
        jdbc.update("INSERT INTO contracted.node (id, host) VALUES ('old-b', 'h')");
        jdbc.update("INSERT INTO contracted.node (id, host, schema_version, last_heartbeat) "
                + "VALUES ('vanished', 'h', 28, now() - interval '1 hour')");

        List<String> warnings = new ArrayList<>();
        MigrateResult held = migrateWithProbe(schema, warnings);
        assertThat(held.targetSchemaVersion).as("migrated to").isEqualTo("101");
        assertThat(versions(jdbc, schema)).as("applied").contains("101").doesNotContain("102", "103");
        assertThat(tables(jdbc, schema)).contains("probe_old", "probe_new");
        assertThat(warnings).singleElement().asString()
            .contains("migration V102 (contract drop probe old) is held back while nodes of an older release run: "
                    + "old-a (schema 28), old-b (a schema before 28). It runs at the next migration once they are gone");

        jdbc.update("DELETE FROM contracted.node WHERE id = 'old-a'");
        assertThat(migrateWithProbe(schema, warnings).migrationsExecuted).as("while old-b runs").isZero();
        assertThat(warnings).hasSize(2).last().asString().contains("run: old-b (a schema before 28).");

        jdbc.update("DELETE FROM contracted.node WHERE id = 'old-b'");
        MigrateResult released = migrateWithProbe(schema, warnings);
        assertThat(released.targetSchemaVersion).isEqualTo("103");
        assertThat(versions(jdbc, schema)).contains("102", "103");
        assertThat(tables(jdbc, schema)).doesNotContain("probe_old").contains("probe_new");
        assertThat(warnings).as("no warning once they are gone").hasSize(2);
    }

    @Test
    void aSchemaNoNodeRunsOnTakesEveryMigrationAtOnce() {
        List<String> warnings = new ArrayList<>();
        MigrateResult result = migrateWithProbe("fresh_contracted", warnings);
        assertThat(result.targetSchemaVersion).isEqualTo("103");
        assertThat(warnings).isEmpty();
    }

    private static MigrateResult migrateWithProbe(String schema, List<String> warnings) {
        FluentConfiguration configuration = QueueSchema.flywayConfiguration(db.dataSource(), schema)
            .locations(QueueSchema.MIGRATION_LOCATION, PROBE_LOCATION);
        Logger logger = (Logger) LoggerFactory.getLogger(ContractMigrations.class);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        logger.addAppender(logged);
        try {
            return ContractMigrations.migrate(configuration, db.dataSource(), schema);
        }
        finally {
            logger.detachAppender(logged);
            logged.list.forEach(event -> warnings.add(event.getFormattedMessage()));
        }
    }

    private static List<String> versions(JdbcTemplate jdbc, String schema) {
        return jdbc.queryForList("SELECT version FROM " + schema + ".pgqueue_schema_history WHERE version IS NOT NULL",
                String.class);
    }

    private static List<String> tables(JdbcTemplate jdbc, String schema) {
        return jdbc.queryForList("SELECT table_name FROM information_schema.tables WHERE table_schema = ?",
                String.class, schema);
    }
}
