package io.pgqueue.autoconfigure.sqs;

import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;

/**
 * A request the SQS endpoint cannot take as sent: malformed, unknown, or missing a parameter.
 */
final class SqsRequestException extends MessageQueueException {

    private static final long serialVersionUID = 1L;

    SqsRequestException(MessageQueueError error, String message) {
        super(error, message);
    }
}
