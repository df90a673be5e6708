package io.pgqueue.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.Map;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.SpringApplication;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Starts an embedded PostgreSQL when no {@code spring.datasource.url} is configured, so the sample
 * runs on a bare machine with nothing but a JDK. With a URL configured it does nothing. Set
 * {@code sample.embedded-postgres.enabled=false} to switch it off. With
 * {@code sample.embedded-postgres.shards=N} it also creates N more databases on that server
 * ({@code shard_1} ...) and lists them as the queue's shards {@code shard-1} ... under
 * {@code pgqueue.shards}.
 */
public class EmbeddedPostgresEnvironment implements EnvironmentPostProcessor {

    private static final Log log = LogFactory.getLog(EmbeddedPostgresEnvironment.class);

    private static EmbeddedPostgres server;

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (environment.containsProperty("spring.datasource.url")
                || !environment.getProperty("sample.embedded-postgres.enabled", Boolean.class, true)) {
            return;
        }
        String url = start(environment.getProperty("sample.embedded-postgres.port", Integer.class, 0)).getJdbcUrl("postgres",
                "postgres");
        log.info("No spring.datasource.url configured: started an embedded PostgreSQL at " + url);
        // Stop the server after every other bean (the DataSource, the queue) has been destroyed:
        // disposable beans are destroyed in reverse order of registration, and this one comes first.
        application.addInitializers(context -> ((DefaultListableBeanFactory) context.getBeanFactory())
            .registerDisposableBean("embeddedPostgres", EmbeddedPostgresEnvironment::stop));
        Map<String, Object> properties = new LinkedHashMap<>(Map.of("spring.datasource.url", url,
                "spring.datasource.username", "postgres"));
        int shards = environment.getProperty("sample.embedded-postgres.shards", Integer.class, 0);
        for (int i = 1; i <= shards; i++) {
            String database = "shard_" + i;
            createDatabase(database);
            properties.put("pgqueue.shards.shard-" + i + ".url", server.getJdbcUrl("postgres", database));
            properties.put("pgqueue.shards.shard-" + i + ".username", "postgres");
            log.info("Shard 'shard-" + i + "' on the embedded PostgreSQL: " + server.getJdbcUrl("postgres", database));
        }
        environment.getPropertySources().addLast(new MapPropertySource("embeddedPostgres", properties));
    }

    private static void createDatabase(String name) {
        try (Connection connection = server.getPostgresDatabase().getConnection();
                Statement statement = connection.createStatement()) {
            try (ResultSet exists = statement.executeQuery("SELECT 1 FROM pg_database WHERE datname = '" + name + "'")) {
                if (exists.next()) {
                    return;
                }
            }
            statement.execute("CREATE DATABASE " + name);
        }
        catch (SQLException ex) {
            throw new IllegalStateException("Could not create the shard database " + name + " on the embedded PostgreSQL",
                    ex);
        }
    }

    private static synchronized EmbeddedPostgres start(int port) {
        if (server == null) {
            try {
                // Stopped by the application context, after the queue and the DataSource (not by a
                // JVM shutdown hook, which would race with the context's own shutdown).
                EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder().setRegisterShutdownHook(false);
                if (port > 0) {
                    builder.setPort(port);
                }
                server = builder.start();
            }
            catch (IOException ex) {
                throw new UncheckedIOException("Could not start the embedded PostgreSQL; configure spring.datasource.url "
                        + "to use a running server instead", ex);
            }
        }
        return server;
    }

    private static synchronized void stop() throws IOException {
        if (server != null) {
            server.close();
            server = null;
        }
    }
}
