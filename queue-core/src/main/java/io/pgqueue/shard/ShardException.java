package io.pgqueue.shard;

import io.pgqueue.QueueException;

/**
 * The shards of an installation cannot be used as configured: a database belongs to another
 * installation, the partition map names a shard that is not configured, a partition cannot be
 * moved. The message says what to fix.
 */
public class ShardException extends QueueException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     * @param message what is wrong and what to do about it
     */
    public ShardException(String message) {
        super(message);
    }
}
