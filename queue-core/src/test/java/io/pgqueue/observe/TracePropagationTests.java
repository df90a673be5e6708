package io.pgqueue.observe;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelBaggageManager;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.pgqueue.JobSnapshot;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueDefaults;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskHandler;
import io.pgqueue.testing.TestQueue;
import io.pgqueue.testing.TestWorkers;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With a real tracing bridge (OpenTelemetry, W3C propagation), the span of a job's execution
 * belongs to the trace of the request that enqueued it.
 */
class TracePropagationTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass();

    @RegisterExtension
    final TestWorkers nodes = TestWorkers.on(queue);

    @Test
    void theExecutionSpanContinuesTheEnqueuersTrace() throws Exception {
        OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().build())
            .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
            .build();
        io.opentelemetry.api.trace.Tracer otel = sdk.getTracer("pgqueue-test");
        OtelCurrentTraceContext current = new OtelCurrentTraceContext();
        OtelTracer tracer = new OtelTracer(otel, current, event -> {
        }, new OtelBaggageManager(current, List.of(), List.of()));
        OtelPropagator propagator = new OtelPropagator(sdk.getPropagators(), otel);
        ObservationRegistry observations = ObservationRegistry.create();
        observations.observationConfig().observationHandler(new ObservationHandler.FirstMatchingCompositeObservationHandler(
                new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
                new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
                new DefaultTracingObservationHandler(tracer)));
        QueueTelemetry telemetry = new QueueTelemetry(QueueEvents.NONE, observations);

        CompletableFuture<String[]> seenByHandler = new CompletableFuture<>();
        TaskHandler<String> handler = (payload, context) -> {
            Span span = tracer.currentSpan();
            seenByHandler.complete(new String[] { span.context().traceId(), span.context().parentId() });
        };
        WorkerTask task = WorkerTask.of(TaskDefinition.builder("traced").build(), handler, String.class, 1,
                Duration.ofMinutes(1), QueueDefaults.POOL);
        QueueClient client = nodes.client(telemetry, task);

        // The "request" that enqueues.
        Observation request = Observation.start("http.server.requests", observations);
        String requestTraceId;
        long jobId;
        try (Observation.Scope scope = request.openScope()) {
            requestTraceId = tracer.currentSpan().context().traceId();
            jobId = client.enqueue("traced", "hello").jobId();
        }
        finally {
            request.stop();
        }
        JobSnapshot stored = client.find(jobId).orElseThrow();
        assertThat(stored.headers()).contains("traceparent").contains(requestTraceId);

        nodes.start(TestWorkers.settings("traced-node").build(), telemetry, task);

        String[] seen = seenByHandler.get(30, TimeUnit.SECONDS);
        assertThat(seen[0]).isEqualTo(requestTraceId);
        assertThat(seen[1]).as("the execution span has a parent (the enqueue span)").isNotNull();
    }
}
