package io.pgqueue.schedule;

import java.util.List;

import io.pgqueue.EnqueueResult;
import io.pgqueue.InvalidJobException;

/**
 * Recurring jobs: the schedules (configured with the tasks and added at runtime) and the scheduler
 * every node with workers runs ({@link io.pgqueue.PgQueue#schedules()} hands them out). The
 * scheduler locks due schedules ({@code FOR UPDATE SKIP LOCKED}), enqueues the jobs of their due
 * slots and moves their next slot past now, in one transaction: each slot fires once across all
 * nodes with no leader to elect, and a node that dies mid-way leaves the slot to the next node. A
 * slot's job is due at the slot's time, carries the headers {@value #SCHEDULE_HEADER} and
 * {@value #SLOT_HEADER}, and the dedup key {@code schedule:<name>:<slot epoch millis>}.
 */
public interface Schedules {

    /** Header of a scheduled job: the schedule's name. */
    String SCHEDULE_HEADER = "pgqueue.schedule";

    /** Header of a scheduled job: its slot, an ISO-8601 instant. */
    String SLOT_HEADER = "pgqueue.schedule.slot";

    /** The most missed slots one transaction enqueues under {@link CatchUp#RUN_ALL}; the rest follow in the next. */
    int MAX_CATCH_UP = 1000;

    /**
     * Adds or replaces a schedule at runtime; it is kept in the database until {@link #remove}d.
     * Replacing it keeps its next slot unless its expression or zone changed.
     * @param schedule the schedule
     * @throws InvalidJobException if its task is unknown here or its payload does not fit the task's handler
     * @throws IllegalStateException if a configured schedule has the name
     */
    void put(Schedule schedule);

    /**
     * Removes a schedule added at runtime.
     * @param name its name
     * @return whether it existed
     * @throws IllegalStateException if it is a configured schedule
     */
    boolean remove(String name);

    /** @return every schedule with its next and last slot and its last job's state */
    List<ScheduleInfo> list();

    /**
     * Fires the due slots of the schedules of this node's tasks, as the scheduler does: each
     * schedule in a transaction of its own. A schedule whose job cannot be enqueued (its payload no
     * longer fits its handler, say) has the slot skipped, with a warning, so that it cannot hold up
     * the others.
     * @return the jobs enqueued
     */
    List<EnqueueResult> fireDue();
}
