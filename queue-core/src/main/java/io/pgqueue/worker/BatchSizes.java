package io.pgqueue.worker;

import io.pgqueue.InvalidSettingException;
import io.pgqueue.QueueDefaults;

/**
 * The most rows one statement of the worker runtime handles, by what the statement does. Larger
 * batches mean fewer round trips and longer statements (and longer-held row locks); defaults come
 * from {@link QueueDefaults}.
 *
 * @param claim the most jobs of one task one claim takes (a task's free capacity — concurrency plus
 * prefetch — is usually smaller)
 * @param heartbeat the most leases one heartbeat statement renews
 * @param write the most starts or outcomes one completer statement writes
 * @param maintenance the most expired leases one rescue transaction returns and the most finished
 * jobs one retention statement deletes
 */
public record BatchSizes(int claim, int heartbeat, int write, int maintenance) {

    /**
     * Validates the sizes.
     */
    public BatchSizes {
        positive(claim, "batch.claim");
        positive(heartbeat, "batch.heartbeat");
        positive(write, "batch.write");
        positive(maintenance, "batch.maintenance");
    }

    /**
     * Returns the default sizes.
     * @return the defaults
     */
    public static BatchSizes defaults() {
        return new BatchSizes(QueueDefaults.CLAIM_BATCH_SIZE, QueueDefaults.HEARTBEAT_BATCH_SIZE,
                QueueDefaults.WRITE_BATCH_SIZE, QueueDefaults.MAINTENANCE_BATCH_SIZE);
    }

    private static void positive(int size, String setting) {
        InvalidSettingException.require(size > 0, setting, size, "must be positive");
    }
}
