package io.pgqueue.message;

/**
 * One entry of a batch call that failed while the others may have succeeded.
 *
 * @param id the entry's id, as the caller gave it
 * @param error why it failed
 * @param message what to fix
 */
public record BatchEntryFailure(String id, MessageQueueError error, String message) {
}
