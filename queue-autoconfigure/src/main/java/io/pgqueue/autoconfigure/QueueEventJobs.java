package io.pgqueue.autoconfigure;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.pgqueue.JobRequest;
import io.pgqueue.QueueClient;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.PayloadApplicationEvent;
import org.springframework.context.event.GenericApplicationListener;
import org.springframework.core.Ordered;
import org.springframework.core.ResolvableType;

/**
 * Turns application events into jobs: an object published with
 * {@code ApplicationEventPublisher.publishEvent(Object)} whose type a task lists in
 * {@code @QueueTask(events = ...)} is enqueued as a job of that task, with the event as its
 * payload, on the publisher's thread and so in its transaction when there is one (the queue's
 * {@code DataSource} being the application's): a rollback leaves no job, and a committed job is
 * in the database whatever happens to the process afterwards. It listens first, so that a job that
 * cannot be enqueued (a payload that cannot be written, say) fails the publisher before other
 * listeners act on the event.
 */
public final class QueueEventJobs implements GenericApplicationListener {

    private final Map<String, List<Class<?>>> events;

    private final ObjectProvider<QueueClient> client;

    /**
     * @param bindings the tasks and the event types each turns into jobs
     * @param client the client that enqueues, looked up on the first event
     */
    QueueEventJobs(QueueTaskBindings bindings, ObjectProvider<QueueClient> client) {
        this.events = bindings.eventTypes();
        this.client = client;
    }

    @Override
    public boolean supportsEventType(ResolvableType eventType) {
        if (this.events.isEmpty()) {
            return false;
        }
        Class<?> type = eventType.toClass();
        if (PayloadApplicationEvent.class.isAssignableFrom(type)) {
            ResolvableType payload = eventType.as(PayloadApplicationEvent.class).getGeneric(0);
            // An unresolved payload type (a raw event) is decided by the payload itself.
            return payload.resolve() == null || payload.resolve() == Object.class || handles(payload.toClass());
        }
        return false;
    }

    @Override
    public void onApplicationEvent(ApplicationEvent event) {
        if (!(event instanceof PayloadApplicationEvent<?> published)) {
            return;
        }
        Object payload = published.getPayload();
        List<JobRequest> jobs = new ArrayList<>();
        this.events.forEach((task, types) -> {
            if (types.stream().anyMatch(type -> type.isInstance(payload))) {
                jobs.add(JobRequest.of(task, payload));
            }
        });
        if (!jobs.isEmpty()) {
            this.client.getObject().enqueueAll(jobs);
        }
    }

    private boolean handles(@Nullable Class<?> type) {
        return type != null && this.events.values().stream().flatMap(List::stream)
            .anyMatch(declared -> declared.isAssignableFrom(type) || type.isAssignableFrom(declared));
    }

    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }
}
