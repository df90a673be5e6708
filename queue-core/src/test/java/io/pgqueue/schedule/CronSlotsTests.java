package io.pgqueue.schedule;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;

import io.pgqueue.InvalidSettingException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Slots across the daylight saving time changes of Europe/Amsterdam in 2026: clocks go forward
 * from 02:00 to 03:00 on 29 March and back from 03:00 to 02:00 on 25 October.
 */
class CronSlotsTests {

    private static final ZoneId AMSTERDAM = ZoneId.of("Europe/Amsterdam");

    @Test
    void aDailyWallClockTimeInTheSkippedHourFiresAsLateAsTheJump() {
        List<ZonedDateTime> slots = slots("0 30 2 * * *", LocalDate.of(2026, 3, 27), 4);
        assertThat(slots).extracting(ZonedDateTime::toString).containsExactly("2026-03-27T02:30+01:00[Europe/Amsterdam]",
                "2026-03-28T02:30+01:00[Europe/Amsterdam]", "2026-03-29T03:30+02:00[Europe/Amsterdam]",
                "2026-03-30T02:30+02:00[Europe/Amsterdam]");
    }

    @Test
    void aDailyWallClockTimeInTheRepeatedHourFiresOnce() {
        List<ZonedDateTime> slots = slots("0 30 2 * * *", LocalDate.of(2026, 10, 24), 3);
        assertThat(slots).extracting(ZonedDateTime::toString).containsExactly("2026-10-24T02:30+02:00[Europe/Amsterdam]",
                "2026-10-25T02:30+02:00[Europe/Amsterdam]", "2026-10-26T02:30+01:00[Europe/Amsterdam]");
    }

    @Test
    void anHourlyExpressionFollowsElapsedTime() {
        assertThat(slotsOn("0 0 * * * *", LocalDate.of(2026, 3, 29))).hasSize(23);
        assertThat(slotsOn("0 0 * * * *", LocalDate.of(2026, 10, 25))).hasSize(25)
            .extracting(ZonedDateTime::toString)
            .contains("2026-10-25T02:00+02:00[Europe/Amsterdam]", "2026-10-25T02:00+01:00[Europe/Amsterdam]");
        assertThat(slotsOn("0 */30 * * * *", LocalDate.of(2026, 3, 29))).hasSize(46);
    }

    @Test
    void aStepInTheHourFieldFollowsElapsedTimeHoweverItIsWritten() {
        for (String expression : List.of("0 0 */2 * * *", "0 0 0/2 * * *", "0 0 0-23/2 * * *")) {
            // Even hours: 02:00 comes twice when clocks go back, and not at all when they go forward.
            assertThat(slotsOn(expression, LocalDate.of(2026, 10, 25))).as(expression).hasSize(13)
                .extracting(ZonedDateTime::toString)
                .contains("2026-10-25T02:00+02:00[Europe/Amsterdam]", "2026-10-25T02:00+01:00[Europe/Amsterdam]");
            assertThat(slotsOn(expression, LocalDate.of(2026, 3, 29))).as(expression).hasSize(11)
                .extracting(ZonedDateTime::toString)
                .doesNotContain("2026-03-29T03:00+02:00[Europe/Amsterdam]");
        }
        // A fixed list of the same hours names wall-clock times: once each, 02:00 moved to the jump.
        String wallClock = "0 0 0,2,4,6,8,10,12,14,16,18,20,22 * * *";
        assertThat(slotsOn(wallClock, LocalDate.of(2026, 10, 25))).hasSize(12);
        assertThat(slotsOn(wallClock, LocalDate.of(2026, 3, 29))).hasSize(12)
            .extracting(ZonedDateTime::toString).contains("2026-03-29T03:00+02:00[Europe/Amsterdam]");
    }

    @Test
    void everySlotInASkippedHourFiresAsLateAsTheJump() {
        ZoneId newYork = ZoneId.of("America/New_York");
        CronSlots slots = CronSlots.of("0 0,30 2 * * *", newYork);
        Instant first = slots.next(Instant.parse("2025-03-09T05:00:00Z"));
        Instant second = slots.next(first);
        assertThat(first.atZone(newYork).toString()).isEqualTo("2025-03-09T03:00-04:00[America/New_York]");
        assertThat(second.atZone(newYork).toString()).isEqualTo("2025-03-09T03:30-04:00[America/New_York]");
        assertThat(slots.next(second).atZone(newYork).toString()).isEqualTo("2025-03-10T02:00-04:00[America/New_York]");
    }

