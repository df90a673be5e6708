package io.pgqueue.observe;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.pgqueue.message.MessageQueueCounts;
import io.pgqueue.message.MessageQueueEvents;

/**
 * The meters of message queues (names in {@link QueueMeterNames}, tag {@code queue}): this node's
 * sends, receives, deletes and delivery delays as counters and a timer, and every queue's counts
 * (visible, in flight, delayed, oldest age) as gauges over the latest periodic count, registered
 * when a queue first appears in it and removed when it is gone.
 */
public final class MessageQueueMeters implements MessageQueueEvents {

    private final MeterRegistry registry;

    private final ConcurrentMap<String, Meter> meters = new ConcurrentHashMap<>();

    private final ConcurrentMap<String, MessageQueueCounts> latest = new ConcurrentHashMap<>();

    /**
     * @param registry where the meters go
     */
    public MessageQueueMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void sent(String queue, int count) {
        counter(QueueMeterNames.MESSAGES_SENT, queue, null).increment(count);
    }

    @Override
    public void received(String queue, int count) {
        if (count > 0) {
            counter(QueueMeterNames.MESSAGES_RECEIVED, queue, null).increment(count);
        }
        counter(QueueMeterNames.MESSAGES_RECEIVES, queue, count > 0 ? "messages" : "empty").increment();
    }

    @Override
    public void firstReceived(String queue, Duration delay) {
        ((Timer) this.meters.computeIfAbsent(QueueMeterNames.MESSAGES_DELIVERY_DELAY + "|" + queue,
                key -> Timer.builder(QueueMeterNames.MESSAGES_DELIVERY_DELAY)
                    .description("From a message's send to its first receive")
                    .tag(QueueMeterNames.TAG_QUEUE, queue)
                    .publishPercentileHistogram()
                    .register(this.registry)))
            .record(delay.isNegative() ? Duration.ZERO : delay);
    }

    @Override
    public void deleted(String queue, int count) {
        if (count > 0) {
            counter(QueueMeterNames.MESSAGES_DELETED, queue, null).increment(count);
        }
    }

    @Override
    public void counted(Map<String, MessageQueueCounts> counts) {
        for (Map.Entry<String, MessageQueueCounts> entry : counts.entrySet()) {
            if (this.latest.put(entry.getKey(), entry.getValue()) == null) {
                gauges(entry.getKey());
            }
        }
        for (String gone : Set.copyOf(this.latest.keySet())) {
            if (!counts.containsKey(gone)) {
                this.latest.remove(gone);
                this.meters.entrySet().removeIf(meter -> {
                    boolean ofQueue = gone.equals(meter.getValue().getId().getTag(QueueMeterNames.TAG_QUEUE));
                    if (ofQueue) {
                        this.registry.remove(meter.getValue());
                    }
                    return ofQueue;
                });
            }
        }
    }

    private void gauges(String queue) {
        gauge(QueueMeterNames.MESSAGES_VISIBLE, queue, "Messages that can be received now", MessageQueueCounts::visible);
        gauge(QueueMeterNames.MESSAGES_IN_FLIGHT, queue, "Messages received and not yet deleted or visible again",
                MessageQueueCounts::inFlight);
        gauge(QueueMeterNames.MESSAGES_DELAYED, queue, "Messages whose delay has not passed", MessageQueueCounts::delayed);
        gauge(QueueMeterNames.MESSAGES_OLDEST_AGE, queue, "Age of the oldest message, seconds",
                counts -> counts.oldestAge().toMillis() / 1000.0);
    }

    private void gauge(String name, String queue, String description,
            java.util.function.ToDoubleFunction<MessageQueueCounts> value) {
        this.meters.computeIfAbsent(name + "|" + queue, key -> Gauge.builder(name, this.latest,
                latest -> {
                    MessageQueueCounts counts = latest.get(queue);
                    return counts == null ? Double.NaN : value.applyAsDouble(counts);
                })
            .description(description)
            .tag(QueueMeterNames.TAG_QUEUE, queue)
            .register(this.registry));
    }

    private Counter counter(String name, String queue, String outcome) {
        return (Counter) this.meters.computeIfAbsent(name + "|" + queue + "|" + outcome, key -> {
            Tags tags = Tags.of(QueueMeterNames.TAG_QUEUE, queue);
            if (outcome != null) {
                tags = tags.and(QueueMeterNames.TAG_OUTCOME, outcome);
            }
            return Counter.builder(name).tags(tags).register(this.registry);
        });
    }
}
