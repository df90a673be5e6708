package io.pgqueue;

import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How many jobs of a task may start per period across all nodes: a token bucket kept in
 * PostgreSQL that earns {@code permits / period} continuously and holds at most {@code burst}
 * permits. Each claimed job spends one. After an idle spell at most {@code burst} jobs start at
 * once; from then on they start evenly spaced, one every {@code period / permits}.
 *
 * @param permits how many jobs may start per period, at least 1
 * @param period the period, at least one millisecond
 * @param burst how many permits the bucket holds at most, between 1 and {@code permits}
 */
public record RateLimit(int permits, Duration period, int burst) {

    private static final Pattern FORMAT = Pattern.compile("\\s*(\\d+)\\s*/\\s*(\\d*)\\s*(ms|s|m|h|d)\\s*");

    /**
     * Validates the limit.
     */
    public RateLimit {
        InvalidSettingException.require(permits >= 1, "rate", permits, "needs at least 1 permit per period");
        InvalidSettingException.require(period != null && period.toMillis() >= 1, "rate", period,
                "needs a period of at least 1 ms");
        InvalidSettingException.require(burst >= 1 && burst <= permits, "rate-burst", burst,
                "must be between 1 and the permits per period (" + permits + ")");
    }

    /**
     * A limit with the default burst, {@link #defaultBurst}.
     * @param permits how many jobs may start per period
     * @param period the period
     * @return the limit
     */
    public static RateLimit of(int permits, Duration period) {
        InvalidSettingException.require(permits >= 1, "rate", permits, "needs at least 1 permit per period");
        return new RateLimit(permits, period, defaultBurst(permits));
    }

    /**
     * The burst a limit has unless given: a tenth of the permits per period, at least 1. It lets a
     * claim after an idle spell take a few jobs at once without letting a whole period's worth start together.
     * @param permits the permits per period
     * @return the default burst
     */
    public static int defaultBurst(int permits) {
        return Math.max(1, permits / 10);
    }

    /**
     * Reads a limit written as {@code permits/period}: {@code 100/1s}, {@code 100/s}, {@code 6000/1m},
     * {@code 5/500ms}, {@code 1000/1h}, {@code 20000/1d}.
     * @param text the limit
     * @param burst the burst, or {@code null} for {@link #defaultBurst}
     * @return the limit
     * @throws InvalidSettingException if the text is not of that form
     */
    public static RateLimit parse(String text, Integer burst) {
        Matcher matcher = FORMAT.matcher(text == null ? "" : text.toLowerCase(Locale.ROOT));
        InvalidSettingException.require(matcher.matches(), "rate", text,
                "must be permits/period, e.g. 100/1s, 100/s, 6000/1m or 5/500ms");
        int permits;
        long amount;
        try {
            permits = Integer.parseInt(matcher.group(1));
            amount = matcher.group(2).isEmpty() ? 1 : Long.parseLong(matcher.group(2));
        }
        catch (NumberFormatException ex) {
            throw new InvalidSettingException("rate", text, "has a number too large");
        }
        Duration period = switch (matcher.group(3)) {
            case "ms" -> Duration.ofMillis(amount);
            case "s" -> Duration.ofSeconds(amount);
            case "m" -> Duration.ofMinutes(amount);
            case "h" -> Duration.ofHours(amount);
            default -> Duration.ofDays(amount);
        };
        return burst == null ? of(permits, period) : new RateLimit(permits, period, burst);
    }

    /** @return the limit as {@link #parse} reads it, with the burst */
    @Override
    public String toString() {
        return this.permits + "/" + this.period.toMillis() + "ms (burst " + this.burst + ")";
    }
}
