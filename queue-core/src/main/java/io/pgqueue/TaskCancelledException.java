package io.pgqueue;

/**
 * Thrown by a handler that stops because {@link TaskContext#isCancellationRequested()}. When
 * cancellation was requested for the job, it ends CANCELLED; otherwise the attempt counts as failed.
 */
public class TaskCancelledException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     * @param message why the handler stopped
     */
    public TaskCancelledException(String message) {
        super(message);
    }
}
