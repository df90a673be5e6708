package io.pgqueue.store;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;

/**
 * What every store shares: JDBC templates with the queue's statement timeout, and statements
 * placed into the queue's (validated) schema.
 */
final class StoreSupport {

    private StoreSupport() {
    }

    static NamedParameterJdbcTemplate jdbc(DataSource dataSource, QueueConfig config) {
        return new NamedParameterJdbcTemplate(StatementTimeouts.jdbcTemplate(dataSource, config.statementTimeout()));
    }

    static String sql(String statement, QueueConfig config) {
        return sql(statement, config.schema());
    }

    static String sql(String statement, String schema) {
        return statement.replace("${schema}", schema);
    }
}
