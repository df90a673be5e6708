package io.pgqueue.internal.store;

import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

import org.springframework.dao.TransientDataAccessException;

/**
 * A shard was asked to write jobs of partitions it does not hold ACTIVE: the writer's partition
 * map is stale, or a partition is moving. Nothing was written; the writer refreshes its map and
 * tries again.
 */
public final class PartitionNotHeldException extends TransientDataAccessException {

    private final SortedSet<Integer> partitions;

    /**
     * Creates the exception.
     * @param partitions the partitions the shard does not hold ACTIVE
     */
    public PartitionNotHeldException(Set<Integer> partitions) {
        super("The shard does not hold partitions " + new TreeSet<>(partitions) + " ACTIVE; nothing was written");
        this.partitions = new TreeSet<>(partitions);
    }

    /** @return the partitions the shard does not hold ACTIVE */
    public SortedSet<Integer> partitions() {
        return this.partitions;
    }
}
