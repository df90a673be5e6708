package io.pgqueue.internal.store;

import java.util.List;
import java.util.Set;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import org.springframework.jdbc.BadSqlGrammarException;
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

    private final String declareTasks;

    private final long maxPayloadBytes;

    /**
     * Creates a store.
     * @param dataSource the queue's database
     * @param config the queue's settings
     */
    public ControlStore(DataSource dataSource, QueueConfig config) {
        this.jdbc = StoreSupport.jdbc(dataSource, config);
        this.setPaused = StoreSupport.sql(ControlStatements.SET_PAUSED, config);
        this.paused = StoreSupport.sql(ControlStatements.PAUSED, config);
        this.declareTasks = StoreSupport.sql(ControlStatements.DECLARE_TASKS, config);
        this.maxPayloadBytes = config.maxPayloadBytes();
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
     * A task's settings as enqueue_job applies them.
     *
     * @param task the task
     * @param priority the default priority
     * @param maxAttempts the default maximum attempts
     * @param delayToleranceMillis the default delay tolerance, or {@code null}
     * @param dedupPolicy the dedup policy's recorded name
     * @param derivesDedupKey whether the task derives a job's dedup key from its payload
     * @param grouped whether the task has groups
     * @param derivesGroup whether the task derives a job's group from its payload
     * @param tags the task's tags
     * @param encrypted whether its payloads are encrypted
     */
    public record DeclaredTask(String task, int priority, int maxAttempts, Long delayToleranceMillis, String dedupPolicy,
            boolean derivesDedupKey, boolean grouped, boolean derivesGroup, List<String> tags, boolean encrypted) {
    }

    /**
     * Writes the settings of the tasks a node declares, for enqueue_job, in one statement.
     * @param tasks the tasks
     * @param node the node that declares them
     * @return whether they were written: not on a schema without the table (before V27), which the
     * schema check of the workers reports
     */
    public boolean declare(List<DeclaredTask> tasks, String node) {
        if (tasks.isEmpty()) {
            return true;
        }
        try {
            write(tasks, node);
            return true;
        }
        catch (BadSqlGrammarException ex) {
            if (UNDEFINED_TABLE.equals(ex.getSQLException().getSQLState())) {
                return false;
            }
            throw ex;
        }
    }

    /** PostgreSQL's SQLSTATE of a table that does not exist. */
    private static final String UNDEFINED_TABLE = "42P01";

    private void write(List<DeclaredTask> tasks, String node) {
        this.jdbc.update(this.declareTasks, new MapSqlParameterSource()
            .addValue("tasks", SqlArrays.texts(tasks.stream().map(DeclaredTask::task).toList()))
            .addValue("priorities", SqlArrays.ints(tasks.stream().map(DeclaredTask::priority).toList()))
            .addValue("maxAttempts", SqlArrays.ints(tasks.stream().map(DeclaredTask::maxAttempts).toList()))
            .addValue("tolerances", SqlArrays.bigints(tasks.stream().map(DeclaredTask::delayToleranceMillis).toList()))
            .addValue("policies", SqlArrays.texts(tasks.stream().map(DeclaredTask::dedupPolicy).toList()))
            .addValue("derivesKeys", SqlArrays.booleans(tasks.stream().map(DeclaredTask::derivesDedupKey).toList()))
            .addValue("grouped", SqlArrays.booleans(tasks.stream().map(DeclaredTask::grouped).toList()))
            .addValue("derivesGroups", SqlArrays.booleans(tasks.stream().map(DeclaredTask::derivesGroup).toList()))
            .addValue("tags", SqlArrays.texts(tasks.stream().map(task -> String.join(",", task.tags())).toList()))
            .addValue("encrypted", SqlArrays.booleans(tasks.stream().map(DeclaredTask::encrypted).toList()))
            .addValue("maxPayloadBytes", this.maxPayloadBytes).addValue("node", node));
    }

    /**
     * Returns the paused tasks.
     * @return their names
     */
    public Set<String> pausedTasks() {
        return Set.copyOf(this.jdbc.getJdbcTemplate().queryForList(this.paused, String.class));
    }
}
