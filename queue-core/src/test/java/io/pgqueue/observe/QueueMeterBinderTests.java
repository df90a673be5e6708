package io.pgqueue.observe;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.pgqueue.EnqueueOutcome;
import io.pgqueue.JobState;
import io.pgqueue.worker.PoolState;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class QueueMeterBinderTests {

    private final MeterRegistry registry = new SimpleMeterRegistry();

    private final AtomicReference<QueueStats> stats = new AtomicReference<>(QueueStats.NONE);

    private final AtomicReference<List<PoolState>> pools = new AtomicReference<>(List.of());

    private final QueueMeterBinder binder = QueueMeterBinder.NONE.withTasks(List.of("push", "copy"), this.stats::get)
        .withPools(Map.of("default", List.of("push", "copy")), this.pools::get);

    @Test
    void noneBindsNothing() {
        QueueMeterBinder.NONE.bindTo(this.registry);

        assertThat(this.registry.getMeters()).isEmpty();
    }

    @Test
    void taskGaugesReadTheLatestStatisticsAtEachScrape() {
        this.binder.bindTo(this.registry);
        assertThat(gauge(QueueMeterNames.JOBS, "task", "push", "state", "ready")).isZero();

        this.stats.set(new QueueStats(Map.of("push", new TaskStats(3, 4, 5, 6, 7, 2, 1.5, 0, 0, false)), null, null));

        assertThat(gauge(QueueMeterNames.JOBS, "task", "push", "state", "ready")).isEqualTo(3);
        assertThat(gauge(QueueMeterNames.JOBS, "task", "push", "state", "scheduled")).isEqualTo(4);
        assertThat(gauge(QueueMeterNames.JOBS, "task", "push", "state", "starting")).isEqualTo(5);
        assertThat(gauge(QueueMeterNames.JOBS, "task", "push", "state", "running")).isEqualTo(6);
        assertThat(gauge(QueueMeterNames.JOBS, "task", "push", "state", "failed")).isEqualTo(7);
        assertThat(gauge(QueueMeterNames.STUCK, "task", "push")).isEqualTo(2);
        assertThat(gauge(QueueMeterNames.LAG, "task", "push")).isEqualTo(1.5);
        assertThat(this.registry.get(QueueMeterNames.LAG).gauge().getId().getBaseUnit()).isEqualTo("seconds");
        // A task without jobs in the statistics reports zero.
        assertThat(gauge(QueueMeterNames.JOBS, "task", "copy", "state", "ready")).isZero();
        assertThat(gauge(QueueMeterNames.LAG, "task", "copy")).isZero();
    }

    @Test
    void countersStartAtZeroAndAreTheOnesTheEventsIncrement() {
        this.binder.bindTo(this.registry);

        for (String name : List.of(QueueMeterNames.COMPLETED, QueueMeterNames.FAILED, QueueMeterNames.RETRIED,
                QueueMeterNames.CANCELLED, QueueMeterNames.LEASES_LOST, QueueMeterNames.DEADLINE_MISSED)) {
            assertThat(this.registry.get(name).tags("task", "copy").counter().count()).as(name).isZero();
        }
        assertThat(this.registry.get(QueueMeterNames.ENQUEUED).tags("task", "push").counters())
            .hasSize(EnqueueOutcome.values().length);
        assertThat(this.registry.get(QueueMeterNames.DEDUPLICATED).tags("task", "push").counters())
            .hasSize(EnqueueOutcome.values().length - 2);
        assertThat(this.registry.find(QueueMeterNames.DEDUPLICATED).tags("outcome", "created").counter()).isNull();
        // A relayed job's key is resolved on its shard later: it did not meet a duplicate yet.
        assertThat(this.registry.find(QueueMeterNames.DEDUPLICATED).tags("outcome", "relayed").counter()).isNull();
        assertThat(this.registry.get(QueueMeterNames.RESCUED).tags("task", "push").counters()).hasSize(3);
        assertThat(this.registry.get(QueueMeterNames.CLAIMED).tags("task", "copy", "pool", "default").counter().count())
            .isZero();

        MicrometerQueueEvents events = new MicrometerQueueEvents(this.registry);
        events.enqueued("push", EnqueueOutcome.MERGED);
        events.rescued("push", JobState.FAILED);
        events.claimed("default", "copy", 4);

        assertThat(counter(QueueMeterNames.ENQUEUED, "task", "push", "outcome", "merged")).isOne();
        assertThat(counter(QueueMeterNames.DEDUPLICATED, "task", "push", "outcome", "merged")).isOne();
        assertThat(counter(QueueMeterNames.RESCUED, "task", "push", "state", "failed")).isOne();
        assertThat(counter(QueueMeterNames.CLAIMED, "task", "copy", "pool", "default")).isEqualTo(4);
    }

    @Test
    void poolGaugesReadThePoolsStateAndReportZeroBeforeTheWorkersStart() {
        this.binder.bindTo(this.registry);
        assertThat(gauge(QueueMeterNames.POOL_CAPACITY, "pool", "default")).isZero();
        assertThat(gauge(QueueMeterNames.POOL_PREFETCH, "pool", "default", "task", "push")).isZero();

        assertThat(gauge(QueueMeterNames.POOL_HUNG, "pool", "default")).isZero();

        this.pools.set(List.of(new PoolState("default", 16, 2, 1, 5,
                Map.of("push", new PoolState.Task(8, 2, 1, 5, 40, Duration.ofMillis(4), false)))));

        assertThat(gauge(QueueMeterNames.POOL_CAPACITY, "pool", "default")).isEqualTo(16);
        assertThat(gauge(QueueMeterNames.POOL_BUSY, "pool", "default")).isEqualTo(2);
        assertThat(gauge(QueueMeterNames.POOL_HUNG, "pool", "default")).isEqualTo(1);
        assertThat(gauge(QueueMeterNames.POOL_BUFFERED, "pool", "default")).isEqualTo(5);
        assertThat(gauge(QueueMeterNames.POOL_PREFETCH, "pool", "default", "task", "push")).isEqualTo(40);
        // A task the pool's state does not list yet reports zero.
        assertThat(gauge(QueueMeterNames.POOL_PREFETCH, "pool", "default", "task", "copy")).isZero();
    }

    @Test
    void withoutPoolsNoPoolMetersAreBound() {
        QueueMeterBinder.NONE.withTasks(List.of("push"), this.stats::get).bindTo(this.registry);

        assertThat(this.registry.find(QueueMeterNames.POOL_CAPACITY).gauges()).isEmpty();
        assertThat(this.registry.find(QueueMeterNames.CLAIMED).counters()).isEmpty();
        assertThat(this.registry.find(QueueMeterNames.JOBS).gauges()).hasSize(5);
    }

    private double gauge(String name, String... tags) {
        return this.registry.get(name).tags(tags).gauge().value();
    }

    private double counter(String name, String... tags) {
        return this.registry.get(name).tags(tags).counter().count();
    }
}
