package io.pgqueue.autoconfigure;

import java.util.Locale;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.pgqueue.EnqueueOutcome;
import io.pgqueue.JobState;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.observe.MicrometerQueueEvents;
import io.pgqueue.observe.QueueMeterNames;
import io.pgqueue.observe.QueueStatsPoller;
import io.pgqueue.observe.TaskStats;
import io.pgqueue.worker.PoolState;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Publishes pgqueue's metrics to Micrometer: counters and timers from the queue's events, and
 * gauges that read the cached aggregate statistics and the pools' in-memory state, so a scrape
 * never queries the database.
 */
@AutoConfiguration(before = QueueAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
public final class QueueMetricsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    MicrometerQueueEvents queueMicrometerEvents(MeterRegistry registry) {
        return new MicrometerQueueEvents(registry);
    }

    @Bean
    MeterBinder queueGauges(ObjectProvider<TaskRegistry> tasks, ObjectProvider<QueueStatsPoller> stats,
            ObjectProvider<QueueWorkersLifecycle> workers) {
        return registry -> {
            QueueStatsPoller poller = stats.getIfAvailable();
            TaskRegistry registered = tasks.getIfAvailable();
            if (poller != null && registered != null) {
                for (TaskDefinition task : registered.all()) {
                    bindTask(registry, poller, task.name());
                }
            }
            QueueWorkersLifecycle lifecycle = workers.getIfAvailable();
            if (lifecycle != null && registered != null) {
                bindPools(registry, lifecycle);
            }
        };
    }

    /**
     * Registers every counter of a task at zero, so dashboards and alerts see the series from the
     * start rather than after the first event.
     */
    private static void counters(MeterRegistry registry, String task) {
        for (String name : new String[] { QueueMeterNames.COMPLETED, QueueMeterNames.FAILED, QueueMeterNames.RETRIED,
                QueueMeterNames.CANCELLED, QueueMeterNames.LEASES_LOST, QueueMeterNames.DEADLINE_MISSED }) {
            registry.counter(name, QueueMeterNames.TAG_TASK, task);
        }
        for (EnqueueOutcome outcome : EnqueueOutcome.values()) {
            String tag = outcome.name().toLowerCase(Locale.ROOT);
            registry.counter(QueueMeterNames.ENQUEUED, QueueMeterNames.TAG_TASK, task, QueueMeterNames.TAG_OUTCOME, tag);
            if (outcome != EnqueueOutcome.CREATED) {
                registry.counter(QueueMeterNames.DEDUPLICATED, QueueMeterNames.TAG_TASK, task, QueueMeterNames.TAG_OUTCOME,
                        tag);
            }
        }
        for (JobState state : new JobState[] { JobState.READY, JobState.FAILED, JobState.CANCELLED }) {
            registry.counter(QueueMeterNames.RESCUED, QueueMeterNames.TAG_TASK, task, QueueMeterNames.TAG_STATE,
                    state.name().toLowerCase(Locale.ROOT));
        }
    }

    private static void bindTask(MeterRegistry registry, QueueStatsPoller poller, String task) {
        counters(registry, task);
        jobs(registry, poller, task, "ready", TaskStats::ready);
        jobs(registry, poller, task, "scheduled", TaskStats::scheduled);
        jobs(registry, poller, task, "starting", TaskStats::starting);
        jobs(registry, poller, task, "running", TaskStats::running);
        jobs(registry, poller, task, "failed", TaskStats::failed);
        Gauge.builder(QueueMeterNames.LAG, poller, p -> p.latest().task(task).lagSeconds())
            .description("Seconds since the oldest due READY job became due")
            .baseUnit("seconds")
            .tag(QueueMeterNames.TAG_TASK, task)
            .register(registry);
        Gauge.builder(QueueMeterNames.STUCK, poller, p -> p.latest().task(task).stuck())
            .description("Claimed jobs past their lease deadline, not yet rescued")
            .tag(QueueMeterNames.TAG_TASK, task)
            .register(registry);
    }

    private static void jobs(MeterRegistry registry, QueueStatsPoller poller, String task, String state,
            ToDoubleFunction<TaskStats> value) {
        Gauge.builder(QueueMeterNames.JOBS, poller, p -> value.applyAsDouble(p.latest().task(task)))
            .description("Jobs by task and state")
            .tags(QueueMeterNames.TAG_TASK, task, QueueMeterNames.TAG_STATE, state.toLowerCase(Locale.ROOT))
            .register(registry);
    }

    private static void bindPools(MeterRegistry registry, QueueWorkersLifecycle lifecycle) {
        for (var entry : lifecycle.poolTasks().entrySet()) {
            String pool = entry.getKey();
            Gauge.builder(QueueMeterNames.POOL_CAPACITY, lifecycle, l -> pool(l, pool).capacity())
                .description("Handler slots of a pool")
                .tag(QueueMeterNames.TAG_POOL, pool)
                .register(registry);
            Gauge.builder(QueueMeterNames.POOL_BUSY, lifecycle, l -> pool(l, pool).busy())
                .description("Handlers running in a pool")
                .tag(QueueMeterNames.TAG_POOL, pool)
                .register(registry);
            Gauge.builder(QueueMeterNames.POOL_BUFFERED, lifecycle, l -> pool(l, pool).buffered())
                .description("Jobs claimed into a pool's buffer, not yet running")
                .tag(QueueMeterNames.TAG_POOL, pool)
                .register(registry);
            for (String task : entry.getValue()) {
                registry.counter(QueueMeterNames.CLAIMED, QueueMeterNames.TAG_TASK, task, QueueMeterNames.TAG_POOL, pool);
                Gauge.builder(QueueMeterNames.POOL_PREFETCH, lifecycle, l -> {
                    PoolState.Task state = pool(l, pool).tasks().get(task);
                    return state == null ? 0 : state.prefetchDepth();
                })
                    .description("Prefetch depth the adaptive logic chose")
                    .tags(QueueMeterNames.TAG_POOL, pool, QueueMeterNames.TAG_TASK, task)
                    .register(registry);
            }
        }
    }

    private static PoolState pool(QueueWorkersLifecycle lifecycle, String name) {
        return lifecycle.pools().stream()
            .filter(pool -> pool.name().equals(name))
            .findFirst()
            .orElse(new PoolState(name, 0, 0, 0, java.util.Map.of()));
    }
}
