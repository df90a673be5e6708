package io.pgqueue.internal.store;

import java.util.Set;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;

/**
 * Operator controls per task type: pause and resume. Internal API; its SQL is in
 * {@link ControlStatements}.
 */
public final class ControlStore {

    private final NamedParameterJdbcTemplate jdbc;

    private final String setPaused;

    private final String paused;

    /**
     * Creates a store.
     * @param dataSource the queue's database
     * @param config the queue's settings
     */
    public ControlStore(DataSource dataSource, QueueConfig config) {
        this.jdbc = StoreSupport.jdbc(dataSource, config);
        this.setPaused = StoreSupport.sql(ControlStatements.SET_PAUSED, config);
        this.paused = StoreSupport.sql(ControlStatements.PAUSED, config);
    }

    /**
     * Pauses or resumes a task on every node.
     * @param task the task
     * @param paused whether to pause
     * @return whether the state changed
     */
    public boolean setPaused(String task, boolean paused) {
        Boolean changed = this.jdbc.queryForObject(this.setPaused,
                new MapSqlParameterSource("task", task).addValue("paused", paused), Boolean.class);
        return Boolean.TRUE.equals(changed);
    }

    /**
     * Returns the paused tasks.
     * @return their names
     */
    public Set<String> pausedTasks() {
        return Set.copyOf(this.jdbc.getJdbcTemplate().queryForList(this.paused, String.class));
    }
}
