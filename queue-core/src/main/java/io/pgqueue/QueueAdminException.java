package io.pgqueue;

/**
 * Thrown by {@link QueueAdmin} when an operator's request cannot be carried out as asked: an
 * unknown task or job, or a job in a state the action does not apply to. Nothing was changed.
 */
public class QueueAdminException extends QueueException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     * @param message what is wrong with the request
     */
    public QueueAdminException(String message) {
        super(message);
    }
}
