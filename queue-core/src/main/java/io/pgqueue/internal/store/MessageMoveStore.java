package io.pgqueue.internal.store;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import io.pgqueue.message.MessageMoveTask;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The statements of message move tasks ({@code V29__message_moves_and_fair_queues.sql}): started, listed,
 * cancelled, and stepped by a node's sweeper under the task row's lock; the messages themselves
 * move with {@link MessageStore#redrive}, in the step's transaction.
 */
public final class MessageMoveStore {

    private static final String TASK_COLUMNS = """
            t.handle, t.status, s.name AS source, d.name AS destination, t.max_per_second, t.moved, t.to_move,
            t.failure_reason, t.started_at
            """;

    private static final String TASKS = """
            FROM ${schema}.message_move_task AS t
            JOIN ${schema}.message_queue AS s ON s.id = t.source_queue_id
            LEFT JOIN ${schema}.message_queue AS d ON d.id = t.destination_queue_id
            """;

    /** Starts a task; the partial unique index refuses a second running one for the source. */
    static final String START = """
            INSERT INTO ${schema}.message_move_task (handle, source_queue_id, destination_queue_id, max_per_second, to_move)
            VALUES (:handle, :source, :destination, :maxPerSecond,
                    (SELECT count(*) FROM ${schema}.message WHERE queue_id = :source))
            """;

    static final String FIND = "SELECT " + TASK_COLUMNS + TASKS + "WHERE t.handle = :handle";

    /** A source queue's tasks, newest first. */
    static final String LIST = "SELECT " + TASK_COLUMNS + TASKS + "WHERE t.source_queue_id = :source "
            + "ORDER BY t.started_at DESC, t.id DESC LIMIT :limit";

    static final String CANCEL = """
            UPDATE ${schema}.message_move_task SET status = 'CANCELLED', updated_at = now()
            WHERE handle = :handle AND status = 'RUNNING'
            """;

    static final String RUNNING = "SELECT id FROM ${schema}.message_move_task WHERE status = 'RUNNING' ORDER BY id";

    /** Locks a running task for a step; a task another node is stepping is skipped. */
    static final String LOCK = """
            SELECT id, source_queue_id, destination_queue_id, max_per_second,
                   destination_queue_id IS NOT NULL
                       AND NOT EXISTS (SELECT 1 FROM ${schema}.message_queue WHERE id = destination_queue_id)
                       AS destination_gone
            FROM ${schema}.message_move_task
            WHERE id = :id AND status = 'RUNNING'
            FOR UPDATE SKIP LOCKED
            """;

    static final String ADVANCE = """
            UPDATE ${schema}.message_move_task
            SET moved = moved + :moved, status = :status, failure_reason = :reason, updated_at = now()
            WHERE id = :id
            """;

    private final NamedParameterJdbcTemplate jdbc;

    private final TransactionTemplate transactions;

    private final String schema;

    private final RowMapper<MessageMoveTask> mapper = (rs, row) -> task(rs);

    /**
     * A task locked for a step.
     *
     * @param id its id
     * @param sourceQueueId the dead-letter queue
     * @param destinationQueueId the destination, or {@code null} for each message's source
     * @param maxPerSecond its rate, or {@code null}
     * @param destinationGone whether its destination was deleted
     */
    public record LockedTask(long id, long sourceQueueId, Long destinationQueueId, Integer maxPerSecond,
            boolean destinationGone) {
    }

    /** @param messages the message store of the same database, whose connections and transactions it shares */
    public MessageMoveStore(MessageStore messages) {
        this.jdbc = messages.jdbc();
        this.transactions = messages.transactions();
        this.schema = messages.schema();
    }

    private String sql(String statement) {
        return StoreSupport.sql(statement, this.schema);
    }

    /**
     * Starts a task.
     * @return it, or empty when a task runs for the source already
     */
    public Optional<MessageMoveTask> start(String handle, long sourceQueueId, Long destinationQueueId,
            Integer maxPerSecond) {
        try {
            this.jdbc.update(sql(START), new MapSqlParameterSource("handle", handle).addValue("source", sourceQueueId)
                .addValue("destination", destinationQueueId, Types.BIGINT)
                .addValue("maxPerSecond", maxPerSecond, Types.INTEGER));
        }
        catch (DuplicateKeyException ex) {
            return Optional.empty();
        }
        return find(handle);
    }

    public Optional<MessageMoveTask> find(String handle) {
        return this.jdbc.query(sql(FIND), new MapSqlParameterSource("handle", handle), this.mapper).stream().findFirst();
    }

    /** @return a source queue's tasks, newest first */
    public List<MessageMoveTask> list(long sourceQueueId, int limit) {
        return this.jdbc.query(sql(LIST), new MapSqlParameterSource("source", sourceQueueId).addValue("limit", limit),
                this.mapper);
    }

    /** @return whether a running task was cancelled (a step under way ends first) */
    public boolean cancel(String handle) {
        return this.jdbc.update(sql(CANCEL), new MapSqlParameterSource("handle", handle)) > 0;
    }

    /** @return the ids of the running tasks */
    public List<Long> running() {
        return this.jdbc.queryForList(sql(RUNNING), new MapSqlParameterSource(), Long.class);
    }

    /**
     * Runs a step of a task in one transaction, with the task locked.
     * @param id the task
     * @param step what the step does with the locked task; it returns the task's advance
     */
    public void step(long id, Function<LockedTask, Advance> step) {
        this.transactions.executeWithoutResult(status -> {
            this.jdbc.query(sql(LOCK), new MapSqlParameterSource("id", id), (RowMapper<LockedTask>) (rs, row) ->
                    new LockedTask(rs.getLong("id"), rs.getLong("source_queue_id"),
                            (Long) rs.getObject("destination_queue_id"), (Integer) rs.getObject("max_per_second"),
                            rs.getBoolean("destination_gone"))).stream().findFirst().ifPresent(task -> {
                                Advance advance = step.apply(task);
                                this.jdbc.update(sql(ADVANCE), new MapSqlParameterSource("id", id)
                                    .addValue("moved", advance.moved()).addValue("status", advance.status().name())
                                    .addValue("reason", advance.failureReason()));
                            });
        });
    }

    /**
     * What a step did.
     *
     * @param moved messages moved
     * @param status the task's status after it
     * @param failureReason why it failed, or {@code null}
     */
    public record Advance(long moved, MessageMoveTask.Status status, String failureReason) {
    }

    private static MessageMoveTask task(ResultSet rs) throws SQLException {
        return new MessageMoveTask(rs.getString("handle"), MessageMoveTask.Status.valueOf(rs.getString("status")),
                rs.getString("source"), rs.getString("destination"), (Integer) rs.getObject("max_per_second"),
                rs.getLong("moved"), rs.getLong("to_move"), rs.getString("failure_reason"),
                StoreSupport.instant(rs, "started_at"));
    }
}
