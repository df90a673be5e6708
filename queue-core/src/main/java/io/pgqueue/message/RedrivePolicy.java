package io.pgqueue.message;

/**
 * Where a queue's messages go when consumers keep failing them: a message received
 * {@code maxReceiveCount} times moves to the dead-letter queue when it would be received again.
 *
 * @param deadLetterQueue the name of the dead-letter queue, of the same type (standard or FIFO)
 * @param maxReceiveCount how many receives a message gets, 1 to 1,000
 */
public record RedrivePolicy(String deadLetterQueue, int maxReceiveCount) {

    /**
     * Checks the policy.
     */
    public RedrivePolicy {
        if (deadLetterQueue == null || deadLetterQueue.isEmpty()) {
            throw MessageQueueException.invalidAttribute("A redrive policy needs a dead-letter queue");
        }
        if (maxReceiveCount < 1 || maxReceiveCount > 1000) {
            throw MessageQueueException.invalidAttribute("maxReceiveCount must be 1 to 1000, not " + maxReceiveCount);
        }
    }
}
