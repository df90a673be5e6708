package io.pgqueue.store;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import io.pgqueue.QueueSchemaException;
import io.pgqueue.internal.store.ContractMigrations;
import io.pgqueue.internal.store.SchemaStore;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * The queue's tables and functions, created and upgraded by Flyway migrations shipped in this
 * module: versioned migrations ({@code V<n>__*.sql}) change the tables; repeatable ones
 * ({@code R__*.sql}, one per concern) hold the current definition of every function, and Flyway
 * applies them after the versioned ones and again whenever one changes. The queue keeps its own
 * schema-history table inside its own schema, so it never touches an application's Flyway
 * history, and the order in which the two Flyways run does not matter.
 */
public final class QueueSchema {

    /** Classpath location of the queue's migrations, for teams that run them with their own Flyway. */
    public static final String MIGRATION_LOCATION = SchemaStore.MIGRATION_LOCATION;

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
            .baselineVersion("0")
            // A release that does not know a repeatable migration applied by a newer one (rolled
            // back to, or still running during a rolling deployment) must start all the same, as
            // it does with the newer versioned migrations (future ones, ignored by default).
            .ignoreMigrationPatterns("*:future", "repeatable:missing");
    }

    /**
     * Creates or upgrades the queue's tables. A <em>contract</em> migration
     * ({@code V<n>__contract_<what>.sql}: one that removes or changes what nodes of the release
     * before still use), and every one after it, is held back while a worker node built for a
     * schema before it runs (registered, its heartbeat within the last two minutes), with a warning
     * naming those nodes; it runs at the next migration once they are gone.
     * @param dataSource the database
     * @param schema the queue's schema
     * @return Flyway's report
     */
    public static MigrateResult migrate(DataSource dataSource, String schema) {
        return ContractMigrations.migrate(flywayConfiguration(dataSource, schema), dataSource, schema);
    }

    /**
     * Checks that the queue's schema is migrated far enough for this version's workers: the
     * functions they call (the claim, the fenced writes and the archive row, from the repeatable
     * migrations) and the shared statistics table (V8) exist. Without the check, a schema migrated
     * by separate tooling that missed a migration would let the workers start and then fail every
     * claim, every outcome or every statistics read.
     * @param dataSource the database
     * @param schema the queue's schema
     * @throws QueueSchemaException if the schema lacks one of those functions or tables
     */
    public static void requireMigrated(DataSource dataSource, String schema) {
        QueueConfig.validateSchema(schema);
        new SchemaStore(dataSource, schema).requireMigrated();
    }
}
