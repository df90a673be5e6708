package io.pgqueue.autoconfigure;

import javax.sql.DataSource;
import io.pgqueue.testing.TestDatabase;
import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The application's own Flyway and the queue's Flyway run side by side without touching each
 * other: in separate schemas, and in one shared schema.
 */
class FlywayCoexistenceTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withInitializer(TestDatabaseInitializer.empty())
        .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, FlywayAutoConfiguration.class,
                JacksonAutoConfiguration.class, QueueAutoConfiguration.class))
        .withPropertyValues("spring.flyway.locations=classpath:coexist/migration", "pgqueue.workers.enabled=false");

    @Test
    void separateSchemas() {
        this.runner.run(context -> {
            assertThat(context).hasNotFailed();
            JdbcTemplate jdbc = new JdbcTemplate(context.getBean(DataSource.class));
            assertThat(jdbc.queryForObject("SELECT count(*) FROM public.flyway_schema_history WHERE success", Long.class))
                .isEqualTo(1);
            assertThat(jdbc.queryForObject("SELECT count(*) FROM public.customer", Long.class)).isZero();
            assertThat(jdbc.queryForObject("SELECT count(*) FROM pgqueue.pgqueue_schema_history WHERE success "
                    + "AND type = 'SQL' AND version IS NOT NULL", Long.class)).isEqualTo(32);
            assertThat(jdbc.queryForObject("SELECT count(*) FROM pgqueue.job", Long.class)).isZero();
        });
    }

    @Test
    void oneSharedSchema() {
        // The application's Flyway must run first (it would refuse a non-empty schema without its
        // history); the queue's initializer is ordered after it.
        this.runner.withPropertyValues("pgqueue.schema=public").run(context -> {
            assertThat(context).hasNotFailed();
            JdbcTemplate jdbc = new JdbcTemplate(context.getBean(DataSource.class));
            assertThat(jdbc.queryForObject("SELECT count(*) FROM public.flyway_schema_history WHERE success", Long.class))
                .isEqualTo(1);
            assertThat(jdbc.queryForObject("SELECT count(*) FROM public.pgqueue_schema_history WHERE success "
                    + "AND type = 'SQL' AND version IS NOT NULL", Long.class)).isEqualTo(32);
            assertThat(jdbc.queryForObject("SELECT count(*) FROM public.job", Long.class)).isZero();
            assertThat(jdbc.queryForObject("SELECT count(*) FROM public.customer", Long.class)).isZero();
        });
    }

    @Test
    void aBadSettingStopsTheStartBeforeAnyMigration() {
        try (TestDatabase database = TestDatabase.create("pgqueue_early")) {
            new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, FlywayAutoConfiguration.class,
                        JacksonAutoConfiguration.class, QueueAutoConfiguration.class))
                .withPropertyValues("spring.datasource.url=" + database.jdbcUrl(),
                        "spring.datasource.username=" + database.user(),
                        "spring.datasource.password=" + (database.password() == null ? "" : database.password()),
                        "spring.flyway.locations=classpath:coexist/migration", "pgqueue.lease.duration=30s",
                        "pgqueue.lease.heartbeat-interval=1m")
                .withBean(TestHandlers.SendPush.class)
                .run(context -> assertThat(context).hasFailed());

            JdbcTemplate jdbc = new JdbcTemplate(database.dataSource());
            assertThat(jdbc.queryForObject("SELECT to_regclass('public.flyway_schema_history') IS NULL", Boolean.class))
                .as("the application's migrations did not run").isTrue();
            assertThat(jdbc.queryForObject("SELECT count(*) FROM pg_namespace WHERE nspname = 'pgqueue'", Long.class))
                .as("the queue's schema was not created").isZero();
        }
    }
}
