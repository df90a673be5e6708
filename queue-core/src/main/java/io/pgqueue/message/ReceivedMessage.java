package io.pgqueue.message;

import java.time.Instant;
import java.util.Map;

/**
 * A message received: invisible to other consumers until its visibility timeout ends; delete it
 * with its receipt handle once done.
 *
 * @param messageId the message id
 * @param receiptHandle the handle of this receive; it stops working when the message is received
 * again
 * @param body the body
 * @param md5OfBody the MD5 of the body, hexadecimal
 * @param attributes the message attributes
 * @param md5OfAttributes the MD5 of the message attributes, or {@code null} without attributes
 * @param sentAt when it was sent
 * @param receiveCount how often it was received, this time included
 * @param firstReceivedAt when it was received first
 * @param groupId the message group it was sent with (on a standard queue it ordered nothing), else {@code null}
 * @param deduplicationId the deduplication id (FIFO queues), else {@code null}
 * @param sequenceNumber the position in a FIFO queue, else {@code null}
 */
public record ReceivedMessage(String messageId, String receiptHandle, String body, String md5OfBody,
        Map<String, MessageAttributeValue> attributes, String md5OfAttributes, Instant sentAt, int receiveCount,
        Instant firstReceivedAt, String groupId, String deduplicationId, String sequenceNumber) {
}
