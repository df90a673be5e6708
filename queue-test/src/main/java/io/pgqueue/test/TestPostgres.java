package io.pgqueue.test;

import java.io.File;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Properties;
import java.util.UUID;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The PostgreSQL server tests run against, chosen once per JVM, and the fresh databases made on it.
 * <ol>
 * <li>{@value #URL_VARIABLE} (a system property or an environment variable) when set, e.g.
 * {@code jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres}; {@code PGQUEUE_TEST_JDBC_USER} and
 * {@code PGQUEUE_TEST_JDBC_PASSWORD} may give the credentials;</li>
 * <li>else a Testcontainers {@code postgres:17-alpine} container when a Docker engine answers;</li>
 * <li>else an embedded PostgreSQL 17 (binaries from Maven Central), stopped when the JVM exits.</li>
 * </ol>
 */
public final class TestPostgres {

    /** The setting that names an explicit server. */
    public static final String URL_VARIABLE = "PGQUEUE_TEST_JDBC_URL";

    private static final Logger log = LoggerFactory.getLogger(TestPostgres.class);

    private static TestPostgres server;

    private final String urlBeforeDatabase;

    private final String urlParameters;

    private final String user;

    private final String password;

    private TestPostgres(String jdbcUrl, String user, String password) {
        int parameters = jdbcUrl.indexOf('?');
        String path = parameters < 0 ? jdbcUrl : jdbcUrl.substring(0, parameters);
        this.urlBeforeDatabase = path.substring(0, path.lastIndexOf('/') + 1);
        this.urlParameters = parameters < 0 ? "" : jdbcUrl.substring(parameters);
        this.user = user;
        this.password = password;
    }

    /**
     * Returns this JVM's server, starting one on first use.
     * @return the server
     */
    public static synchronized TestPostgres server() {
        if (server == null) {
            server = start();
        }
        return server;
    }

    private static TestPostgres start() {
        String url = setting(URL_VARIABLE);
        if (url != null && !url.isBlank()) {
            log.info("pgqueue tests use the PostgreSQL of {}", URL_VARIABLE);
            return new TestPostgres(url, setting("PGQUEUE_TEST_JDBC_USER"), setting("PGQUEUE_TEST_JDBC_PASSWORD"));
        }
        boolean dockerSocket = setting("DOCKER_HOST") != null || new File("/var/run/docker.sock").exists()
                || new File(System.getProperty("user.home"), ".docker/run/docker.sock").exists();
        if (dockerSocket && DockerClientFactory.instance().isDockerAvailable()) {
            // Each cached test context holds a connection pool: room for many of them.
            PostgreSQLContainer container = new PostgreSQLContainer("postgres:17-alpine");
            container.setCommand("postgres", "-c", "max_connections=300", "-c", "fsync=off");
            container.start();
            Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "pgqueue-test-postgres-stop"));
            log.info("pgqueue tests use a Testcontainers PostgreSQL");
            return new TestPostgres(container.getJdbcUrl(), container.getUsername(), container.getPassword());
        }
        try {
            EmbeddedPostgres embedded = EmbeddedPostgres.builder().setServerConfig("max_connections", "300")
                .setServerConfig("fsync", "off").start();
            log.info("pgqueue tests use an embedded PostgreSQL (set {} to use a server of yours)", URL_VARIABLE);
            return new TestPostgres(embedded.getJdbcUrl("postgres", "postgres"), null, null);
        }
        catch (Exception ex) {
            throw new IllegalStateException("No PostgreSQL for the tests: no Docker engine answered and an embedded "
                    + "PostgreSQL could not start. Set " + URL_VARIABLE + " to a server's JDBC URL", ex);
        }
    }

    private static String setting(String name) {
        String value = System.getProperty(name);
        return value != null ? value : System.getenv(name);
    }

    /**
     * Creates a database with a unique name.
     * @param prefix the start of its name
     * @return its name
     */
    public String createDatabase(String prefix) {
        String name = (prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12))
            .toLowerCase(Locale.ROOT);
        execute("CREATE DATABASE \"" + name + "\"");
        return name;
    }

    /**
     * Drops a database, disconnecting whoever is still on it.
     * @param name its name
     */
    public void dropDatabase(String name) {
        execute("DROP DATABASE IF EXISTS \"" + name + "\" WITH (FORCE)");
    }

    /**
     * Returns the JDBC URL of a database on this server.
     * @param database the database's name
     * @return the URL, with the parameters of the configured one
     */
    public String jdbcUrl(String database) {
        return this.urlBeforeDatabase + database + this.urlParameters;
    }

    /** @return the user to connect as, or {@code null} when the URL names it */
    public String user() {
        return this.user;
    }

    /** @return the password, or {@code null} when the URL holds it or none is needed */
    public String password() {
        return this.password;
    }

    private void execute(String sql) {
        Properties credentials = new Properties();
        if (this.user != null) {
            credentials.setProperty("user", this.user);
        }
        if (this.password != null) {
            credentials.setProperty("password", this.password);
        }
        try (Connection connection = DriverManager.getConnection(jdbcUrl("postgres"), credentials);
                Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
        catch (SQLException ex) {
            throw new IllegalStateException("Could not run '" + sql + "' on the test PostgreSQL: " + ex.getMessage(), ex);
        }
    }
}
