package io.pgqueue.observe;

/**
 * The numbers of one task from the periodic aggregate query.
 *
 * @param ready due READY jobs
 * @param scheduled READY jobs not due yet
 * @param starting jobs claimed into a node's buffer
 * @param running jobs whose handler runs
 * @param failed FAILED jobs still retained
 * @param stuck STARTING/RUNNING jobs past their lease deadline, not rescued yet
 * @param lagSeconds seconds since the oldest due READY job became due; 0 when none is due
 * @param completedLastMinute jobs completed in the last minute (needs completed retention of at least a minute)
 * @param failedLastMinute jobs failed in the last minute
 * @param paused whether the task is paused
 */
public record TaskStats(long ready, long scheduled, long starting, long running, long failed, long stuck,
        double lagSeconds, long completedLastMinute, long failedLastMinute, boolean paused) {

    /** A task without jobs. */
    public static final TaskStats EMPTY = new TaskStats(0, 0, 0, 0, 0, 0, 0, 0, 0, false);

    /**
     * Adds another shard's numbers of the task: counts add up, the lag is the larger, a pause on
     * either counts.
     * @param other the other shard's numbers
     * @return the sum
     */
    public TaskStats plus(TaskStats other) {
        return new TaskStats(this.ready + other.ready, this.scheduled + other.scheduled, this.starting + other.starting,
                this.running + other.running, this.failed + other.failed, this.stuck + other.stuck,
                Math.max(this.lagSeconds, other.lagSeconds), this.completedLastMinute + other.completedLastMinute,
                this.failedLastMinute + other.failedLastMinute, this.paused || other.paused);
    }
}
