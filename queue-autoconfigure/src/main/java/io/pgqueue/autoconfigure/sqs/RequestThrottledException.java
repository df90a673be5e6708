package io.pgqueue.autoconfigure.sqs;

import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;

/**
 * A call over a request quota: answered with {@code RequestThrottled} and a {@code Retry-After}
 * header giving the seconds until the quota has a call again.
 */
final class RequestThrottledException extends MessageQueueException {

    private static final long serialVersionUID = 1L;

    private final long retryAfterSeconds;

    RequestThrottledException(String message, long retryAfterSeconds) {
        super(MessageQueueError.REQUEST_THROTTLED, message);
        this.retryAfterSeconds = retryAfterSeconds;
    }

    long retryAfterSeconds() {
        return this.retryAfterSeconds;
    }
}
