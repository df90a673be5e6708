package io.pgqueue.autoconfigure;

import java.time.Duration;

import io.pgqueue.ChunkHandler;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import io.pgqueue.worker.ChunkedTaskHandler;
import org.springframework.beans.factory.BeanFactory;

/**
 * A {@code @QueueTask} bean as a task's handler, looked up by name when the workers start rather
 * than when the tasks are discovered, so that discovery creates no bean and handlers may inject
 * the queue themselves. A {@link ChunkHandler} bean runs through a {@link ChunkedTaskHandler}.
 */
final class BeanTaskHandler implements TaskHandler<Object> {

    private final BeanFactory beans;

    private final String beanName;

    private final int chunkSize;

    private final Duration chunkLinger;

    private volatile TaskHandler<Object> handler;

    /**
     * @param beans where the bean is
     * @param beanName its name
     * @param chunkSize for a ChunkHandler bean, the most jobs per call (else unused)
     * @param chunkLinger for a ChunkHandler bean, how long a chunk gathers
     */
    BeanTaskHandler(BeanFactory beans, String beanName, int chunkSize, Duration chunkLinger) {
        this.beans = beans;
        this.beanName = beanName;
        this.chunkSize = chunkSize;
        this.chunkLinger = chunkLinger;
    }

    String beanName() {
        return this.beanName;
    }

    /** Looks the bean up, creating it if it does not exist yet. */
    @SuppressWarnings("unchecked")
    BeanTaskHandler resolve() {
        if (this.handler == null) {
            Object bean = this.beans.getBean(this.beanName);
            this.handler = bean instanceof ChunkHandler<?> chunk
                    ? new ChunkedTaskHandler<>((ChunkHandler<Object>) chunk, this.chunkSize, this.chunkLinger)
                    : (TaskHandler<Object>) bean;
        }
        return this;
    }

    @Override
    public void handle(Object payload, TaskContext context) throws Exception {
        resolve().handler.handle(payload, context);
    }

    @Override
    public String toString() {
        return "bean '" + this.beanName + "'";
    }
}
