package io.pgqueue.message;

/**
 * One entry of a batch call: an id the caller chooses, unique in the batch, and what to do.
 *
 * @param <T> what the entry carries
 * @param id the entry's id, 1 to 80 letters, digits, '-' or '_'
 * @param value what the entry carries
 */
public record BatchEntry<T>(String id, T value) {

    /**
     * Checks the entry ids of a batch: 1 to 10 entries, each id 1 to 80 letters, digits, '-' or
     * '_', no id twice.
     * @param ids the ids
     * @throws MessageQueueException when they are not valid
     */
    public static void checkIds(java.util.Collection<String> ids) {
        MessageValidation.batch(ids);
    }
}
