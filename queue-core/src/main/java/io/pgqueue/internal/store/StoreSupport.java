package io.pgqueue.internal.store;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;

/**
 * What every store shares: JDBC templates with the queue's statement timeout, and statements
 * placed into the queue's (validated) schema.
 */
public final class StoreSupport {

    private StoreSupport() {
    }

    static NamedParameterJdbcTemplate jdbc(DataSource dataSource, QueueConfig config) {
        return new NamedParameterJdbcTemplate(StatementTimeouts.jdbcTemplate(dataSource, config.statementTimeout()));
    }

    /** Runs a statement in autocommit mode, e.g. VACUUM, which cannot run inside a transaction block. */
    static void outsideTransaction(NamedParameterJdbcTemplate jdbc, String statementText) {
        jdbc.getJdbcTemplate().execute((ConnectionCallback<Void>) connection -> {
            boolean autoCommit = connection.getAutoCommit();
            connection.setAutoCommit(true);
            try (Statement statement = connection.createStatement()) {
                statement.execute(statementText);
            }
            finally {
                connection.setAutoCommit(autoCommit);
            }
            return null;
        });
    }

    /** @return a {@code timestamptz} column as an instant, or {@code null} */
    static Instant instant(ResultSet rs, String column) throws SQLException {
        OffsetDateTime value = rs.getObject(column, OffsetDateTime.class);
        return value == null ? null : value.toInstant();
    }

    public static String sql(String statement, QueueConfig config) {
        return sql(statement, config.schema());
    }

    static String sql(String statement, String schema) {
        return statement.replace("${schema}", schema);
    }

    /**
     * Whether JSON text holds U+0000, which PostgreSQL's {@code jsonb} cannot store: JSON writes it
     * as the escape {@code \u0000}, and an escaped backslash before {@code u0000} is text, not the
     * character.
     * @param json the JSON text
     * @return whether it holds U+0000
     */
    public static boolean jsonHoldsNul(String json) {
        for (int at = json.indexOf("u0000"); at >= 0; at = json.indexOf("u0000", at + 1)) {
            int backslashes = 0;
            while (at - 1 - backslashes >= 0 && json.charAt(at - 1 - backslashes) == '\\') {
                backslashes++;
            }
            if (backslashes % 2 == 1) {
                return true;
            }
        }
        return false;
    }
}
