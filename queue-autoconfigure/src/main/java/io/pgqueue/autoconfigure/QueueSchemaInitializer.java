package io.pgqueue.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;

import javax.sql.DataSource;

import io.pgqueue.store.QueueSchema;
import org.flywaydb.core.api.output.MigrateResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.InitializingBean;

/**
 * Creates or upgrades the queue's tables at start-up with the queue's own Flyway (own history
 * table in the queue's schema). It is deliberately not a {@code Flyway} bean: Spring Boot's Flyway
 * auto-configuration backs off when one exists, and the application's own migrations would stop
 * running. Ordered after the application's Flyway by {@link QueueSchemaInitializerDetector}.
 */
public class QueueSchemaInitializer implements InitializingBean {

    private static final Logger log = LoggerFactory.getLogger(QueueSchemaInitializer.class);

    private final DataSource dataSource;

    private final String schema;

    private final Map<String, DataSource> shards;

    /**
     * Creates an initializer.
     * @param dataSource the queue's database
     * @param schema the queue's schema
     */
    public QueueSchemaInitializer(DataSource dataSource, String schema) {
        this(dataSource, schema, Map.of());
    }

    /**
     * Creates an initializer that migrates the shards' databases too.
     * @param dataSource the queue's database (the main shard)
     * @param schema the queue's schema
     * @param shards the other shards' databases, by name
     */
    public QueueSchemaInitializer(DataSource dataSource, String schema, Map<String, DataSource> shards) {
        this.dataSource = dataSource;
        this.schema = schema;
        this.shards = new LinkedHashMap<>(shards);
    }

    @Override
    public void afterPropertiesSet() {
        migrate(this.dataSource, "");
        this.shards.forEach((name, shard) -> migrate(shard, " on shard '" + name + "'"));
    }

    private void migrate(DataSource database, String where) {
        MigrateResult result = QueueSchema.migrate(database, this.schema);
        if (result.migrationsExecuted > 0) {
            log.info("pgqueue schema '{}'{} migrated to version {}", this.schema, where, result.targetSchemaVersion);
        }
    }
}
