package io.pgqueue.message;

import java.time.Instant;

/**
 * A message as an operator sees it without receiving it ({@link MessageQueues#peek}): nothing about
 * the message changes, no receipt handle is issued and its receive count stays.
 *
 * @param messageId its message id
 * @param body its body
 * @param attributes its message attributes as JSON, or {@code null} for none
 * @param sentAt when it was sent
 * @param visibleAt when it is (or was) visible: in the future while it is delayed or in flight
 * @param receiveCount how often it was received
 * @param groupId its message group, or {@code null}
 * @param deduplicationId its deduplication id, or {@code null}
 */
public record PeekedMessage(String messageId, String body, String attributes, Instant sentAt, Instant visibleAt,
        int receiveCount, String groupId, String deduplicationId) {

    /**
     * @param now the time to judge by
     * @return {@code visible}, {@code in flight} (received, its visibility timeout running) or {@code delayed}
     */
    public String state(Instant now) {
        if (!this.visibleAt.isAfter(now)) {
            return "visible";
        }
        return this.receiveCount > 0 ? "in flight" : "delayed";
    }
}
