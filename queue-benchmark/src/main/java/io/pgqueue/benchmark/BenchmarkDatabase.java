package io.pgqueue.benchmark;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.UncheckedIOException;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The database the benchmark runs against: the JDBC URL given with {@code url=...}, or an embedded
 * PostgreSQL (default settings, fsync on) started for the run.
 */
final class BenchmarkDatabase implements AutoCloseable {

    private final EmbeddedPostgres embedded;

    private final String url;

    BenchmarkDatabase(String url) {
        if (url == null || url.isBlank()) {
            try {
                this.embedded = EmbeddedPostgres.builder().setRegisterShutdownHook(false)
                    .setServerConfig("max_connections", "200").start();
            }
            catch (IOException ex) {
                throw new UncheckedIOException("Could not start an embedded PostgreSQL; pass url=jdbc:postgresql://...", ex);
            }
            this.url = this.embedded.getJdbcUrl("postgres", "postgres");
        }
        else {
            this.embedded = null;
            this.url = url;
        }
    }

    String jdbcUrl() {
        return this.url;
    }

    String description() {
        return this.embedded != null ? "embedded PostgreSQL" : this.url.replaceAll("password=[^&]*", "password=***");
    }

    HikariDataSource pool(String name, int size) {
        return pool(null, name, size);
    }

    /**
     * A pool on another database of the same server.
     * @param database the database, or {@code null} for the benchmark's own
     */
    HikariDataSource pool(String database, String name, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(database == null ? this.url : this.url.replaceFirst("(//[^/]+/)[^?]*", "$1" + database));
        config.setMaximumPoolSize(size);
        config.setPoolName(name);
        return new HikariDataSource(config);
    }

    /** Creates a database on the same server, unless it exists. */
    void createDatabase(DataSource server, String name) {
        JdbcTemplate jdbc = new JdbcTemplate(server);
        if (jdbc.queryForList("SELECT 1 FROM pg_database WHERE datname = ?", Integer.class, name).isEmpty()) {
            jdbc.execute("CREATE DATABASE " + name);
        }
    }

    @Override
    public void close() throws IOException {
        if (this.embedded != null) {
            this.embedded.close();
        }
    }
}
