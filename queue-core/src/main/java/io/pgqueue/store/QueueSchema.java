package io.pgqueue.store;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import io.pgqueue.QueueSchemaException;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;

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
    public static final String MIGRATION_LOCATION = "classpath:io/pgqueue/db/migration";

    /** Name of the queue's Flyway schema-history table (inside the queue's schema). */
    public static final String HISTORY_TABLE = "pgqueue_schema_history";

    /** The newest migration the workers cannot run without. */
    static final String LATEST_VERSION = "20";

    /**
     * The functions the workers and the store's statements call (repeatable migrations R__claim,
     * R__fenced_writes, R__archive, R__workflows and R__job_listing), which {@link #requireMigrated} looks for; {@code ${schema}}
     * stands for the queue's schema.
     */
    private static final List<String> WORKER_FUNCTIONS = List.of(
            "${schema}.claim_jobs(text[], integer[], text, text, bigint, jsonb)",
            "${schema}.claim_group_ids(text, integer, boolean, integer)",
            "${schema}.held_leases(bigint[], integer[], text[])",
            "${schema}.mark_running(bigint[], integer[], bigint)",
            "${schema}.renew_leases(bigint[], integer[], text[], bigint)",
            "${schema}.record_outcomes(bigint[], integer[], text[], bigint[], text[], text[], boolean)",
            "${schema}.complete_jobs(bigint[], integer[], boolean)",
            "${schema}.finished_job(${schema}.job, text, integer, text, text)",
            "${schema}.end_jobs(bigint[], bigint[])", "${schema}.add_waiting_jobs(jsonb)",
            "${schema}.cancel_waiting_job(bigint)",
            "${schema}.list_jobs(text, text, timestamptz, timestamptz, text, text, timestamptz, bigint, integer)");

    /**
     * The functions whose body this release relies on beyond their signature, with the revision
     * their repeatable migration records as their comment.
     */
    private static final Map<String, String> FUNCTION_REVISIONS = Map.of(
            "${schema}.record_outcomes(bigint[], integer[], text[], bigint[], text[], text[], boolean)",
            "pgqueue record_outcomes revision 3: tracked jobs are always archived",
            "${schema}.finished_job(${schema}.job, text, integer, text, text)",
            "pgqueue finished_job revision 2: keeps the partition",
            "${schema}.end_jobs(bigint[], bigint[])",
            "pgqueue end_jobs revision 2: results are read once their job completed");

    /**
     * The tables added after V1 that every node reads (V8: statistics, V10: partitions, V11: the
     * outbox, V12: partition moves, V13: the balancer, V14: message queues, V15: rate limits, V16: group cursors, V17: schedules, V18: workflows), which
     * {@link #requireMigrated} looks for too.
     */
    private static final List<String> NODE_TABLES = List.of("${schema}.stats_snapshot", "${schema}.installation",
            "${schema}.shard_partition", "${schema}.job_outbox", "${schema}.job_relayed", "${schema}.partition_move",
            "${schema}.job_moving", "${schema}.move_applied", "${schema}.partition_load", "${schema}.balancer_leader",
            "${schema}.balancer_decision", "${schema}.message_queue", "${schema}.message", "${schema}.message_group",
            "${schema}.message_dedup", "${schema}.task_rate", "${schema}.task_group_cursor",
            "${schema}.schedule", "${schema}.workflow", "${schema}.job_waiting", "${schema}.job_dependency",
            "${schema}.job_result", "${schema}.workflow_total", "${schema}.job_end_pending");

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
        List<String> functions = WORKER_FUNCTIONS.stream().map(function -> StoreSupport.sql(function, schema)).toList();
        List<String> tables = NODE_TABLES.stream().map(table -> StoreSupport.sql(table, schema)).toList();
        MapSqlParameterSource names = new MapSqlParameterSource("functions", SqlArrays.texts(functions))
            .addValue("jobTable", schema + ".job")
            .addValue("tables", SqlArrays.texts(tables));
        List<String> missing = new NamedParameterJdbcTemplate(dataSource).queryForList(SchemaStatements.MISSING_OBJECTS,
                names, String.class);
        if (!missing.isEmpty()) {
            throw new QueueSchemaException("The queue schema '" + schema + "' is not migrated to version "
                    + LATEST_VERSION + " (missing: " + String.join(", ", missing) + "). Apply the queue's migrations ("
                    + MIGRATION_LOCATION + ") to schema '" + schema + "', e.g. with QueueSchema.migrate or, in "
                    + "Spring Boot, pgqueue.flyway.enabled=true");
        }
        List<String> revised = new ArrayList<>(FUNCTION_REVISIONS.keySet());
        MapSqlParameterSource revisions = new MapSqlParameterSource("functions",
                SqlArrays.texts(revised.stream().map(function -> StoreSupport.sql(function, schema)).toList()))
            .addValue("revisions", SqlArrays.texts(revised.stream().map(FUNCTION_REVISIONS::get).toList()));
        List<String> outdated = new NamedParameterJdbcTemplate(dataSource).queryForList(
                SchemaStatements.OUTDATED_FUNCTIONS, revisions, String.class);
        if (!outdated.isEmpty()) {
            throw new QueueSchemaException("The queue schema '" + schema + "' holds functions of an older release ("
                    + String.join(", ", outdated) + "). Apply the queue's repeatable migrations (R__*.sql in "
                    + MIGRATION_LOCATION + ") to schema '" + schema + "' again, e.g. with QueueSchema.migrate or, in "
                    + "Spring Boot, pgqueue.flyway.enabled=true");
        }
    }
}
