package io.pgqueue.autoconfigure;

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

    /**
     * Creates an initializer.
     * @param dataSource the queue's database
     * @param schema the queue's schema
     */
    public QueueSchemaInitializer(DataSource dataSource, String schema) {
        this.dataSource = dataSource;
        this.schema = schema;
    }

    @Override
    public void afterPropertiesSet() {
        MigrateResult result = QueueSchema.migrate(this.dataSource, this.schema);
        if (result.migrationsExecuted > 0) {
            log.info("pgqueue schema '{}' migrated to version {}", this.schema, result.targetSchemaVersion);
        }
    }
}
