package io.pgqueue.internal.store;

import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import io.pgqueue.message.MessageQueueHistory;
import io.pgqueue.observe.TaskHistory;
import org.springframework.jdbc.core.RowCallbackHandler;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;

/**
 * The tasks' history: per minute for a day and per hour for a week (table {@code task_history}).
 * Internal API; its SQL is in {@link HistoryStatements}.
 */
public final class HistoryStore {

    /** The steps kept: a minute (for a day) and an hour (for a week). */
    public static final Duration MINUTE = Duration.ofMinutes(1);

    /** See {@link #MINUTE}. */
    public static final Duration HOUR = Duration.ofHours(1);

    private final NamedParameterJdbcTemplate jdbc;

    private final String add;

    private final String prune;

    private final String read;

    private final String addMessages;

    private final String pruneMessages;

    private final String readMessages;

    private final String readMessageSteps;

    /**
     * Creates a store.
     * @param dataSource the queue's database
     * @param config the queue's settings
     */
    public HistoryStore(DataSource dataSource, QueueConfig config) {
        this.jdbc = StoreSupport.jdbc(dataSource, config);
        this.add = StoreSupport.sql(HistoryStatements.ADD, config);
        this.prune = StoreSupport.sql(HistoryStatements.PRUNE, config);
        this.read = StoreSupport.sql(HistoryStatements.READ, config);
        this.addMessages = StoreSupport.sql(HistoryStatements.ADD_MESSAGES, config);
        this.pruneMessages = StoreSupport.sql(HistoryStatements.PRUNE_MESSAGES, config);
        this.readMessages = StoreSupport.sql(HistoryStatements.READ_MESSAGES, config);
        this.readMessageSteps = StoreSupport.sql(HistoryStatements.READ_MESSAGE_STEPS, config);
    }

    /**
     * What one node's handlers of a task did since it last added its figures.
     *
     * @param task the task
     * @param completed jobs completed
     * @param failed jobs failed for good
     * @param retried attempts that failed with attempts left
     * @param waits handlers started
     * @param waitSumMillis their waits, from due to start, added up
     * @param waitMaxMillis the longest wait
     * @param runs handlers finished
     * @param runSumMillis their run times added up
     * @param runMaxMillis the longest run time
     */
    public record Figures(String task, long completed, long failed, long retried, long waits, long waitSumMillis,
            long waitMaxMillis, long runs, long runSumMillis, long runMaxMillis) {
    }

    /**
     * Adds figures to the minute and the hour of a time, in one statement.
     * @param at the time
     * @param figures one per task
     */
    public void add(Instant at, List<Figures> figures) {
        if (figures.isEmpty()) {
            return;
        }
        MapSqlParameterSource params = new MapSqlParameterSource()
            .addValue("at", at.atOffset(ZoneOffset.UTC), Types.TIMESTAMP_WITH_TIMEZONE)
            .addValue("tasks", SqlArrays.texts(figures.stream().map(Figures::task).toList()))
            .addValue("completed", longs(figures, Figures::completed))
            .addValue("failed", longs(figures, Figures::failed))
            .addValue("retried", longs(figures, Figures::retried))
            .addValue("waits", longs(figures, Figures::waits))
            .addValue("waitSums", longs(figures, Figures::waitSumMillis))
            .addValue("waitMaxes", longs(figures, Figures::waitMaxMillis))
            .addValue("runs", longs(figures, Figures::runs))
            .addValue("runSums", longs(figures, Figures::runSumMillis))
            .addValue("runMaxes", longs(figures, Figures::runMaxMillis));
        this.jdbc.update(this.add, params);
    }

    private static Object longs(List<Figures> figures, Function<Figures, Long> value) {
        return SqlArrays.bigints(figures.stream().map(value).toList());
    }

    /** Deletes minute rows older than 25 hours and hour rows older than 8 days, of tasks and message queues. */
    public void prune() {
        this.jdbc.update(this.prune, new MapSqlParameterSource());
        this.jdbc.update(this.pruneMessages, new MapSqlParameterSource());
    }

