package io.pgqueue.message;

import io.pgqueue.QueueException;

/**
 * A message-queue call refused, and why: nothing of the call was written.
 */
public class MessageQueueException extends QueueException {

    private static final long serialVersionUID = 1L;

    private final MessageQueueError error;

    /**
     * Creates an exception.
     * @param error why the call was refused
     * @param message what to fix, for the caller
     */
    public MessageQueueException(MessageQueueError error, String message) {
        super(message);
        this.error = error;
    }

    /** @return why the call was refused */
    public MessageQueueError error() {
        return this.error;
    }

    public static MessageQueueException invalidParameter(String message) {
        return new MessageQueueException(MessageQueueError.INVALID_PARAMETER_VALUE, message);
    }

    static MessageQueueException invalidAttribute(String message) {
        return new MessageQueueException(MessageQueueError.INVALID_ATTRIBUTE_VALUE, message);
    }

    /**
     * @param name the queue's name
     * @return the error of a queue that does not exist
     */
    public static MessageQueueException noSuchQueue(String name) {
        return new MessageQueueException(MessageQueueError.QUEUE_DOES_NOT_EXIST,
                "The specified queue does not exist: " + name);
    }
}
