package io.pgqueue;

import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Engine-wide settings of a queue. Defaults come from {@link QueueDefaults}.
 *
 * @param schema the database schema of the queue's tables (lower-case letters, digits and underscores)
 * @param maxPayloadBytes the upper bound of a job's serialized payload in bytes
 * @param statementTimeout the timeout of each statement the queue runs itself
 * @param completedRetention how long completed jobs are kept; zero deletes them when they complete
 */
public record QueueConfig(String schema, long maxPayloadBytes, Duration statementTimeout, Duration completedRetention) {

    private static final Pattern SCHEMA = Pattern.compile("[a-z_][a-z0-9_]{0,39}");

    /**
     * Validates the settings.
     */
    public QueueConfig {
        validateSchema(schema);
        if (maxPayloadBytes < 1) {
            throw new IllegalArgumentException("Maximum payload size must be positive, was " + maxPayloadBytes);
        }
        Objects.requireNonNull(statementTimeout, "statementTimeout");
        if (statementTimeout.isNegative()) {
            throw new IllegalArgumentException("Statement timeout must not be negative, was " + statementTimeout);
        }
        Objects.requireNonNull(completedRetention, "completedRetention");
        if (completedRetention.isNegative()) {
            throw new IllegalArgumentException("Completed retention must not be negative, was " + completedRetention);
        }
    }

    /**
     * Returns the default settings.
     * @return the defaults
     */
    public static QueueConfig defaults() {
        return new QueueConfig(QueueDefaults.SCHEMA, QueueDefaults.MAX_PAYLOAD_BYTES, QueueDefaults.STATEMENT_TIMEOUT,
                QueueDefaults.COMPLETED_RETENTION);
    }

    /**
     * Returns a copy with another schema.
     * @param schema the schema
     * @return the copy
     */
    public QueueConfig withSchema(String schema) {
        return new QueueConfig(schema, this.maxPayloadBytes, this.statementTimeout, this.completedRetention);
    }

    /**
     * Returns a copy with another payload limit.
     * @param maxPayloadBytes the limit in bytes
     * @return the copy
     */
    public QueueConfig withMaxPayloadBytes(long maxPayloadBytes) {
        return new QueueConfig(this.schema, maxPayloadBytes, this.statementTimeout, this.completedRetention);
    }

    /**
     * Returns a copy with another statement timeout.
     * @param statementTimeout the timeout; zero for none
     * @return the copy
     */
    public QueueConfig withStatementTimeout(Duration statementTimeout) {
        return new QueueConfig(this.schema, this.maxPayloadBytes, statementTimeout, this.completedRetention);
    }

    /**
     * Returns a copy with another retention of completed jobs.
     * @param completedRetention the retention; zero deletes completed jobs at once
     * @return the copy
     */
    public QueueConfig withCompletedRetention(Duration completedRetention) {
        return new QueueConfig(this.schema, this.maxPayloadBytes, this.statementTimeout, completedRetention);
    }

    /**
     * Checks a schema name. Only plain lower-case identifiers are accepted, so the name can be
     * placed into SQL text unquoted.
     * @param schema the name
     * @throws IllegalArgumentException if the name is not a plain lower-case identifier of at most 40 characters
     */
    public static void validateSchema(String schema) {
        if (schema == null || !SCHEMA.matcher(schema).matches()) {
            throw new IllegalArgumentException("Queue schema '" + schema + "' is invalid: use a lower-case identifier "
                    + "of at most 40 characters (letters, digits, underscores; not starting with a digit)");
        }
    }
}
