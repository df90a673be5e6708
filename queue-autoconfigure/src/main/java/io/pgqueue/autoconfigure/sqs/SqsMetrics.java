package io.pgqueue.autoconfigure.sqs;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * The SQS endpoint's meters, on this node: every call by action and answer, the size of the
 * messages sent to each queue, the receives waiting for messages, and those that overran their
 * wait (hung).
 */
final class SqsMetrics {

    /** Timer of calls, tags {@code action} (an SQS action, or {@code unknown}) and {@code code} ({@code OK} or the error code). */
    static final String REQUESTS = "pgqueue.sqs.requests";

    /** Distribution of the bodies of messages sent, in bytes, tag {@code queue}. */
    static final String MESSAGE_SIZE = "pgqueue.sqs.message.size";

    /** Gauge of receives waiting for messages (long polls) now. */
    static final String RECEIVES_WAITING = "pgqueue.sqs.receives.waiting";

    /** Counter of waiting receives not answered within their longest wait: answered with an error instead. */
    static final String RECEIVES_HUNG = "pgqueue.sqs.receives.hung";

    private final MeterRegistry registry;

    private final AtomicInteger waiting = new AtomicInteger();

    /** The meters by action and code, and by queue: registered once, not built again for every call. */
    private final ConcurrentMap<String, Timer> requests = new ConcurrentHashMap<>();

    private final ConcurrentMap<String, DistributionSummary> sizes = new ConcurrentHashMap<>();

    SqsMetrics(MeterRegistry registry) {
        this.registry = registry;
        Gauge.builder(RECEIVES_WAITING, this.waiting, AtomicInteger::get)
            .description("Receives waiting for messages on this node")
            .register(registry);
    }

    /** Records a call's answer and how long it took. */
    void answered(String action, String code, long startedNanos) {
        String known = action != null && SqsActions.ACTIONS.contains(action) ? action : "unknown";
        this.requests.computeIfAbsent(known + " " + code, key -> Timer.builder(REQUESTS)
            .description("Calls of the SQS API on this node")
            .tag("action", known)
            .tag("code", code)
            .register(this.registry))
            .record(System.nanoTime() - startedNanos, TimeUnit.NANOSECONDS);
    }

    void sent(String queue, int bodyBytes) {
        this.sizes.computeIfAbsent(queue, key -> DistributionSummary.builder(MESSAGE_SIZE)
            .description("Sizes of the message bodies sent")
            .baseUnit("bytes")
            .tag("queue", queue)
            .register(this.registry))
            .record(bodyBytes);
    }

    void waitStarted() {
        this.waiting.incrementAndGet();
    }

    void waitEnded() {
        this.waiting.decrementAndGet();
    }

    void hung() {
        Counter.builder(RECEIVES_HUNG)
            .description("Waiting receives not answered within their longest wait")
            .register(this.registry)
            .increment();
    }
}
