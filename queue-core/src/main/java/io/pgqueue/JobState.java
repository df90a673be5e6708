package io.pgqueue;

/**
 * The states of a job. Transitions, each written by one fenced statement:
 * <ul>
 * <li>{@link #READY} → {@link #STARTING} (or straight to {@link #RUNNING}): a worker claims the job,
 * takes a lease (owner, epoch, deadline) and counts an attempt;</li>
 * <li>{@link #STARTING} → {@link #RUNNING}: the handler starts; the lease is renewed;</li>
 * <li>{@link #STARTING}/{@link #RUNNING} → {@link #COMPLETED}: the handler succeeded;</li>
 * <li>{@link #STARTING}/{@link #RUNNING} → {@link #READY}: the attempt failed and the retry policy
 * allows another one, the lease expired (rescue), or a re-run was requested while it ran;</li>
 * <li>{@link #STARTING}/{@link #RUNNING} → {@link #FAILED}: a terminal error, or no attempts left;</li>
 * <li>{@link #READY} → {@link #CANCELLED}: cancelled before a worker took it; a claimed job whose
 * cancellation was requested ends {@link #CANCELLED} when its worker reports back or its lease expires.</li>
 * </ul>
 * A job enqueued to run after others starts {@link #WAITING}, outside the claim, and becomes
 * {@link #READY} when they completed (or ended, if it runs anyway), or {@link #CANCELLED} when one
 * failed. READY, STARTING and RUNNING jobs are <em>active</em>: they live in the hot job table and hold the
 * dedup key. The other states are <em>finished</em> and live in the history table until retention
 * removes them.
 */
public enum JobState {

    /** Waiting to be claimed; due once its schedule time has passed. */
    READY,

    /** Claimed into a worker's local buffer, not yet executing. */
    STARTING,

    /** Its handler is executing. */
    RUNNING,

    /** The handler succeeded. */
    COMPLETED,

    /** The last attempt failed and no retry follows. */
    FAILED,

    /** Cancelled by a user or operator, or because a job it ran after failed. */
    CANCELLED,

    /** Waiting for the jobs it runs after; not claimable yet. */
    WAITING;

    /**
     * Returns whether a job in this state is still active (ready, starting or running).
     * @return {@code true} for READY, STARTING and RUNNING
     */
    public boolean isActive() {
        return this == READY || this == STARTING || this == RUNNING;
    }
}
