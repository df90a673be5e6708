package io.pgqueue.testing;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A fresh PostgreSQL database on the {@link PostgresServer}, dropped when closed.
 * <p>
 * As a JUnit extension ({@code @RegisterExtension static final TestDatabase db = TestDatabase.perClass();})
 * it creates the database before the class's first test and drops it after the last one. It can
 * also be used directly with {@link #create(String)} and {@link #close()}.
 */
public final class TestDatabase implements BeforeAllCallback, AfterAllCallback, AutoCloseable {

    private static final Object OPEN_LOCK = new Object();

    private static int open;

    private final String prefix;

    /** The database this one is a copy of, or {@code null} for an empty one. */
    private final String template;

    private String name;

    private HikariDataSource dataSource;

    private TestDatabase(String prefix, String template) {
        this.prefix = prefix;
        this.template = template;
    }

    /**
     * Returns an extension that gives each test class its own database.
     * @return the extension; register it as a static field
     */
    public static TestDatabase perClass() {
        return new TestDatabase("pgqueue_test", null);
    }

    /**
     * Creates a database now.
     * @param prefix prefix of the database name (a random suffix is appended)
     * @return the database; close it to drop it
     */
    public static TestDatabase create(String prefix) {
        TestDatabase database = new TestDatabase(prefix, null);
        database.open();
        return database;
    }

    /**
     * Creates a database now with the queue's schema ({@code pgqueue}) already migrated: a copy of a
     * template database that this JVM migrates once, which takes a fraction of running every migration.
     * @param prefix prefix of the database name (a random suffix is appended)
     * @return the database; close it to drop it
     */
    public static TestDatabase createMigrated(String prefix) {
        TestDatabase database = new TestDatabase(prefix, PostgresServer.get().migratedTemplate());
        database.open();
        return database;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        open();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        close();
    }

    private void open() {
        this.name = (this.prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12))
            .toLowerCase(Locale.ROOT);
        execute("CREATE DATABASE \"" + this.name + "\"" + (this.template == null ? "" : " TEMPLATE \"" + this.template + "\""));
        synchronized (OPEN_LOCK) {
            open++;
        }
    }

    /**
     * Waits until every database created in this JVM has been closed, or the timeout passes.
     * @param timeout the longest wait
     */
    static void awaitAllClosed(java.time.Duration timeout) {
        long deadline = System.currentTimeMillis() + timeout.toMillis();
        synchronized (OPEN_LOCK) {
            while (open > 0) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    return;
                }
                try {
                    OPEN_LOCK.wait(left);
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /**
     * Returns a shared connection pool on this database, created on first use.
     * @return the pool
     */
    public synchronized DataSource dataSource() {
        if (this.dataSource == null) {
            this.dataSource = newDataSource(20);
        }
        return this.dataSource;
    }

    /**
     * Creates a separate connection pool on this database; the caller closes it.
     * @param maximumPoolSize the pool's maximum size
     * @return the pool
     */
    public HikariDataSource newDataSource(int maximumPoolSize) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl());
        PostgresServer server = PostgresServer.get();
        if (server.user() != null) {
            config.setUsername(server.user());
        }
        if (server.password() != null) {
            config.setPassword(server.password());
        }
        config.setMaximumPoolSize(maximumPoolSize);
        // Connections open as they are needed: test classes run side by side on one server.
        config.setMinimumIdle(Math.min(2, maximumPoolSize));
        config.setPoolName(this.name);
        return new HikariDataSource(config);
    }

    /** @return the JDBC URL of this database */
    public String jdbcUrl() {
        return PostgresServer.get().jdbcUrl(this.name);
    }

    /** @return the user name for {@link #jdbcUrl()}, or {@code null} when the URL carries it */
    public String user() {
        return PostgresServer.get().user();
    }

    /** @return the password for {@link #jdbcUrl()}, or {@code null} when the URL carries it */
    public String password() {
        return PostgresServer.get().password();
    }

    /**
     * @return the Spring Boot properties of a {@code DataSource} on this database:
     * {@code spring.datasource.url} and, when the server needs them, the user name and password
     */
    public List<String> springProperties() {
        List<String> properties = new ArrayList<>(List.of("spring.datasource.url=" + jdbcUrl()));
        if (user() != null) {
            properties.add("spring.datasource.username=" + user());
        }
        if (password() != null) {
            properties.add("spring.datasource.password=" + password());
        }
        return properties;
    }

    /** @return the database name */
    public String name() {
        return this.name;
    }

    /** Closes the pool and drops the database, disconnecting any session still on it. */
    @Override
    public synchronized void close() {
        if (this.dataSource != null) {
            this.dataSource.close();
            this.dataSource = null;
        }
        if (this.name != null) {
            try {
                execute("DROP DATABASE IF EXISTS \"" + this.name + "\" WITH (FORCE)");
            }
            finally {
                this.name = null;
                synchronized (OPEN_LOCK) {
                    open--;
                    OPEN_LOCK.notifyAll();
                }
            }
        }
    }

    static void execute(String sql) {
        try (Connection connection = PostgresServer.get().adminConnection();
                Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
        catch (SQLException ex) {
            throw new IllegalStateException("Could not run '" + sql + "' on the test server", ex);
        }
    }
}
