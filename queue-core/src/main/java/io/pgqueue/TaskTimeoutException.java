package io.pgqueue;

import java.time.Duration;

/**
 * Recorded as the failure of an attempt whose handler ran past the task's timeout. The handler
 * thread was interrupted; the attempt is retried per the task's retry policy.
 */
public class TaskTimeoutException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     * @param task the task name
     * @param timeout the task's timeout
     */
    public TaskTimeoutException(String task, Duration timeout) {
        super("Task '" + task + "' ran longer than its timeout of " + timeout);
    }
}
