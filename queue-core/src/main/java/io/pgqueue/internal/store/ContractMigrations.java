package io.pgqueue.internal.store;

import java.util.Arrays;
import java.util.List;

import javax.sql.DataSource;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationInfoService;
import org.flywaydb.core.api.MigrationVersion;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;

/**
 * Runs the queue's migrations, holding back a <em>contract</em> migration while nodes of an older
 * release still run.
 * <p>
 * A release adds what it needs (expand) in migrations nodes of the release before can live with;
 * a migration that removes or changes what the release before still uses (contract) is named
 * {@code V<n>__contract_<what>.sql}. Such a migration, and every one after it, waits while a
 * worker node built for a schema before {@code n} is registered and has beaten its heartbeat within
 * {@link #LIVE_WITHIN}; each node records the schema it was built for ({@code node.schema_version};
 * nodes of releases before V28 record none and count as older). The migrations before it run, and
 * the held one runs at the next migration once those nodes are gone: the next node that starts, or
 * {@code QueueSchema.migrate}.
 */
public final class ContractMigrations {

    private static final Logger log = LoggerFactory.getLogger(ContractMigrations.class);

    /** How recently a registered node must have beaten its heartbeat to count as running. */
    private static final String LIVE_WITHIN = "2 minutes";

    /** How a contract migration's description (Flyway's, from its file name) starts. */
    private static final String CONTRACT = "contract ";

    /** The running nodes built for a schema before a version; the row itself, for schemas before {@code schema_version}. */
    private static final String OLDER_NODES = """
            SELECT n.id || ' (' || coalesce('schema ' || (to_jsonb(n) ->> 'schema_version'), 'a schema before 28') || ')'
            FROM ${schema}.node AS n
            WHERE n.last_heartbeat > now() - CAST(:liveWithin AS interval)
              AND coalesce(CAST(to_jsonb(n) ->> 'schema_version' AS integer), 0) < :version
            ORDER BY n.started_at
            """;

    private ContractMigrations() {
    }

    /**
     * Migrates, holding back the first pending contract migration (and those after it) while nodes
     * of an older release run.
     * @param configuration the queue's Flyway configuration
     * @param dataSource the database
     * @param schema the queue's schema (validated)
     * @return Flyway's report
     */
    public static MigrateResult migrate(FluentConfiguration configuration, DataSource dataSource, String schema) {
        Flyway flyway = configuration.load();
        MigrationInfoService info = flyway.info();
        MigrationInfo contract = Arrays.stream(info.pending())
            .filter(migration -> migration.getVersion() != null
                    && migration.getDescription().toLowerCase().startsWith(CONTRACT))
            .findFirst().orElse(null);
        List<String> older = contract == null ? List.of() : olderNodes(dataSource, schema, contract.getVersion());
        if (older.isEmpty()) {
            return flyway.migrate();
        }
        // The newest version before the contract migration, applied or pending.
        MigrationVersion before = Arrays.stream(info.all())
            .map(MigrationInfo::getVersion)
            .filter(version -> version != null && contract.getVersion().isNewerThan(version.getVersion()))
            .max(MigrationVersion::compareTo).orElse(MigrationVersion.EMPTY);
        log.warn("pgqueue schema '{}': migration V{} ({}) is held back while nodes of an older release run: {}. "
                + "It runs at the next migration once they are gone (the next node that starts, or QueueSchema.migrate)",
                schema, contract.getVersion(), contract.getDescription(), String.join(", ", older));
        return configuration.target(before).load().migrate();
    }

    private static List<String> olderNodes(DataSource dataSource, String schema, MigrationVersion version) {
        try {
            return new NamedParameterJdbcTemplate(dataSource).queryForList(OLDER_NODES.replace("${schema}", schema),
                    new MapSqlParameterSource("liveWithin", LIVE_WITHIN)
                        .addValue("version", version.getMajor().intValue()), String.class);
        }
        catch (DataAccessException ex) {
            // No node table yet: a new schema, which no node runs on.
            return List.of();
        }
    }
}
