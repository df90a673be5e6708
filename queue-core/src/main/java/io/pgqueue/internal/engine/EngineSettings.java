package io.pgqueue.internal.engine;

import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import javax.sql.DataSource;

import io.pgqueue.JobInterceptor;
import io.pgqueue.PayloadEncryption;
import io.pgqueue.QueueConfig;
import io.pgqueue.TaskRegistry;
import io.pgqueue.balance.BalancerSettings;
import io.pgqueue.message.MessageQueueEvents;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.schedule.Schedule;
import io.pgqueue.worker.WorkerExecutors;
import io.pgqueue.worker.WorkerSettings;
import io.pgqueue.worker.WorkerTask;
import tools.jackson.databind.ObjectMapper;

/**
 * What an {@link Engine} is built from; {@code PgQueue.Builder} fills it in.
 *
 * @param dataSource the queue's database (sharded: the main shard)
 * @param config the queue's settings
 * @param shards the other shards' databases by name, empty for an unsharded queue
 * @param partitions the partition count of a new installation, {@code null} for the recorded one
 * @param tasks the declared task types, the workers' included
 * @param mapper the JSON mapper of payloads and headers
 * @param telemetry where events and observations go
 * @param statsInterval how often the shared statistics are read
 * @param workerSettings the worker settings, {@code null} on a node that runs no workers
 * @param workerTasks supplies the tasks this node runs, looked up when the workers start
 * @param executors creates each pool's handler executor
 * @param balancerEnabled whether this node may run the partition balancer
 * @param balancerSettings how the balancer decides
 * @param balancerLoadWindow over how long partitions' weights are measured
 * @param messageEvents where message-queue calls are counted
 * @param schedules the schedules configured with this node's tasks
 * @param clock the scheduler's clock
 * @param interceptors what sees each enqueue and wraps each attempt, outermost first
 * @param encryption encrypts the payloads of the tasks that ask for it and decrypts them for handlers
 */
public record EngineSettings(DataSource dataSource, QueueConfig config, Map<String, DataSource> shards, Integer partitions,
        TaskRegistry tasks, ObjectMapper mapper, QueueTelemetry telemetry, Duration statsInterval,
        WorkerSettings workerSettings, Supplier<? extends Collection<WorkerTask>> workerTasks, WorkerExecutors executors,
        boolean balancerEnabled, BalancerSettings balancerSettings, Duration balancerLoadWindow,
        MessageQueueEvents messageEvents, List<Schedule> schedules, Clock clock, List<JobInterceptor> interceptors,
        PayloadEncryption encryption) {

    /**
     * Copies the collections.
     */
    public EngineSettings {
        // In the order given: shards are numbered in the order they are first registered.
        shards = Collections.unmodifiableMap(new LinkedHashMap<>(shards));
        schedules = List.copyOf(schedules);
        interceptors = List.copyOf(interceptors);
    }
}
