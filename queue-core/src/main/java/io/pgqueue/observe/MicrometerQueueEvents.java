package io.pgqueue.observe;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.pgqueue.AttemptResult;
import io.pgqueue.EnqueueOutcome;
import io.pgqueue.JobState;

import static io.pgqueue.observe.QueueMeterNames.TAG_OUTCOME;
import static io.pgqueue.observe.QueueMeterNames.TAG_POOL;
import static io.pgqueue.observe.QueueMeterNames.TAG_STATE;
import static io.pgqueue.observe.QueueMeterNames.TAG_TASK;

/**
 * Turns queue events into Micrometer counters and timers (names in {@link QueueMeterNames}).
 * Meters are looked up once per name and tags and then held: a registry lookup per job event
 * (builder, tags, id, map) showed up in the drain's CPU profile.
 */
public final class MicrometerQueueEvents implements QueueEvents {

    private final MeterRegistry registry;

    private final ConcurrentMap<MeterKey, Meter> meters = new ConcurrentHashMap<>();

    private record MeterKey(String name, List<String> tags) {
    }

    /**
     * Creates the listener.
     * @param registry the registry to publish to
     */
    public MicrometerQueueEvents(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void enqueued(String task, EnqueueOutcome outcome) {
        String name = outcome.name().toLowerCase(Locale.ROOT);
        counter(QueueMeterNames.ENQUEUED, TAG_TASK, task, TAG_OUTCOME, name).increment();
        if (outcome != EnqueueOutcome.CREATED && outcome != EnqueueOutcome.RELAYED) {
            counter(QueueMeterNames.DEDUPLICATED, TAG_TASK, task, TAG_OUTCOME, name).increment();
        }
    }

    @Override
    public void workflowStarted(String name) {
        counter(QueueMeterNames.WORKFLOWS_STARTED, QueueMeterNames.TAG_WORKFLOW, name).increment();
    }

    @Override
    public void claimed(String pool, String task, int count) {
        counter(QueueMeterNames.CLAIMED, TAG_TASK, task, TAG_POOL, pool).increment(count);
    }

    @Override
    public void claimRan(String pool, int batchSize, Duration latency) {
        meter(() -> DistributionSummary.builder(QueueMeterNames.CLAIM_BATCH)
            .description("Jobs per claim statement")
            .tags(TAG_POOL, pool)
            .register(this.registry), QueueMeterNames.CLAIM_BATCH, pool)
            .record(batchSize);
        meter(() -> Timer.builder(QueueMeterNames.CLAIM_LATENCY)
            .description("Latency of a claim statement")
            .tags(TAG_POOL, pool)
            .register(this.registry), QueueMeterNames.CLAIM_LATENCY, pool)
            .record(latency);
    }

    @Override
    public void started(String task, Duration queueWait, Duration startLatency, boolean deadlineMissed) {
        meter(() -> Timer.builder(QueueMeterNames.QUEUE_WAIT)
            .description("Time from a job becoming due to its handler starting")
            .tags(TAG_TASK, task)
            .register(this.registry), QueueMeterNames.QUEUE_WAIT, task)
            .record(nonNegative(queueWait));
        if (startLatency != null) {
            meter(() -> Timer.builder(QueueMeterNames.START_LATENCY)
                .description("Time from enqueue to handler start, for jobs due at once")
                .tags(TAG_TASK, task)
                .publishPercentiles(0.5, 0.99)
                .register(this.registry), QueueMeterNames.START_LATENCY, task)
                .record(nonNegative(startLatency));
        }
        if (deadlineMissed) {
            counter(QueueMeterNames.DEADLINE_MISSED, TAG_TASK, task).increment();
        }
    }

    @Override
    public void executed(String task, AttemptResult outcome, Duration duration) {
        meter(() -> Timer.builder(QueueMeterNames.EXECUTION)
            .description("Handler execution time")
            .tags(TAG_TASK, task, TAG_OUTCOME, outcome.name().toLowerCase(Locale.ROOT))
            .register(this.registry), QueueMeterNames.EXECUTION, task, outcome.name())
            .record(duration);
    }

    @Override
    public void recorded(String task, JobState state) {
        switch (state) {
            case COMPLETED -> counter(QueueMeterNames.COMPLETED, TAG_TASK, task).increment();
            case FAILED -> counter(QueueMeterNames.FAILED, TAG_TASK, task).increment();
            case CANCELLED -> counter(QueueMeterNames.CANCELLED, TAG_TASK, task).increment();
            case READY -> counter(QueueMeterNames.RETRIED, TAG_TASK, task).increment();
            default -> {
            }
        }
    }

    @Override
    public void leaseLost(String task) {
        counter(QueueMeterNames.LEASES_LOST, TAG_TASK, task).increment();
    }

    @Override
    public void rescued(String task, JobState state) {
        counter(QueueMeterNames.RESCUED, TAG_TASK, task, TAG_STATE, state.name().toLowerCase(Locale.ROOT)).increment();
    }

    @Override
    public void cancelled(String task) {
        counter(QueueMeterNames.CANCELLED, TAG_TASK, task).increment();
    }

    private Counter counter(String name, String... tags) {
        return meter(() -> this.registry.counter(name, tags), name, tags);
    }

    /** The meter of this name and these distinguishing values, registered on first use. */
    @SuppressWarnings("unchecked")
    private <M extends Meter> M meter(Supplier<M> register, String name, String... values) {
        return (M) this.meters.computeIfAbsent(new MeterKey(name, Arrays.asList(values)), key -> register.get());
    }

    private static Duration nonNegative(Duration duration) {
        return duration.isNegative() ? Duration.ZERO : duration;
    }
}
