package io.pgqueue.schedule;

import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.regex.Pattern;

import io.pgqueue.InvalidSettingException;
import io.pgqueue.TaskDefinition;

/**
 * A recurring job: a task to enqueue at every slot of a cron expression in a time zone, with a
 * payload. Kept in the database, so every node agrees on it; each slot fires once across all
 * nodes.
 *
 * @param name the schedule's name (letters, digits, {@code . _ : -}; at most 128 characters)
 * @param task the task its jobs run
 * @param cron the cron expression: six fields (second minute hour day-of-month month day-of-week) or
 * a macro such as {@code @daily}; see {@link CronSlots} for daylight saving time
 * @param zone the time zone the expression is read in
 * @param payload the payload of its jobs, as JSON
 * @param catchUp what it does with slots missed while no node ran it
 */
public record Schedule(String name, String task, String cron, ZoneId zone, String payload, CatchUp catchUp) {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]{0,127}");

    /**
     * Validates the schedule.
     * @throws InvalidSettingException if a field is invalid, naming it
     * @throws io.pgqueue.InvalidJobException if the task name is invalid
     */
    public Schedule {
        InvalidSettingException.require(name != null && NAME.matcher(name).matches(), "name", name,
                "must be 1 to 128 letters, digits and . _ : - (starting with a letter or digit)");
        TaskDefinition.validateName(task);
        InvalidSettingException.require(zone != null, "zone", null, "must be a time zone, e.g. UTC or Europe/Amsterdam");
        InvalidSettingException.require(catchUp != null, "catchUp", null, "must be RUN_ONCE, RUN_ALL or SKIP");
        InvalidSettingException.require(payload != null && !payload.isBlank(), "payload", payload, "must be JSON");
        CronSlots.of(cron, zone);
    }

    /**
     * A schedule with an empty payload ({@code {}}), in UTC, catching up once.
     * @param name the schedule's name
     * @param task the task
     * @param cron the cron expression
     * @return the schedule
     */
    public static Schedule of(String name, String task, String cron) {
        return new Schedule(name, task, cron, ZoneOffset.UTC, "{}", CatchUp.RUN_ONCE);
    }

    /**
     * @param zone the time zone
     * @return a copy in that zone
     */
    public Schedule withZone(ZoneId zone) {
        return new Schedule(this.name, this.task, this.cron, zone, this.payload, this.catchUp);
    }

    /**
     * @param payload the payload as JSON
     * @return a copy with that payload
     */
    public Schedule withPayload(String payload) {
        return new Schedule(this.name, this.task, this.cron, this.zone, payload, this.catchUp);
    }

    /**
     * @param catchUp the catch-up policy
     * @return a copy with that policy
     */
    public Schedule withCatchUp(CatchUp catchUp) {
        return new Schedule(this.name, this.task, this.cron, this.zone, this.payload, catchUp);
    }

    /** @return the slots of its expression in its zone */
    public CronSlots slots() {
        return CronSlots.of(this.cron, this.zone);
    }
}
