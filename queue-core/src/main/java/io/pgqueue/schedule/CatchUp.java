package io.pgqueue.schedule;

/**
 * What a schedule does with the slots it missed while no node was running (or every node was away
 * from the database): found when a node next looks at the schedule.
 */
public enum CatchUp {

    /** One job, for the latest missed slot, however late. The default. */
    RUN_ONCE,

    /** One job per missed slot, oldest first (in transactions of at most {@value Schedules#MAX_CATCH_UP} slots). */
    RUN_ALL,

    /** Missed slots do not run; a slot fires only if it is less than a minute late. */
    SKIP
}
