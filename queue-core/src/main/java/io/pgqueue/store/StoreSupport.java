package io.pgqueue.store;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;

/**
 * What every store shares: JDBC templates with the queue's statement timeout, and statements
 * placed into the queue's (validated) schema.
 */
final class StoreSupport {

    private StoreSupport() {
    }

    static NamedParameterJdbcTemplate jdbc(DataSource dataSource, QueueConfig config) {
        JdbcTemplate template = new JdbcTemplate(dataSource);
        template.setQueryTimeout(config.statementTimeoutSeconds());
        return new NamedParameterJdbcTemplate(template);
    }

    static String sql(String statement, QueueConfig config) {
        return statement.replace("${asyncCommit}", JobStatements.ASYNC_COMMIT).replace("${schema}", config.schema());
    }
}
