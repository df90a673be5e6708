package io.pgqueue.benchmark;

import java.io.IOException;
import java.io.UncheckedIOException;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

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

    String description() {
        return this.embedded != null ? "embedded PostgreSQL" : this.url.replaceAll("password=[^&]*", "password=***");
    }

    HikariDataSource pool(String name, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(this.url);
        config.setMaximumPoolSize(size);
        config.setPoolName(name);
        return new HikariDataSource(config);
    }

    @Override
    public void close() throws IOException {
        if (this.embedded != null) {
            this.embedded.close();
        }
    }
}
