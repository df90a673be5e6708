package io.pgqueue.observe;

import java.time.Duration;

/**
 * The queue's shared statistics, read once per interval and cached: what metrics, health and the
 * endpoint read instead of querying the database themselves. The nodes of an installation share one
 * count (see the {@code pgqueue.stats.interval} setting); {@code PgQueue.stats()} hands it out.
 */
public interface QueueStatistics {

    /** @return the latest statistics (possibly with the error of the last attempt), {@link QueueStats#NONE} before the first read */
    QueueStats latest();

    /**
     * Counts now (waiting for a node that is counting) and caches the result; operators' "refresh".
     * @return the new statistics
     */
    QueueStats refresh();

    /**
     * The current wait between two reads: the configured interval, or longer while counting takes
     * long (twenty times the last count's duration).
     * @return the current polling interval
     */
    Duration interval();
}
