package io.pgqueue.observe;

import java.util.Locale;

import io.pgqueue.InvalidSettingException;
import io.pgqueue.RateLimit;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskGroups;

/**
 * Whether a task's due jobs wait on its own limits across nodes rather than on the workers, read
 * from the aggregate statistics: its global concurrency is taken (as many jobs claimed as it
 * allows); its groups are sequences or have a concurrency per group and some of its jobs run (the
 * aggregate cannot tell which groups wait, so due jobs are taken to wait on theirs); or its rate
 * limit holds back a due backlog larger than the burst it lets start at once. Health does not call
 * such a task lagging while its lag is what the limit explains.
 *
 * @param reason why the jobs wait, for people; {@code null} when they do not wait on a limit
 * @param waitingJobs the due READY jobs waiting on the limit; 0 when they do not wait on one
 * @param limitSeconds how long the limit alone keeps the oldest due job waiting: unbounded
 * ({@link Double#POSITIVE_INFINITY}) while the global concurrency is taken or groups hold jobs, the
 * due backlog over the rate otherwise
 */
public record LimitStatus(String reason, long waitingJobs, double limitSeconds) {

    /** Not waiting on a limit. */
    public static final LimitStatus NONE = new LimitStatus(null, 0, 0);

    /**
     * Reads a task's status.
     * @param definition the task, with its limits
     * @param stats its latest statistics
     * @return the status; {@link #NONE} when its due jobs do not wait on a limit
     */
    public static LimitStatus of(TaskDefinition definition, TaskStats stats) {
        if (stats.ready() == 0) {
            return NONE;
        }
        long claimed = stats.starting() + stats.running();
        if (definition.globalConcurrency() > 0 && claimed >= definition.globalConcurrency()) {
            return new LimitStatus("global concurrency " + definition.globalConcurrency() + " taken (" + claimed
                    + " claimed)", stats.ready(), Double.POSITIVE_INFINITY);
        }
        TaskGroups groups = definition.groups();
        if (groups != null && claimed > 0 && (groups.mode() == TaskGroups.Mode.SEQUENCE || groups.concurrency() > 0)) {
            return new LimitStatus(groups.mode() == TaskGroups.Mode.SEQUENCE
                    ? "sequences: one job per group at a time (" + claimed + " claimed)"
                    : "concurrency " + groups.concurrency() + " per group (" + claimed + " claimed)", stats.ready(),
                    Double.POSITIVE_INFINITY);
        }
        RateLimit rate = definition.rateLimit();
        if (rate != null && stats.ready() > rate.burst()) {
            double perSecond = rate.permits() * 1000.0 / rate.period().toMillis();
            double seconds = stats.ready() / perSecond;
            return new LimitStatus(String.format(Locale.ROOT, "rate %d per %s: %d due jobs take %.1f s", rate.permits(),
                    InvalidSettingException.display(rate.period()), stats.ready(), seconds), stats.ready(), seconds);
        }
        return NONE;
    }

    /** @return whether the task's due jobs wait on one of its limits */
    public boolean waiting() {
        return this.reason != null;
    }

    /**
     * @param lagSeconds the task's lag: seconds since its oldest due job became due
     * @param maxLagSeconds the lag tolerated without limits
     * @return whether the limit explains the lag
     */
    public boolean explains(double lagSeconds, double maxLagSeconds) {
        return waiting() && lagSeconds <= maxLagSeconds + this.limitSeconds;
    }
}
