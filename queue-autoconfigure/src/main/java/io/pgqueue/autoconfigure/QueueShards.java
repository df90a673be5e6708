package io.pgqueue.autoconfigure;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import javax.sql.DataSource;

import io.pgqueue.QueueDefaults;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;

/**
 * The DataSources of the queue's shards: those listed under {@code pgqueue.shards}, one connection
 * pool each, closed with the application context, and the DataSource beans marked
 * {@link QueueShard}, which the application owns. Empty when the queue is unsharded.
 */
public final class QueueShards implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(QueueShards.class);

    private final Map<String, DataSource> dataSources;

    private final Set<String> pooled;

    private QueueShards(Map<String, DataSource> dataSources, Set<String> pooled) {
        this.dataSources = Collections.unmodifiableMap(dataSources);
        this.pooled = pooled;
    }

    /**
     * Creates the connection pools of the shards configured by properties, and takes the DataSource
     * beans marked {@link QueueShard}; nothing connects yet.
     * @param shards the properties, by shard name
     * @param beans where to look for DataSource beans marked {@link QueueShard}
     * @return the shards
     * @throws QueueConfigurationException if a shard has no URL or a bad name, is configured twice,
     * or HikariCP is missing
     */
    static QueueShards of(Map<String, QueueProperties.Shard> shards, ListableBeanFactory beans) {
        Map<String, DataSource> dataSources = new LinkedHashMap<>();
        Map<String, String> declared = new LinkedHashMap<>();
        for (String bean : beans.getBeanNamesForType(DataSource.class, true, false)) {
            QueueShard shard = beans.findAnnotationOnBean(bean, QueueShard.class);
            if (shard == null) {
                continue;
            }
            String where = "DataSource bean '" + bean + "'";
            requireName(shard.value(), where);
            String other = declared.putIfAbsent(shard.value(), where);
            if (other != null || shards.containsKey(shard.value())) {
                throw new QueueConfigurationException("Shard '" + shard.value() + "' is configured twice: as " + where
                        + " and as " + (other != null ? other : "pgqueue.shards." + shard.value()),
                        "Give each shard one DataSource: a @QueueShard bean or a URL under pgqueue.shards");
            }
            dataSources.put(shard.value(), beans.getBean(bean, DataSource.class));
        }
        if (shards.isEmpty()) {
            return new QueueShards(dataSources, Set.of());
        }
        try {
            Class.forName("com.zaxxer.hikari.HikariDataSource", false, QueueShards.class.getClassLoader());
        }
        catch (ClassNotFoundException ex) {
            throw new QueueConfigurationException("pgqueue.shards lists shards, but HikariCP, which pools their "
                    + "connections, is not on the classpath", "Add spring-boot-starter-jdbc (or com.zaxxer:HikariCP), "
                    + "or declare the shards as DataSource beans marked @QueueShard");
        }
        shards.forEach((name, shard) -> {
            String where = "pgqueue.shards." + name;
            requireName(name, where);
            if (shard.getUrl() == null || shard.getUrl().isBlank()) {
                throw new QueueConfigurationException("Shard '" + name + "' has no database URL",
                        "Set " + where + ".url to the JDBC URL of the shard's PostgreSQL database");
            }
            if (shard.getMaximumPoolSize() < 2) {
                throw new QueueConfigurationException("Invalid value '" + shard.getMaximumPoolSize() + "' for '" + where
                        + ".maximum-pool-size'", "Give the shard at least 2 connections (a listener holds one)");
            }
        });
        Map<String, DataSource> pools = new LinkedHashMap<>();
        shards.forEach((name, shard) -> pools.put(name, HikariPools.create(name, shard)));
        pools.putAll(dataSources);
        return new QueueShards(pools, Set.copyOf(shards.keySet()));
    }

    private static void requireName(String name, String where) {
        if (name == null || !name.matches("[a-z0-9][a-z0-9_-]{0,39}") || QueueDefaults.MAIN_SHARD.equals(name)) {
            throw new QueueConfigurationException("'" + name + "' cannot name a shard (" + where + ")", "Name shards "
                    + "with lower-case letters, digits, '-' and '_' (at most 40, starting with a letter or digit), "
                    + "other than '" + QueueDefaults.MAIN_SHARD + "' (the queue's own DataSource)");
        }
    }

    /** @return the shards' DataSources, by name, in the configured order */
    public Map<String, DataSource> dataSources() {
        return this.dataSources;
    }

    /** Closes the connection pools of the shards configured by properties. */
    @Override
    public void close() {
        this.dataSources.forEach((name, dataSource) -> {
            if (!this.pooled.contains(name)) {
                return;
            }
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
