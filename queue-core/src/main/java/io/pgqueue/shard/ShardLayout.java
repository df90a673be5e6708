package io.pgqueue.shard;

import java.util.List;

/**
 * Where the installation's partitions live, as the partition map read last says
 * ({@code QueueAdmin.shards()}); unsharded, the queue's database is the one shard and holds every
 * partition.
 *
 * @param sharded whether the installation has more than one shard
 * @param partitions the installation's partition count
 * @param mapVersion the version of the partition map read
 * @param shards every shard, in the order of their numbers
 * @param moving the partitions moving now
 */
public record ShardLayout(boolean sharded, int partitions, long mapVersion, List<Shard> shards, List<Move> moving) {

    /** Copies the lists. */
    public ShardLayout {
        shards = List.copyOf(shards);
        moving = List.copyOf(moving);
    }

    /** @return the shards' names, in the order of their numbers */
    public List<String> names() {
        return this.shards.stream().map(Shard::name).toList();
    }

    /**
     * One shard.
     *
     * @param name its name
     * @param number its number, which sets the range of the job ids it hands out
     * @param partitions how many partitions the map places on it
     */
    public record Shard(String name, int number, int partitions) {
    }

    /**
     * A partition on its way to another shard.
     *
     * @param partition the partition
     * @param from the shard that holds it until the move ends
     * @param to the shard it moves to
     */
    public record Move(int partition, String from, String to) {
    }
}
