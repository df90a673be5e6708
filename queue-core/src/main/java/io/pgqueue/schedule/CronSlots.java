package io.pgqueue.schedule;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Objects;

import io.pgqueue.InvalidSettingException;
import org.springframework.scheduling.support.CronExpression;

/**
 * The slots of a cron expression in a time zone: the instants a schedule fires at. Spring's
 * {@link CronExpression} reads the expression (six fields: second, minute, hour, day of month,
 * month, day of week; macros such as {@code @daily}). Daylight saving time is handled the way
 * people expect of a clock on the wall:
 * <ul>
 * <li>An expression with a fixed hour (e.g. {@code 0 30 2 * * *}) names wall-clock times: each
 * fires once per occurrence of that wall-clock time. When clocks go back, the repeated hour does
 * not fire twice (the first occurrence fires); when clocks go forward, each slot in the skipped hour
 * fires as late as the jump (02:30 in a skipped 02:00-03:00 fires at 03:30).</li>
 * <li>An expression whose hour field is {@code *} or holds a step (a {@code /}: {@code *}{@code /2},
 * {@code 0/2}, {@code 1/3}, {@code 8-18/2}), and the macro {@code @hourly}, names elapsed time: it
 * fires at every instant its fields match, so an hourly job runs 25 times on the day clocks go back
 * and 23 times on the day they go forward, as an hour-by-hour clock would. {@code 0/2} and
 * {@code *}{@code /2} name the same hours and fire alike.</li>
 * </ul>
 * Any other hour field (a number, a range such as {@code 9-17}, a list such as {@code 8,12,18}) and
 * the other macros ({@code @daily}, {@code @midnight}, {@code @weekly}, {@code @monthly},
 * {@code @yearly}) name wall-clock times.
 */
public final class CronSlots {

    /** How far before a time the wall-clock search starts: longer than any offset change. */
    private static final Duration LOOK_BACK = Duration.ofHours(3);

    /** The spans {@link #latest} looks in, shortest first. */
    private static final List<Duration> WINDOWS = List.of(Duration.ofMinutes(1), Duration.ofHours(1), Duration.ofDays(1),
            Duration.ofDays(32), Duration.ofDays(366), Duration.ofDays(3660));

    private final CronExpression cron;

    private final String expression;

    private final ZoneId zone;

    private final boolean wallClock;

    private CronSlots(CronExpression cron, String expression, ZoneId zone, boolean wallClock) {
        this.cron = cron;
        this.expression = expression;
        this.zone = zone;
        this.wallClock = wallClock;
    }

    /**
     * Reads an expression.
     * @param expression the cron expression
     * @param zone the time zone its fields are read in
     * @return the slots
     * @throws InvalidSettingException if the expression cannot be read
     */
    public static CronSlots of(String expression, ZoneId zone) {
        Objects.requireNonNull(zone, "zone");
        // The parser trims each field, control characters too: one would reach the database (U+0000 cannot).
        InvalidSettingException.require(expression == null || expression.chars()
            .noneMatch(c -> Character.isISOControl(c) && !Character.isWhitespace(c)), "cron", expression,
                "must not contain control characters such as U+0000");
        CronExpression cron;
        try {
            cron = CronExpression.parse(expression);
        }
        catch (IllegalArgumentException ex) {
            throw new InvalidSettingException("cron", expression, "is not a cron expression of six fields (second minute "
                    + "hour day-of-month month day-of-week, e.g. 0 */5 * * * *) or a macro such as @daily: "
                    + ex.getMessage());
        }
        return new CronSlots(cron, expression, zone, namesWallClockTimes(expression.trim()));
    }

    /**
     * Whether an expression (read already) names wall-clock times rather than elapsed time: its hour
     * field is not {@code *} and holds no step, or it is a macro other than
     * {@code @hourly}.
     */
    private static boolean namesWallClockTimes(String expression) {
        if (expression.startsWith("@")) {
            return !expression.equalsIgnoreCase("@hourly");
        }
        String hours = expression.split("\\s+")[2];
        return !hours.equals("*") && !hours.contains("/");
    }

    /**
     * @param after an instant
     * @return the first slot strictly after it
     * @throws IllegalStateException if the expression never fires again
     */
    public Instant next(Instant after) {
        if (!this.wallClock) {
            // Spring's zoned search can answer the same instant again around some offset changes
            // (e.g. a 30-minute one): look again from a second later.
            Instant from = after;
            while (true) {
                Instant slot = required(this.cron.next(from.atZone(this.zone)), after).toInstant();
                if (slot.isAfter(after)) {
                    return slot;
                }
                from = from.plusSeconds(1);
            }
        }
        // Wall-clock times: matched on the local time line, then placed in the zone; a time in a
        // gap moves forward by the gap, a time in an overlap takes its earlier offset. The search
        // starts a little before the local time of after, so that several slots in one gap (02:00
        // and 02:30 in a skipped hour) each fire; those at or before after are passed over.
        LocalDateTime local = after.atZone(this.zone).toLocalDateTime().minus(LOOK_BACK);
        while (true) {
            LocalDateTime candidate = required(this.cron.next(local.atZone(ZoneOffset.UTC)), after).toLocalDateTime();
            Instant slot = ZonedDateTime.ofLocal(candidate, this.zone, null).toInstant();
            if (slot.isAfter(after)) {
                return slot;
            }
            local = candidate;
        }
    }

    /**
     * Finds the latest slot in a span without walking every slot before it (a per-second
     * expression after a month of downtime has millions).
     * @param notBefore the span's start, inclusive
     * @param notAfter the span's end, inclusive
     * @return the latest slot in the span, or {@code null} if it has none
     */
    public Instant latest(Instant notBefore, Instant notAfter) {
        for (Duration window : WINDOWS) {
            Instant start = notAfter.minus(window).isAfter(notBefore) ? notAfter.minus(window) : notBefore;
            Instant slot = next(start.minusNanos(1));
            if (!slot.isAfter(notAfter)) {
                for (Instant later = next(slot); !later.isAfter(notAfter); later = next(later)) {
                    slot = later;
                }
                return slot;
            }
            if (start.equals(notBefore)) {
                return null;
            }
        }
        Instant slot = null;
        for (Instant each = next(notBefore.minusNanos(1)); !each.isAfter(notAfter); each = next(each)) {
            slot = each;
        }
        return slot;
    }

    private ZonedDateTime required(ZonedDateTime next, Instant after) {
        if (next == null) {
            throw new IllegalStateException("Cron expression '" + this.expression + "' has no slot after " + after);
        }
        return next;
    }

    /** @return the expression as given */
    public String expression() {
        return this.expression;
    }

    /** @return the time zone */
    public ZoneId zone() {
        return this.zone;
    }
}
