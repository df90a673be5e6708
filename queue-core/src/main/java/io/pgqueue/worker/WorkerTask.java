package io.pgqueue.worker;

import java.lang.reflect.Type;
import java.time.Duration;
import java.util.Objects;

import io.pgqueue.InvalidSettingException;
import io.pgqueue.QueueDefaults;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskHandler;

/**
 * A task type as a worker pool runs it: its definition, its handler, the payload type the handler
 * takes, and how many jobs may run at once, for how long, in which pool.
 *
 * @param definition the task definition
 * @param handler the handler
 * @param payloadType the handler's payload type, read from the job's JSON
 * @param concurrency the maximum number of jobs of this task running at once on the node
 * @param timeout how long one attempt may run before it is interrupted and fails
 * @param pool the name of the pool that runs the task
 */
public record WorkerTask(TaskDefinition definition, TaskHandler<Object> handler, Type payloadType, int concurrency,
        Duration timeout, String pool) {

    /**
     * Validates the settings.
     */
    public WorkerTask {
        Objects.requireNonNull(definition, "definition");
        Objects.requireNonNull(handler, "handler");
        Objects.requireNonNull(payloadType, "payloadType");
        try {
            InvalidSettingException.require(concurrency >= 1, "concurrency", concurrency, "must be at least 1");
            InvalidSettingException.positive(timeout, "timeout");
            InvalidSettingException.require(pool != null && !pool.isBlank(), "pool", pool, "must not be blank");
        }
        catch (InvalidSettingException ex) {
            throw ex.within("tasks." + definition.name());
        }
    }

    /**
     * Describes a task with a typed handler, so callers need no unchecked cast.
     * @param <P> the payload type
     * @param definition the task definition
     * @param handler the handler
     * @param payloadType the handler's payload type
     * @param concurrency the maximum number of jobs of this task running at once on the node
     * @param timeout how long one attempt may run before it is interrupted and fails
     * @param pool the name of the pool that runs the task
     * @return the task
     */
    @SuppressWarnings("unchecked")
    public static <P> WorkerTask of(TaskDefinition definition, TaskHandler<P> handler, Class<P> payloadType,
            int concurrency, Duration timeout, String pool) {
        return new WorkerTask(definition, (TaskHandler<Object>) handler, payloadType, concurrency, timeout, pool);
    }

    /**
     * Describes a task with the default definition, concurrency ({@link QueueDefaults#CONCURRENCY}),
     * timeout ({@link QueueDefaults#TASK_TIMEOUT}) and pool ({@link QueueDefaults#POOL}).
     * @param <P> the payload type
     * @param name the task name
     * @param handler the handler
     * @param payloadType the handler's payload type
     * @return the task
     */
    public static <P> WorkerTask of(String name, TaskHandler<P> handler, Class<P> payloadType) {
        return of(TaskDefinition.builder(name).build(), handler, payloadType, QueueDefaults.CONCURRENCY,
                QueueDefaults.TASK_TIMEOUT, QueueDefaults.POOL);
    }

    /** @return the task name */
    public String name() {
        return this.definition.name();
    }
}
