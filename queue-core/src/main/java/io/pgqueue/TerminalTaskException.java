package io.pgqueue;

/**
 * Thrown by a handler to fail its job at once, without further attempts. Tasks may also declare
 * their own exception types as terminal (see {@link TaskDefinition.Builder#terminalExceptions}).
 */
public class TerminalTaskException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     * @param message why the job cannot succeed
     */
    public TerminalTaskException(String message) {
        super(message);
    }

    /**
     * Creates an exception with a cause.
     * @param message why the job cannot succeed
     * @param cause the underlying failure
     */
    public TerminalTaskException(String message, Throwable cause) {
        super(message, cause);
    }
}
