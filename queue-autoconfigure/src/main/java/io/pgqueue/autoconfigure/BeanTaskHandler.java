package io.pgqueue.autoconfigure;

import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import org.springframework.beans.factory.BeanFactory;

/**
 * A {@code @QueueTask} bean as a task's handler, looked up by name when the workers start rather
 * than when the tasks are discovered, so that discovery creates no bean and handlers may inject
 * the queue themselves.
 */
final class BeanTaskHandler implements TaskHandler<Object> {

    private final BeanFactory beans;

    private final String beanName;

    private volatile TaskHandler<Object> handler;

    BeanTaskHandler(BeanFactory beans, String beanName) {
        this.beans = beans;
        this.beanName = beanName;
    }

    String beanName() {
        return this.beanName;
    }

    /** Looks the bean up, creating it if it does not exist yet. */
    @SuppressWarnings("unchecked")
    BeanTaskHandler resolve() {
        if (this.handler == null) {
            this.handler = this.beans.getBean(this.beanName, TaskHandler.class);
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
