package io.pgqueue.internal.store;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;

/**
 * The stores of one queue database, created once and shared by the client, the admin, the workers,
 * the scheduler, the message queues, the shards and the balancer: every statement the engine runs on
 * that database goes through them.
 *
 * @param dataSource the queue's database
 * @param config the queue's settings
 * @param jobs the job store
 * @param controls the task controls (pause/resume)
 * @param nodes the node registry
 * @param stats the shared statistics count
 * @param schema the schema check
 * @param partitions the partition map and the shard's identity
 * @param outbox the outbox of jobs bound for other shards
 * @param schedules the recurring jobs' schedules
 * @param messages the message queues
 * @param balancer the partition balancer's state
 * @param actions the record of operator actions
 * @param history the tasks' history per minute and hour
 */
public record QueueStores(DataSource dataSource, QueueConfig config, JobStore jobs, ControlStore controls,
        NodeStore nodes, StatsStore stats, SchemaStore schema, PartitionStore partitions, OutboxStore outbox,
        ScheduleStore schedules, MessageStore messages, BalancerStore balancer, ActionStore actions,
        HistoryStore history) {

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
                new ControlStore(dataSource, config), new NodeStore(dataSource, config), new StatsStore(dataSource, config),
                new SchemaStore(dataSource, config.schema()), new PartitionStore(dataSource, config),
                new OutboxStore(dataSource, config), new ScheduleStore(dataSource, config), new MessageStore(dataSource, config, shard),
                new BalancerStore(dataSource, config), new ActionStore(dataSource, config),
                new HistoryStore(dataSource, config));
    }
}
