package io.pgqueue;

/**
 * The work of a durable step that returns a value ({@link TaskContext#step(String, Class, StepBody)}).
 *
 * @param <T> the value's type
 */
@FunctionalInterface
public interface StepBody<T> {

    /**
     * Does the step's work.
     * @return the step's value, recorded as JSON; may be {@code null}
     * @throws Exception if the step fails: it is tried again by its {@link StepRetry}, then the attempt fails
     */
    T run() throws Exception;
}
