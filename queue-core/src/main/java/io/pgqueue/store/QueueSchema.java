package io.pgqueue.store;

import java.util.List;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import io.pgqueue.QueueSchemaException;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The queue's tables, created and upgraded by Flyway migrations shipped in this module. The queue
 * keeps its own schema-history table inside its own schema, so it never touches an application's
 * Flyway history, and the order in which the two Flyways run does not matter.
 */
public final class QueueSchema {

    /** Classpath location of the queue's migrations, for teams that run them with their own Flyway. */
    public static final String MIGRATION_LOCATION = "classpath:io/pgqueue/db/migration";

    /** Name of the queue's Flyway schema-history table (inside the queue's schema). */
    public static final String HISTORY_TABLE = "pgqueue_schema_history";

    /** The newest migration the workers cannot run without. */
    static final String LATEST_VERSION = "8";

    /** The functions the workers call (V4, V5 and V7), which {@link #requireMigrated} looks for. */
    private static final List<String> WORKER_FUNCTIONS = List.of(
            "claim_jobs(text[], integer[], text, text, bigint)",
            "held_leases(bigint[], integer[], text[])",
            "mark_running(bigint[], integer[], bigint)",
            "renew_leases(bigint[], integer[], text[], bigint)",
            "record_outcomes(bigint[], integer[], text[], bigint[], text[], text[], boolean)",
            "complete_jobs(bigint[], integer[], boolean)");

    /** The tables added after V1 that every node reads (V8), which {@link #requireMigrated} looks for too. */
    private static final List<String> NODE_TABLES = List.of("stats_snapshot");

    private QueueSchema() {
    }

    /**
     * Returns the Flyway configuration that migrates the queue's schema, for callers that want to
     * adjust it before migrating.
     * @param dataSource the database
     * @param schema the queue's schema (validated)
     * @return the configuration
     */
    public static FluentConfiguration flywayConfiguration(DataSource dataSource, String schema) {
        QueueConfig.validateSchema(schema);
        return Flyway.configure(QueueSchema.class.getClassLoader())
            .dataSource(dataSource)
            .schemas(schema)
            .defaultSchema(schema)
            .createSchemas(true)
            .table(HISTORY_TABLE)
            .locations(MIGRATION_LOCATION)
            // A shared schema may already hold the application's tables; start our history at 0 so
            // that our first migration still runs.
            .baselineOnMigrate(true)
            .baselineVersion("0");
    }

    /**
     * Creates or upgrades the queue's tables.
     * @param dataSource the database
     * @param schema the queue's schema
     * @return Flyway's report
     */
    public static MigrateResult migrate(DataSource dataSource, String schema) {
        return flywayConfiguration(dataSource, schema).load().migrate();
    }

    /**
     * Checks that the queue's schema is migrated far enough for this version's workers: the
     * functions they call (the claim, V4; the fenced writes, V5 and V7) and the shared statistics
     * table (V8) exist. Without the check, a schema migrated by separate tooling that missed a
     * migration would let the workers start and then fail every claim, every outcome or every
     * statistics read.
     * @param dataSource the database
     * @param schema the queue's schema
     * @throws QueueSchemaException if the schema lacks one of those functions or tables
     */
    public static void requireMigrated(DataSource dataSource, String schema) {
        QueueConfig.validateSchema(schema);
        List<String> functions = WORKER_FUNCTIONS.stream().map(function -> schema + "." + function).toList();
        List<String> tables = NODE_TABLES.stream().map(table -> schema + "." + table).toList();
        List<String> missing = new JdbcTemplate(dataSource).queryForList("""
                SELECT missing FROM (
                    SELECT 1 AS kind, ord, 'function ' || f AS missing
                    FROM unnest(CAST(? AS text[])) WITH ORDINALITY AS t(f, ord) WHERE to_regprocedure(f) IS NULL
                    UNION ALL
                    SELECT 2, ord, 'table ' || f
                    FROM unnest(CAST(? AS text[])) WITH ORDINALITY AS t(f, ord) WHERE to_regclass(f) IS NULL
                ) AS m
                ORDER BY kind, ord
                """, String.class, SqlArrays.texts(functions), SqlArrays.texts(tables));
        if (!missing.isEmpty()) {
            throw new QueueSchemaException("The queue schema '" + schema + "' is not migrated to version "
                    + LATEST_VERSION + " (missing: " + String.join(", ", missing) + "). Apply the queue's migrations ("
                    + MIGRATION_LOCATION + ") to schema '" + schema + "', e.g. with QueueSchema.migrate or, in "
                    + "Spring Boot, pgqueue.flyway.enabled=true");
        }
    }
}
