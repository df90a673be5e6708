package io.pgqueue.testing;

import java.util.HashMap;
import java.util.Map;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;

/**
 * Gives a Spring application context its own fresh database, with the queue's schema already migrated
 * (a copy of the template {@link TestDatabase#createMigrated(String)} makes) unless {@link #empty()}:
 * sets {@code spring.datasource.*} and drops the database when the context closes. The drop is registered as the first disposable bean,
 * so it runs last, after the DataSource and every queue component have shut down. Works for
 * {@code @SpringBootTest} ({@code @ContextConfiguration(initializers = ...)}) and
 * {@code ApplicationContextRunner.withInitializer(...)}.
 */
public class TestDatabaseInitializer implements ApplicationContextInitializer<ConfigurableApplicationContext> {

    private final boolean migrated;

    private final int shards;

    /** An initializer whose databases have the queue's schema migrated. */
    public TestDatabaseInitializer() {
        this(true, 0);
    }

    /**
     * @param migrated whether the databases have the queue's schema migrated
     * @param shards how many more databases to list as the queue's shards {@code shard-1} ... under
     * {@code pgqueue.shards}
     */
    protected TestDatabaseInitializer(boolean migrated, int shards) {
        this.migrated = migrated;
        this.shards = shards;
    }

    /** The context's database and two more as the shards {@code shard-1} and {@code shard-2}: three shards in all. */
    public static class ThreeShards extends TestDatabaseInitializer {

        /** The initializer. */
        public ThreeShards() {
            super(true, 2);
        }
    }

    /**
     * For a test of what the start-up does on a database the queue has never seen.
     * @return an initializer whose databases are empty
     */
    public static TestDatabaseInitializer empty() {
        return new TestDatabaseInitializer(false, 0);
    }

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        TestDatabase database = this.migrated ? TestDatabase.createMigrated("pgqueue_ctx") : TestDatabase.create("pgqueue_ctx");
        Map<String, Object> properties = new HashMap<>();
        properties.put("spring.datasource.url", database.jdbcUrl());
        if (database.user() != null) {
            properties.put("spring.datasource.username", database.user());
        }
        if (database.password() != null) {
            properties.put("spring.datasource.password", database.password());
        }
        for (int i = 1; i <= this.shards; i++) {
            TestDatabase shard = this.migrated ? TestDatabase.createMigrated("pgqueue_ctx_shard")
                    : TestDatabase.create("pgqueue_ctx_shard");
            String prefix = "pgqueue.shards.shard-" + i + ".";
            properties.put(prefix + "url", shard.jdbcUrl());
            if (shard.user() != null) {
                properties.put(prefix + "username", shard.user());
            }
            if (shard.password() != null) {
                properties.put(prefix + "password", shard.password());
            }
            ((DefaultListableBeanFactory) context.getBeanFactory()).registerDisposableBean("pgqueueTestShard" + i,
                    shard::close);
        }
        context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("pgqueueTestDatabase", properties));
        ((DefaultListableBeanFactory) context.getBeanFactory()).registerDisposableBean("pgqueueTestDatabase",
                database::close);
    }
}
