package io.pgqueue.message;

/**
 * A message sent (committed).
 *
 * @param messageId the message id; a FIFO message deduplicated within five minutes returns the id of
 * the message sent first
 * @param md5OfBody the MD5 of the body, hexadecimal, as clients check it
 * @param md5OfAttributes the MD5 of the message attributes in Amazon SQS's encoding, or {@code null}
 * without attributes
 * @param sequenceNumber the position of a FIFO message, or {@code null} on a standard queue
 */
public record SentMessage(String messageId, String md5OfBody, String md5OfAttributes, String sequenceNumber) {
}
