package io.pgqueue.message;

import java.util.List;
import java.util.Map;

/**
 * The outcome of a batch call: per entry id, the result of the entries that succeeded, and the
 * entries that failed.
 *
 * @param <T> the result of one entry
 * @param successful the results by entry id, in the order of the entries
 * @param failed the entries that failed
 */
public record BatchResult<T>(Map<String, T> successful, List<BatchEntryFailure> failed) {

    /**
     * Copies the lists.
     */
    public BatchResult {
        successful = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(successful));
        failed = List.copyOf(failed);
    }
}
