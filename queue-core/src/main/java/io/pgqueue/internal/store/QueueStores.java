package io.pgqueue.internal.store;

import java.util.Objects;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;

/**
 * The stores of one queue database, created once and shared by the client, the admin, the workers
 * and the statistics poller: every statement the queue runs on that database goes through them.
 *
 * @param dataSource the queue's database
 * @param config the queue's settings
 * @param jobs the job store
 * @param controls the task controls (pause/resume)
 * @param nodes the node registry
 * @param stats the shared statistics count
 */
public record QueueStores(DataSource dataSource, QueueConfig config, JobStore jobs, ControlStore controls,
        NodeStore nodes, StatsStore stats) {

    /**
     * Checks that every store is there.
     */
    public QueueStores {
        Objects.requireNonNull(dataSource, "dataSource");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(jobs, "jobs");
        Objects.requireNonNull(controls, "controls");
        Objects.requireNonNull(nodes, "nodes");
        Objects.requireNonNull(stats, "stats");
    }

    /**
     * Creates the stores of a queue database.
     * @param dataSource the queue's database
     * @param config the queue's settings
     * @return the stores
     */
    public static QueueStores create(DataSource dataSource, QueueConfig config) {
        return create(dataSource, config, false);
    }

    /**
     * Creates the stores of a queue database.
     * @param dataSource the queue's database
     * @param config the queue's settings
     * @param shard whether the database is one shard of several, which writes a job only while it
     * holds the job's partition
     * @return the stores
     */
    public static QueueStores create(DataSource dataSource, QueueConfig config, boolean shard) {
        return new QueueStores(dataSource, config, new JobStore(dataSource, config, shard),
                new ControlStore(dataSource, config), new NodeStore(dataSource, config), new StatsStore(dataSource, config));
    }
}
