package io.pgqueue.internal.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import io.pgqueue.QueueSchemaException;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;

/**
 * Reads what the queue's schema holds through the system catalogs, for the check that a schema is
 * migrated far enough before the workers start ({@code QueueSchema.requireMigrated}).
 */
public final class SchemaStore {

    /** Classpath location of the queue's migrations. */
    public static final String MIGRATION_LOCATION = "classpath:io/pgqueue/db/migration";

    /** The newest migration the workers cannot run without. */
    static final String LATEST_VERSION = "32";

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
            "${schema}.record_outcomes(bigint[], integer[], text[], bigint[], text[], text[], boolean, text[])",
            "${schema}.complete_jobs(bigint[], integer[], boolean)",
            "${schema}.complete_jobs(bigint[], integer[], boolean, text[])",
            "${schema}.finished_job(${schema}.job, text, integer, text, text)",
            "${schema}.finished_job(${schema}.job, text, integer, text, text, jsonb)",
            "${schema}.with_attempt(jsonb, text, integer)",
            "${schema}.end_jobs(bigint[], bigint[])", "${schema}.add_waiting_jobs(jsonb)",
            "${schema}.cancel_waiting_job(bigint)",
            "${schema}.search_jobs(text, text, timestamptz, timestamptz, text, text, bigint[], jsonb, text[], timestamptz, "
                    + "bigint, integer)",
            "${schema}.count_jobs(text, text, timestamptz, timestamptz, text, text, bigint[], jsonb, text[])");

    /**
     * The functions whose body this release relies on beyond their signature, with the revision
     * their repeatable migration records as their comment: the schema must hold that revision or a
     * newer one.
     */
    private static final Map<String, String> FUNCTION_REVISIONS = Map.of(
            "${schema}.record_outcomes(bigint[], integer[], text[], bigint[], text[], text[], boolean)",
            "pgqueue record_outcomes revision 4: snoozed attempts are given back",
            "${schema}.record_outcomes(bigint[], integer[], text[], bigint[], text[], text[], boolean, text[])",
            "pgqueue record_outcomes revision 5: attempts join their jobs' histories",
            "${schema}.finished_job(${schema}.job, text, integer, text, text)",
            "pgqueue finished_job revision 2: keeps the partition",
            "${schema}.finished_job(${schema}.job, text, integer, text, text, jsonb)",
            "pgqueue finished_job revision 3: keeps the attempt history",
            "${schema}.end_jobs(bigint[], bigint[])",
            "pgqueue end_jobs revision 4: parents are signalled their children's ends and cancel them");

    /**
     * The tables added after V1 that every node reads (V8: statistics, V10: partitions, V11: the
     * outbox, V12: partition moves, V13: the balancer, V14: message queues, V15: rate limits, V16: group cursors, V17: schedules, V18: workflows, V22: awaited jobs, V24: operator actions, V25: the task history, V26: the message queues' history, V27: the task definitions, V30: messages on their way to another shard, V31: durable steps), which
     * {@link #requireMigrated} looks for too.
     */
    private static final List<String> NODE_TABLES = List.of("${schema}.stats_snapshot", "${schema}.installation",
            "${schema}.shard_partition", "${schema}.job_outbox", "${schema}.job_relayed", "${schema}.partition_move",
            "${schema}.job_moving", "${schema}.move_applied", "${schema}.partition_load", "${schema}.balancer_leader",
            "${schema}.balancer_decision", "${schema}.message_queue", "${schema}.message", "${schema}.message_group",
            "${schema}.message_dedup", "${schema}.task_rate", "${schema}.task_group_cursor",
            "${schema}.schedule", "${schema}.workflow", "${schema}.job_waiting", "${schema}.job_dependency",
            "${schema}.job_result", "${schema}.workflow_total", "${schema}.job_end_pending", "${schema}.job_awaiter",
            "${schema}.queue_action", "${schema}.task_history", "${schema}.message_queue_history",
            "${schema}.task_definition", "${schema}.message_move_task", "${schema}.message_moving",
            "${schema}.job_step");

    /**
     * The columns added to existing tables that this release reads or writes (V20: a result's claim
     * and completion, V21: a standard queue's message group, V23: a job's attempt history, V28: the schema version of a node, V29: a dead-lettered message's source queue, V30: a message's partition, V32: a signal wait's end), which {@link #requireMigrated} looks
     * for too: {@code ${schema}.table.column}.
     */
    private static final List<String> NODE_COLUMNS = List.of("${schema}.job_result.lease_epoch",
            "${schema}.job_result.completed", "${schema}.message.fair_group", "${schema}.job.history",
            "${schema}.job_finished.history", "${schema}.node.schema_version",
            "${schema}.message.source_queue_id", "${schema}.message.partition", "${schema}.message_dedup.partition",
            "${schema}.job_step.resolved");

    private final NamedParameterJdbcTemplate jdbc;

    private final String schema;

    /**
     * @param dataSource the database
     * @param schema the queue's (validated) schema, which {@code ${schema}} stands for in the names
     */
    public SchemaStore(DataSource dataSource, String schema) {
        this.jdbc = new NamedParameterJdbcTemplate(dataSource);
        this.schema = schema;
    }

    /**
     * Checks that the queue's schema is migrated far enough for this version's workers: the
     * functions they call (the claim, the fenced writes and the archive row, from the repeatable
     * migrations) with the revisions this version relies on, and the tables every node reads.
     * Without the check, a schema migrated by separate tooling that missed a migration would let the
     * workers start and then fail every claim, every outcome or every statistics read.
     * @throws QueueSchemaException if the schema lacks one of those functions or tables, or holds an
     * older release's functions
     */
    public void requireMigrated() {
        List<String> missing = missingObjects(WORKER_FUNCTIONS, NODE_TABLES, NODE_COLUMNS);
        if (!missing.isEmpty()) {
            throw new QueueSchemaException("The queue schema '" + this.schema + "' is not migrated to version "
                    + LATEST_VERSION + " (missing: " + String.join(", ", missing) + "). Apply the queue's migrations ("
                    + MIGRATION_LOCATION + ") to schema '" + this.schema + "', e.g. with QueueSchema.migrate or, in "
                    + "Spring Boot, pgqueue.flyway.enabled=true");
        }
        List<String> outdated = outdatedFunctions(new LinkedHashMap<>(FUNCTION_REVISIONS));
        if (!outdated.isEmpty()) {
            throw new QueueSchemaException("The queue schema '" + this.schema + "' holds functions of an older release ("
                    + String.join(", ", outdated) + "). Apply the queue's repeatable migrations (R__*.sql in "
                    + MIGRATION_LOCATION + ") to schema '" + this.schema + "' again, e.g. with QueueSchema.migrate or, in "
                    + "Spring Boot, pgqueue.flyway.enabled=true");
        }
    }

    /**
     * Runs the schema's doctor (R__doctor.sql).
     * @param olderThan how long a transaction may stay open before it is reported
     * @return per check: its name, status, detail and advice
     * @throws org.springframework.jdbc.BadSqlGrammarException on a schema without the doctor (before this release)
     */
    public List<String[]> doctor(Duration olderThan) {
        return this.jdbc.query("SELECT check_name, status, detail, advice FROM " + this.schema
                + ".doctor(CAST(:olderThan AS interval))", new MapSqlParameterSource("olderThan", olderThan.toMillis() + " milliseconds"),
                (rs, row) -> new String[] { rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4) });
    }

    /**
     * Returns the functions, tables and columns of three lists that do not exist, in that order.
     * @param functions qualified function names with their argument types
     * @param tables qualified table names
     * @param columns qualified column names
     * @return each missing object as {@code "function <name>"}, {@code "table <name>"} or {@code "column <name>"}
     */
    private List<String> missingObjects(List<String> functions, List<String> tables, List<String> columns) {
        MapSqlParameterSource names = new MapSqlParameterSource("functions", SqlArrays.texts(qualified(functions)))
            .addValue("jobTable", this.schema + ".job")
            .addValue("tables", SqlArrays.texts(qualified(tables)))
            .addValue("columns", SqlArrays.texts(qualified(columns)));
        return this.jdbc.queryForList(SchemaStatements.MISSING_OBJECTS, names, String.class);
    }

    /**
     * Returns the functions whose comment is not the revision given for them.
     * @param revisions function names with their argument types, each with the revision it must record
     * @return the qualified names of the outdated functions, in the map's order
     */
    private List<String> outdatedFunctions(Map<String, String> revisions) {
        List<String> functions = new ArrayList<>(revisions.keySet());
        MapSqlParameterSource parameters = new MapSqlParameterSource("functions", SqlArrays.texts(qualified(functions)))
            .addValue("revisions", SqlArrays.texts(functions.stream().map(revisions::get).toList()));
        return this.jdbc.queryForList(SchemaStatements.OUTDATED_FUNCTIONS, parameters, String.class);
    }

    private List<String> qualified(List<String> names) {
        return names.stream().map(name -> StoreSupport.sql(name, this.schema)).toList();
    }
}
