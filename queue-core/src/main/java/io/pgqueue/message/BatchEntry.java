package io.pgqueue.message;

import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * One entry of a batch call: an id the caller chooses, unique in the batch, and what to do.
 *
 * @param <T> what the entry carries
 * @param id the entry's id, 1 to 80 letters, digits, '-' or '_'
 * @param value what the entry carries
 */
public record BatchEntry<T>(String id, T value) {

    /** Entries in one batch call at most. */
    public static final int MAX_ENTRIES = 10;

    private static final Pattern ID = Pattern.compile("[A-Za-z0-9_-]{1,80}");

    /**
     * Checks the entry ids of a batch: 1 to 10 entries, each id 1 to 80 letters, digits, '-' or
     * '_', no id twice.
     * @param ids the ids
     * @throws MessageQueueException when they are not valid
     */
    public static void checkIds(Collection<String> ids) {
        if (ids.isEmpty()) {
            throw new MessageQueueException(MessageQueueError.EMPTY_BATCH_REQUEST,
                    "There should be at least one entry in the request.");
        }
        if (ids.size() > MAX_ENTRIES) {
            throw new MessageQueueException(MessageQueueError.TOO_MANY_ENTRIES_IN_BATCH_REQUEST,
                    "Maximum number of entries per request are 10. You have sent " + ids.size() + ".");
        }
        Set<String> seen = new HashSet<>();
        for (String id : ids) {
            if (id == null || !ID.matcher(id).matches()) {
                throw new MessageQueueException(MessageQueueError.INVALID_BATCH_ENTRY_ID, "A batch entry id can only "
                        + "contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long: "
                        + id);
            }
            if (!seen.add(id)) {
                throw new MessageQueueException(MessageQueueError.BATCH_ENTRY_IDS_NOT_DISTINCT,
                        "Id " + id + " repeated.");
            }
        }
    }
}
