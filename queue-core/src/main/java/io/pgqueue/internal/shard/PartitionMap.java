package io.pgqueue.internal.shard;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import io.pgqueue.internal.store.PartitionStore;
import io.pgqueue.shard.ShardException;

/**
 * The partition map as a node last read it: which shard holds each partition and whether it is
 * moving, with the map's version. Immutable; a node swaps in a new one when the version changes.
 * A stale map is harmless: a shard writes only jobs of the partitions it holds.
 */
public final class PartitionMap {

    private final long version;

    private final String[] shards;

    private final String[] targets;

    private PartitionMap(long version, String[] shards, String[] targets) {
        this.version = version;
        this.shards = shards;
        this.targets = targets;
    }

    /**
     * The map of an unsharded queue: every partition on one shard.
     * @param shard the shard
     * @param partitions the partition count
     * @return the map
     */
    static PartitionMap allOn(String shard, int partitions) {
        String[] shards = new String[partitions];
        Arrays.fill(shards, shard);
        return new PartitionMap(0, shards, new String[partitions]);
    }

    /**
     * A map as read from the coordinating shard.
     * @param rows the rows
     * @param partitions the partition count
     * @return the map
     * @throws ShardException if a partition is missing from the rows
     */
    static PartitionMap of(PartitionStore.MapRows rows, int partitions) {
        String[] shards = new String[partitions];
        String[] targets = new String[partitions];
        for (PartitionStore.MapEntry entry : rows.entries()) {
            if (entry.partition() < partitions) {
                shards[entry.partition()] = entry.shard();
                targets[entry.partition()] = entry.target();
            }
        }
        for (int p = 0; p < partitions; p++) {
            if (shards[p] == null) {
                throw new ShardException("The partition map has no shard for partition " + p + " of " + partitions);
            }
        }
        return new PartitionMap(rows.version(), shards, targets);
    }

    /** @return the map's version; 0 for an unsharded queue */
    public long version() {
        return this.version;
    }

    /** @return the number of partitions */
    public int partitions() {
        return this.shards.length;
    }

    /**
     * @param partition the partition
     * @return the shard that holds it
     */
    public String shardOf(int partition) {
        return this.shards[partition];
    }

    /**
     * @param partition the partition
     * @return whether it is moving to another shard
     */
    public boolean isMoving(int partition) {
        return this.targets[partition] != null;
    }

    /**
     * @param partition the partition
     * @return the shard it moves to, or {@code null} if it is not moving
     */
    public String targetOf(int partition) {
        return this.targets[partition];
    }

    /** @return the number of partitions each shard holds, by shard name */
    public Map<String, Integer> partitionsPerShard() {
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (String shard : this.shards) {
            counts.merge(shard, 1, Integer::sum);
        }
        return counts;
    }

    /** @return the moving partitions */
    public List<Integer> moving() {
        return IntStream.range(0, this.targets.length).filter(this::isMoving).boxed().toList();
    }
}
