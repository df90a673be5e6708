package io.pgqueue.internal.shard;

import io.pgqueue.RateLimit;
import io.pgqueue.TaskDefinition;
import io.pgqueue.shard.ShardException;

/**
 * The share of a task's global limits one shard enforces. Each database counts and rate-limits only
 * its own jobs, so on a sharded installation every shard claims against its share of the global
 * concurrency and of the rate's permits and burst: the shares add up to the setting, and the
 * installation never runs more than it at once nor starts more per period (after an idle spell, a
 * burst below the shard count lets one job per shard start at once). The cost: a shard with
 * nothing to do does not lend its share to a busy one. Shares follow the shards' registered
 * numbers, so every node gives each shard the same share.
 *
 * @param index the shard's position among the installation's shards, by number
 * @param count how many shards the installation has
 */
public record LimitShare(int index, int count) {

    /** The one shard of an unsharded queue: the whole limit. */
    public static final LimitShare WHOLE = new LimitShare(0, 1);

    /**
     * @param concurrency a global concurrency, 0 for none
     * @return this shard's share of it, 0 for none
     */
    public int concurrency(int concurrency) {
        return concurrency == 0 ? 0 : of(concurrency);
    }

    /**
     * @param rate a rate limit, or {@code null}
     * @return this shard's share of its permits and burst over the same period, or {@code null}
     */
    public RateLimit rate(RateLimit rate) {
        if (rate == null || this.count == 1) {
            return rate;
        }
        int permits = of(rate.permits());
        // A shard's bucket holds a permit at least: with a burst below the shard count, one job per shard
        // may start at once after an idle spell.
        return new RateLimit(permits, rate.period(), Math.max(1, Math.min(permits, of(rate.burst()))));
    }

    /**
     * Checks that a task's global limits can be shared by the shards: every shard needs at least one
     * of each, or its jobs could never start.
     * @param task the task
     * @param shards how many shards the installation has
     * @throws ShardException if a limit is below the shard count, saying what to set
     */
    public static void requireShareable(TaskDefinition task, int shards) {
        if (shards < 2) {
            return;
        }
        int concurrency = task.globalConcurrency();
        if (concurrency > 0 && concurrency < shards) {
            throw new ShardException(tooSmall(task, "global-concurrency " + concurrency, shards)
                    + "set pgqueue.tasks." + task.name() + ".global-concurrency (or @QueueTask(globalConcurrency)) to "
                    + shards + " or more, or remove it");
        }
        RateLimit rate = task.rateLimit();
        if (rate != null && rate.permits() < shards) {
            throw new ShardException(tooSmall(task, "rate of " + rate.permits() + " per " + rate.period(), shards)
                    + "give pgqueue.tasks." + task.name() + ".rate (or @QueueTask(rate)) at least " + shards
                    + " permits per period (a longer period keeps the rate: 1/1s is 60/1m), or remove it");
        }
    }

    private static String tooSmall(TaskDefinition task, String limit, int shards) {
        return "Task '" + task.name() + "' has a " + limit + " on " + shards + " shards: each shard enforces a share of a "
                + "global limit, and a limit below the number of shards would leave a shard none; ";
    }

    /** Total / count, the remainder one each to the first shards. */
    private int of(int total) {
        return total / this.count + (this.index < total % this.count ? 1 : 0);
    }
}
