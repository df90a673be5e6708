package io.pgqueue;

/**
 * Base class of the exceptions the queue throws.
 */
public class QueueException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     * @param message what went wrong and, where possible, what to do about it
     */
    public QueueException(String message) {
        super(message);
    }

    /**
     * Creates an exception with a cause.
     * @param message what went wrong and, where possible, what to do about it
     * @param cause the underlying failure
     */
    public QueueException(String message, Throwable cause) {
        super(message, cause);
    }
}
