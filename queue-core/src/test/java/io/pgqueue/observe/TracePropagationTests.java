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
import io.pgqueue.QueueConfig;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskHandler;
import io.pgqueue.TaskRegistry;
import io.pgqueue.store.JobStore;
import io.pgqueue.store.QueueSchema;
import io.pgqueue.testing.TestDatabase;
import io.pgqueue.worker.QueueWorkers;
import io.pgqueue.worker.WorkerExecutors;
import io.pgqueue.worker.WorkerSettings;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With a real tracing bridge (OpenTelemetry, W3C propagation), the span of a job's execution
 * belongs to the trace of the request that enqueued it.
 */
class TracePropagationTests {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.perClass();

    @Test
    void theExecutionSpanContinuesTheEnqueuersTrace() throws Exception {
        QueueSchema.migrate(db.dataSource(), "pgqueue");
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
        TaskDefinition definition = TaskDefinition.builder("traced").build();
        @SuppressWarnings("unchecked")
        WorkerTask task = new WorkerTask(definition, (TaskHandler<Object>) (TaskHandler<?>) handler, String.class, 1,
                Duration.ofMinutes(1), "default");
        JsonMapper mapper = JsonMapper.builder().build();
        QueueConfig config = QueueConfig.defaults();
        QueueClient client = new QueueClient(new JobStore(db.dataSource(), config), config, TaskRegistry.of(definition),
                mapper, telemetry);

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

        QueueWorkers workers = new QueueWorkers(db.dataSource(), config, WorkerSettings.builder("traced-node").build(),
                List.of(task), mapper, WorkerExecutors.platformThreads(), telemetry);
        workers.start();
        try {
            String[] seen = seenByHandler.get(30, TimeUnit.SECONDS);
            assertThat(seen[0]).isEqualTo(requestTraceId);
            assertThat(seen[1]).as("the execution span has a parent (the enqueue span)").isNotNull();
        }
        finally {
            workers.stop();
        }
    }
}
