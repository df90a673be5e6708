package io.pgqueue.observe;

import java.util.HashMap;
import java.util.Map;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.ReceiverContext;
import io.micrometer.observation.transport.SenderContext;

/**
 * The two observations of the queue. Enqueue is a <em>sender</em>: a tracing bridge writes the
 * current trace context (W3C {@code traceparent}) into the carrier, which the client stores in the
 * job's headers. Execution is a <em>receiver</em>: the bridge reads the context back from the
 * headers, so the job's span continues the trace of the request that enqueued it.
 */
public final class QueueObservations {

    private QueueObservations() {
    }

    /**
     * Creates the observation of an enqueue call; after {@code start()}, the carrier of its context
     * holds the headers to store with each job.
     * @param registry the registry
     * @param task the task, or "mixed" for a batch of several tasks
     * @return the observation, not started
     */
    public static Observation enqueue(ObservationRegistry registry, String task) {
        SenderContext<Map<String, String>> context = new SenderContext<>((carrier, key, value) -> {
            if (carrier != null) {
                carrier.put(key, value);
            }
        });
        context.setCarrier(new HashMap<>());
        context.setRemoteServiceName("pgqueue");
        return Observation.createNotStarted(QueueMeterNames.ENQUEUE_OBSERVATION, () -> context, registry)
            .contextualName("enqueue " + task)
            .lowCardinalityKeyValue(QueueMeterNames.TAG_TASK, task);
    }

    /**
     * Returns the headers the observation's tracing wrote into its carrier.
     * @param observation an enqueue observation
     * @return the propagated headers (empty without tracing)
     */
    @SuppressWarnings("unchecked")
    public static Map<String, String> propagated(Observation observation) {
        if (observation.getContext() instanceof SenderContext<?> sender && sender.getCarrier() instanceof Map<?, ?> carrier) {
            return (Map<String, String>) carrier;
        }
        return Map.of();
    }

    /**
     * Creates the observation of a job's execution, continuing the trace in its headers.
     * @param registry the registry
     * @param task the task
     * @param headers the job's headers
     * @return the observation, not started
     */
    public static Observation execute(ObservationRegistry registry, String task, Map<String, String> headers) {
        ReceiverContext<Map<String, String>> context = new ReceiverContext<>((carrier, key) -> carrier.get(key));
        context.setCarrier(headers);
        context.setRemoteServiceName("pgqueue");
        return Observation.createNotStarted(QueueMeterNames.EXECUTE_OBSERVATION, () -> context, registry)
            .contextualName("execute " + task)
            .lowCardinalityKeyValue(QueueMeterNames.TAG_TASK, task);
    }
}