    /**
     * What one node did with a message queue since it last added its counts.
     *
     * @param queue the queue's name
     * @param sent messages sent
     * @param received messages received
     * @param deleted messages deleted
     */
    public record MessageFigures(String queue, long sent, long received, long deleted) {
    }

    /**
     * Adds message counts to the minute and the hour of a time, in one statement.
     * @param at the time
     * @param figures one per queue
     */
    public void addMessages(Instant at, List<MessageFigures> figures) {
        if (figures.isEmpty()) {
            return;
        }
        this.jdbc.update(this.addMessages, new MapSqlParameterSource()
            .addValue("at", at.atOffset(ZoneOffset.UTC), Types.TIMESTAMP_WITH_TIMEZONE)
            .addValue("queues", SqlArrays.texts(figures.stream().map(MessageFigures::queue).toList()))
            .addValue("sent", SqlArrays.bigints(figures.stream().map(MessageFigures::sent).toList()))
            .addValue("received", SqlArrays.bigints(figures.stream().map(MessageFigures::received).toList()))
            .addValue("deleted", SqlArrays.bigints(figures.stream().map(MessageFigures::deleted).toList())));
    }

    /**
     * Reads each message queue's counts added up over the minutes from a time on.
     * @param from the start
     * @return the counts by queue name
     */
    public Map<String, MessageFigures> readMessages(Instant from) {
        Map<String, MessageFigures> figures = new TreeMap<>();
        this.jdbc.query(this.readMessages, new MapSqlParameterSource()
            .addValue("from", from.atOffset(ZoneOffset.UTC), Types.TIMESTAMP_WITH_TIMEZONE), (RowCallbackHandler) rs ->
                figures.put(rs.getString("queue"), new MessageFigures(rs.getString("queue"), rs.getLong("sent"),
                        rs.getLong("received"), rs.getLong("deleted"))));
        return figures;
    }

    /**
     * Reads one message queue's counts step by step from a time on.
     * @param queue the queue's name
     * @param step {@link #MINUTE} or {@link #HOUR}
     * @param from the start of the window
     * @return the queue's history
     */
    public MessageQueueHistory readMessageSteps(String queue, Duration step, Instant from) {
        List<MessageQueueHistory.Point> points = this.jdbc.query(this.readMessageSteps, new MapSqlParameterSource("step",
                (int) step.toSeconds()).addValue("queue", queue)
            .addValue("from", from.atOffset(ZoneOffset.UTC), Types.TIMESTAMP_WITH_TIMEZONE), (rs, row) ->
                new MessageQueueHistory.Point(StoreSupport.instant(rs, "bucket"), rs.getLong("sent"), rs.getLong("received"),
                        rs.getLong("deleted")));
        return new MessageQueueHistory(queue, step, points);
    }

    /**
     * Reads every task's history from a time on.
     * @param step {@link #MINUTE} or {@link #HOUR}
     * @param from the start of the window
     * @return each task's history, by task name in order
     */
    public Map<String, TaskHistory> read(Duration step, Instant from) {
        Map<String, List<TaskHistory.Point>> points = new LinkedHashMap<>();
        this.jdbc.query(this.read, new MapSqlParameterSource("step", (int) step.toSeconds())
            .addValue("from", from.atOffset(ZoneOffset.UTC), Types.TIMESTAMP_WITH_TIMEZONE), (RowCallbackHandler) rs -> {
                long waits = rs.getLong("waits");
                long runs = rs.getLong("runs");
                points.computeIfAbsent(rs.getString("task"), task -> new ArrayList<>()).add(new TaskHistory.Point(
                        StoreSupport.instant(rs, "bucket"), rs.getLong("completed"), rs.getLong("failed"),
                        rs.getLong("retried"), waits, waits == 0 ? null : rs.getLong("wait_sum_ms") / (double) waits,
                        rs.getLong("wait_max_ms"), runs, runs == 0 ? null : rs.getLong("run_sum_ms") / (double) runs,
                        rs.getLong("run_max_ms")));
            });
        Map<String, TaskHistory> histories = new TreeMap<>();
        points.forEach((task, list) -> histories.put(task, new TaskHistory(task, step, list)));
        return histories;
    }
}
