package io.pgqueue;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A setting of the queue has a value it cannot work with. The setting is named as under the
 * {@code pgqueue.} prefix of the Spring Boot properties ({@code lease.heartbeat-interval},
 * {@code pools.fast.max-prefetch}), so the starter reports it as the property to fix; the rule
 * may name other settings in braces ({@code {lease.duration}}).
 */
public class InvalidSettingException extends IllegalArgumentException {

    private static final Pattern REFERENCE = Pattern.compile("\\{([a-z0-9.<>_-]+)}");

    private final String setting;

    private final transient Object value;

    private final String rule;

    /**
     * Creates the exception.
     * @param setting the setting, e.g. {@code lease.heartbeat-interval}
     * @param value the value it has
     * @param rule what the value must be, e.g. "must be positive"
     */
    public InvalidSettingException(String setting, Object value, String rule) {
        super("Invalid value '" + display(value) + "' for '" + setting + "': " + render(rule, ""));
        this.setting = Objects.requireNonNull(setting, "setting");
        this.value = value;
        this.rule = rule;
    }

    /**
     * Checks a condition on a setting.
     * @param condition what must hold
     * @param setting the setting
     * @param value its value
     * @param rule what the value must be
     * @throws InvalidSettingException if the condition does not hold
     */
    public static void require(boolean condition, String setting, Object value, String rule) {
        if (!condition) {
            throw new InvalidSettingException(setting, value, rule);
        }
    }

    /**
     * Checks that a duration is set and positive.
     * @param value the duration
     * @param setting the setting
     * @return the duration
     * @throws InvalidSettingException if it is missing, zero or negative
     */
    public static Duration positive(Duration value, String setting) {
        require(value != null && !value.isZero() && !value.isNegative(), setting, value, "must be positive");
        return value;
    }

    /**
     * Checks that a duration is set and not negative.
     * @param value the duration
     * @param setting the setting
     * @return the duration
     * @throws InvalidSettingException if it is missing or negative
     */
    public static Duration notNegative(Duration value, String setting) {
        require(value != null && !value.isNegative(), setting, value, "must not be negative");
        return value;
    }

    /** @return the setting, as named under the {@code pgqueue.} prefix */
    public String setting() {
        return this.setting;
    }

    /** @return the value the setting had */
    public Object value() {
        return this.value;
    }

    /**
     * Returns the rule, the settings it names prefixed.
     * @param prefix put before every setting named, e.g. {@code "pgqueue."}
     * @return the rule
     */
    public String rule(String prefix) {
        return render(this.rule, prefix);
    }

    /**
     * Returns the same problem for a setting nested in a group, e.g. a pool's {@code max-prefetch}
     * within {@code pools.fast}.
     * @param group the group
     * @return the exception for {@code group.setting}
     */
    public InvalidSettingException within(String group) {
        return new InvalidSettingException(group + "." + this.setting, this.value,
                REFERENCE.matcher(this.rule).replaceAll(match -> Matcher.quoteReplacement(
                        "{" + group + "." + match.group(1) + "}")));
    }

    /**
     * Shows a value as it is written in configuration: durations in whole days, hours, seconds or
     * milliseconds ({@code 7d}, {@code 1h}, {@code 60s}, {@code 500ms}), not {@code PT1M}.
     * @param value the value
     * @return what to show
     */
    public static Object display(Object value) {
        if (!(value instanceof Duration duration) || duration.isZero()) {
            return value instanceof Duration ? "0s" : value;
        }
        long nanos = duration.toNanos();
        // Minutes are shown as seconds: "60s" as written, not "1m".
        for (ChronoUnit unit : new ChronoUnit[] { ChronoUnit.DAYS, ChronoUnit.HOURS, ChronoUnit.SECONDS,
                ChronoUnit.MILLIS }) {
            if (nanos % unit.getDuration().toNanos() == 0) {
                return nanos / unit.getDuration().toNanos() + suffix(unit);
            }
        }
        return duration.toString();
    }

    private static String suffix(ChronoUnit unit) {
        return switch (unit) {
            case DAYS -> "d";
            case HOURS -> "h";
            case SECONDS -> "s";
            default -> "ms";
        };
    }

    private static String render(String rule, String prefix) {
        return REFERENCE.matcher(rule).replaceAll(match -> Matcher.quoteReplacement(prefix + match.group(1)));
    }
}
