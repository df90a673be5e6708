package io.pgqueue.store;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;

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
}
