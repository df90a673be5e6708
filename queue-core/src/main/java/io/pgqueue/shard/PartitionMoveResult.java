package io.pgqueue.shard;

import java.time.Duration;

/**
 * What a move of a partition to another shard did ({@code QueueAdmin.movePartition}).
 * @param partition the partition
 * @param source the shard it left
 * @param target the shard it is on now
 * @param jobsMoved the READY jobs that moved
 * @param jobsLeft the claimed jobs left to finish on the source after the drain timeout
 * @param messagesMoved the message-queue messages that moved (in flight or not)
 * @param duration how long the move took
 */
public record PartitionMoveResult(int partition, String source, String target, long jobsMoved, long jobsLeft,
        long messagesMoved, Duration duration) {
}
