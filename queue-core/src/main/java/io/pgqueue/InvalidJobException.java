package io.pgqueue;

/**
 * Thrown at the call site when a job cannot be enqueued as given: blank or unknown task name, a
 * payload that cannot be serialized or is too large, invalid options. Nothing was written.
 */
public class InvalidJobException extends QueueException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     * @param message what is wrong with the job
     */
    public InvalidJobException(String message) {
        super(message);
    }

    /**
     * Creates an exception with a cause.
     * @param message what is wrong with the job
     * @param cause the underlying failure, e.g. the serializer's exception
     */
    public InvalidJobException(String message, Throwable cause) {
        super(message, cause);
    }
}
