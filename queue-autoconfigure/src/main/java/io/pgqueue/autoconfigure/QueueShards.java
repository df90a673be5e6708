package io.pgqueue.autoconfigure;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import javax.sql.DataSource;

import io.pgqueue.QueueDefaults;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The DataSources of the shards listed under {@code pgqueue.shards}, one connection pool each,
 * closed with the application context. Empty when the queue is unsharded.
 */
public final class QueueShards implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(QueueShards.class);

    private final Map<String, DataSource> dataSources;

    private QueueShards(Map<String, DataSource> dataSources) {
        this.dataSources = Collections.unmodifiableMap(dataSources);
    }

    /**
     * Creates the shards' connection pools from their properties; nothing connects yet.
     * @param shards the properties, by shard name
     * @return the shards
     * @throws QueueConfigurationException if a shard has no URL, a bad name, or HikariCP is missing
     */
    static QueueShards of(Map<String, QueueProperties.Shard> shards) {
        Map<String, DataSource> dataSources = new LinkedHashMap<>();
        if (shards.isEmpty()) {
            return new QueueShards(dataSources);
        }
        try {
            Class.forName("com.zaxxer.hikari.HikariDataSource", false, QueueShards.class.getClassLoader());
        }
        catch (ClassNotFoundException ex) {
            throw new QueueConfigurationException("pgqueue.shards lists shards, but HikariCP, which pools their "
                    + "connections, is not on the classpath", "Add spring-boot-starter-jdbc (or com.zaxxer:HikariCP)");
        }
        shards.forEach((name, shard) -> {
            String where = "pgqueue.shards." + name;
            if (name == null || !name.matches("[a-z0-9][a-z0-9_-]{0,39}") || QueueDefaults.MAIN_SHARD.equals(name)) {
                throw new QueueConfigurationException("'" + name + "' cannot name a shard", "Name shards with lower-case "
                        + "letters, digits, '-' and '_' (at most 40, starting with a letter or digit), other than '"
                        + QueueDefaults.MAIN_SHARD + "' (the queue's own DataSource)");
            }
            if (shard.getUrl() == null || shard.getUrl().isBlank()) {
                throw new QueueConfigurationException("Shard '" + name + "' has no database URL",
                        "Set " + where + ".url to the JDBC URL of the shard's PostgreSQL database");
            }
            if (shard.getMaximumPoolSize() < 2) {
                throw new QueueConfigurationException("Invalid value '" + shard.getMaximumPoolSize() + "' for '" + where
                        + ".maximum-pool-size'", "Give the shard at least 2 connections (a listener holds one)");
            }
            dataSources.put(name, HikariPools.create(name, shard));
        });
        return new QueueShards(dataSources);
    }

    /** @return the shards' DataSources, by name, in the configured order */
    public Map<String, DataSource> dataSources() {
        return this.dataSources;
    }

    /** Closes the shards' connection pools. */
    @Override
    public void close() {
        this.dataSources.forEach((name, dataSource) -> {
            try {
                if (dataSource instanceof AutoCloseable closeable) {
                    closeable.close();
                }
            }
            catch (Exception ex) {
                log.warn("Could not close the connection pool of shard '{}': {}", name, ex.toString());
            }
        });
    }

    /** Kept apart so that HikariCP is loaded only when shards are configured. */
    private static final class HikariPools {

        static DataSource create(String name, QueueProperties.Shard shard) {
            com.zaxxer.hikari.HikariConfig config = new com.zaxxer.hikari.HikariConfig();
            config.setJdbcUrl(shard.getUrl());
            config.setUsername(shard.getUsername());
            config.setPassword(shard.getPassword());
            config.setMaximumPoolSize(shard.getMaximumPoolSize());
            config.setPoolName("pgqueue-shard-" + name);
            // Connections open on first use, when pgqueue opens the shards, which reports a shard it
            // cannot reach with its name.
            config.setInitializationFailTimeout(-1);
            return new com.zaxxer.hikari.HikariDataSource(config);
        }
    }
}
