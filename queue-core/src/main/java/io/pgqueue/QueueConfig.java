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
 * @param retention how long finished jobs are kept, by final state; a zero retention of completed jobs
 * deletes them when they complete, unarchived
 */
public record QueueConfig(String schema, long maxPayloadBytes, Duration statementTimeout, Retention retention) {

    private static final Pattern SCHEMA = Pattern.compile("[a-z_][a-z0-9_]{0,39}");

    /**
     * Validates the settings.
     */
    public QueueConfig {
        validateSchema(schema);
        InvalidSettingException.require(maxPayloadBytes > 0, "max-payload-size", maxPayloadBytes + "B", "must be positive");
        InvalidSettingException.notNegative(statementTimeout, "statement-timeout");
        Objects.requireNonNull(retention, "retention");
    }

    /**
     * Returns the default settings.
     * @return the defaults
     */
    public static QueueConfig defaults() {
        return new QueueConfig(QueueDefaults.SCHEMA, QueueDefaults.MAX_PAYLOAD_BYTES, QueueDefaults.STATEMENT_TIMEOUT,
                Retention.defaults());
    }

    /**
     * Returns a copy with another schema.
     * @param schema the schema
     * @return the copy
     */
    public QueueConfig withSchema(String schema) {
        return new QueueConfig(schema, this.maxPayloadBytes, this.statementTimeout, this.retention);
    }

    /**
     * Returns a copy with another payload limit.
     * @param maxPayloadBytes the limit in bytes
     * @return the copy
     */
    public QueueConfig withMaxPayloadBytes(long maxPayloadBytes) {
        return new QueueConfig(this.schema, maxPayloadBytes, this.statementTimeout, this.retention);
    }

    /**
     * Returns a copy with another statement timeout.
     * @param statementTimeout the timeout; zero for none
     * @return the copy
     */
    public QueueConfig withStatementTimeout(Duration statementTimeout) {
        return new QueueConfig(this.schema, this.maxPayloadBytes, statementTimeout, this.retention);
    }

    /**
     * Returns a copy with another retention of completed jobs.
     * @param completedRetention the retention; zero deletes completed jobs at once
     * @return the copy
     */
    public QueueConfig withCompletedRetention(Duration completedRetention) {
        return withRetention(new Retention(completedRetention, this.retention.failed(), this.retention.cancelled()));
    }

    /**
     * Returns a copy with other retentions.
     * @param retention how long finished jobs are kept, by final state
     * @return the copy
     */
    public QueueConfig withRetention(Retention retention) {
        return new QueueConfig(this.schema, this.maxPayloadBytes, this.statementTimeout, retention);
    }

    /**
     * Checks a schema name. Only plain lower-case identifiers are accepted, so the name can be
     * placed into SQL text unquoted.
     * @param schema the name
     * @throws InvalidSettingException if the name is not a plain lower-case identifier of at most 40 characters
     */
    public static void validateSchema(String schema) {
        InvalidSettingException.require(schema != null && SCHEMA.matcher(schema).matches(), "schema", schema,
                "must be a lower-case identifier of at most 40 characters (letters, digits, underscores; not "
                        + "starting with a digit)");
    }
}