    @Test
    void aHalfHourOffsetChangeDoesNotStopTheSlots() {
        // Lord Howe Island moves its clocks back by 30 minutes.
        CronSlots hourly = CronSlots.of("0 0 * * * *", ZoneId.of("Australia/Lord_Howe"));
        Instant at = Instant.parse("2025-04-05T12:00:00Z");
        for (int i = 0; i < 6; i++) {
            Instant next = hourly.next(at);
            assertThat(next).isAfter(at);
            at = next;
        }
    }

    @Test
    void theLatestSlotOfALongSpanIsFoundWithoutWalkingIt() {
        CronSlots everySecond = CronSlots.of("* * * * * *", ZoneOffset.UTC);
        Instant now = Instant.parse("2026-11-24T10:00:00.500Z");
        assertThat(everySecond.latest(now.minus(java.time.Duration.ofDays(31)), now))
            .isEqualTo(Instant.parse("2026-11-24T10:00:00Z"));
        CronSlots daily = CronSlots.of("0 0 3 * * *", ZoneOffset.UTC);
        assertThat(daily.latest(Instant.parse("2026-11-01T00:00:00Z"), now)).isEqualTo(Instant.parse("2026-11-24T03:00:00Z"));
        assertThat(daily.latest(Instant.parse("2026-11-24T04:00:00Z"), now)).isNull();
    }

    @Test
    void macrosAndUtc() {
        CronSlots daily = CronSlots.of("@daily", AMSTERDAM);
        assertThat(daily.next(Instant.parse("2026-10-24T23:00:00Z"))).isEqualTo(Instant.parse("2026-10-25T23:00:00Z"));
        CronSlots everyFiveMinutes = CronSlots.of("0 */5 * * * *", ZoneOffset.UTC);
        assertThat(everyFiveMinutes.next(Instant.parse("2026-01-01T00:04:59Z"))).isEqualTo(Instant.parse("2026-01-01T00:05:00Z"));
        assertThat(everyFiveMinutes.next(Instant.parse("2026-01-01T00:05:00Z"))).isEqualTo(Instant.parse("2026-01-01T00:10:00Z"));
    }

    @Test
    void anUnreadableExpressionNamesTheSetting() {
        assertThatThrownBy(() -> CronSlots.of("every day", AMSTERDAM)).isInstanceOf(InvalidSettingException.class)
            .hasMessageContaining("Invalid value 'every day' for 'cron': is not a cron expression of six fields");
        assertThatThrownBy(() -> CronSlots.of("0 0 ? * * *", AMSTERDAM)).as("? only in the day fields")
            .isInstanceOf(InvalidSettingException.class).hasMessageContaining("'0 0 ? * * *'");
    }

    /** The first n slots from the start of a day. */
    private static List<ZonedDateTime> slots(String expression, LocalDate from, int n) {
        CronSlots slots = CronSlots.of(expression, AMSTERDAM);
        List<ZonedDateTime> all = new ArrayList<>();
        Instant at = from.atStartOfDay(AMSTERDAM).toInstant().minusNanos(1);
        for (int i = 0; i < n; i++) {
            at = slots.next(at);
            all.add(at.atZone(AMSTERDAM));
        }
        return all;
    }

    /** The slots of one local day. */
    private static List<ZonedDateTime> slotsOn(String expression, LocalDate day) {
        CronSlots slots = CronSlots.of(expression, AMSTERDAM);
        Instant end = day.plusDays(1).atStartOfDay(AMSTERDAM).toInstant();
        List<ZonedDateTime> all = new ArrayList<>();
        for (Instant at = slots.next(day.atStartOfDay(AMSTERDAM).toInstant().minusNanos(1)); at.isBefore(end);
                at = slots.next(at)) {
            all.add(at.atZone(AMSTERDAM));
        }
        return all;
    }
}
