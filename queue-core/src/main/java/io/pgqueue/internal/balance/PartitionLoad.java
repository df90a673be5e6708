package io.pgqueue.internal.balance;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The jobs this node enqueued per partition since the counts were last taken: the partitions'
 * weights, counted where they cost nothing (one atomic increment per job) and added up over the
 * nodes on the main shard.
 */
public final class PartitionLoad {

    private final AtomicLongArray counts;

    /**
     * @param partitions the installation's partition count
     */
    public PartitionLoad(int partitions) {
        this.counts = new AtomicLongArray(partitions);
    }

    /**
     * Counts a job.
     * @param partition its partition
     */
    public void add(int partition) {
        this.counts.incrementAndGet(partition);
    }

    /**
     * Takes the counts, leaving zeros.
     * @return jobs per partition, partitions without jobs left out
     */
    public Map<Integer, Long> take() {
        Map<Integer, Long> taken = new HashMap<>();
        for (int p = 0; p < this.counts.length(); p++) {
            if (this.counts.get(p) != 0) {
                long jobs = this.counts.getAndSet(p, 0);
                if (jobs != 0) {
                    taken.put(p, jobs);
                }
            }
        }
        return taken;
    }

    /**
     * Gives counts back that could not be recorded, so that the next attempt records them.
     * @param counts jobs per partition
     */
    public void giveBack(Map<Integer, Long> counts) {
        counts.forEach((partition, jobs) -> this.counts.addAndGet(partition, jobs));
    }
}
