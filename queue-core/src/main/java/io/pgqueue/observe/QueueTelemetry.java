package io.pgqueue.observe;

import java.util.Objects;

import io.micrometer.observation.ObservationRegistry;

/**
 * Where the queue reports to: events (metrics) and observations (tracing).
 *
 * @param events the event listener
 * @param observations the observation registry; a job's execution continues the trace of its enqueue
 */
public record QueueTelemetry(QueueEvents events, ObservationRegistry observations) {

    /** Reports nowhere. */
    public static final QueueTelemetry NONE = new QueueTelemetry(QueueEvents.NONE, ObservationRegistry.NOOP);

    /**
     * Validates the components.
     */
    public QueueTelemetry {
        Objects.requireNonNull(events, "events");
        Objects.requireNonNull(observations, "observations");
    }
}
