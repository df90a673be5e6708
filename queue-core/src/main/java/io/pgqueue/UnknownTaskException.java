package io.pgqueue;

import java.util.Collection;

/**
 * Thrown when a job names a task type that no {@link TaskDefinition} declares. Nothing was written.
 */
public class UnknownTaskException extends InvalidJobException {

    private static final long serialVersionUID = 1L;

    private final String task;

    /**
     * Creates an exception.
     * @param task the unknown task name
     * @param known the task names that are declared
     */
    public UnknownTaskException(String task, Collection<String> known) {
        super("Unknown task '" + task + "'; declared tasks are " + known.stream().sorted().toList()
                + ". Declare it with a @QueueTask handler or under pgqueue.tasks.<name>.");
        this.task = task;
    }

    /** @return the unknown task name */
    public String getTask() {
        return this.task;
    }
}
