package io.pgqueue;

/**
 * The work of a durable step that returns nothing ({@link TaskContext#step(String, StepAction)}).
 */
@FunctionalInterface
public interface StepAction {

    /**
     * Does the step's work.
     * @throws Exception if the step fails: it is tried again by its {@link StepRetry}, then the attempt fails
     */
    void run() throws Exception;
}
