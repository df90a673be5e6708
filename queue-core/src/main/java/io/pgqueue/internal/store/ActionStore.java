package io.pgqueue.internal.store;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

import javax.sql.DataSource;

import io.pgqueue.QueueAction;
import io.pgqueue.QueueConfig;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;

/**
 * The record of operator actions and the progress of bulk ones (table {@code queue_action}).
 * Internal API; its SQL is in {@link ActionStatements}.
 */
public final class ActionStore {

    private final NamedParameterJdbcTemplate jdbc;

    private final String insert;

    private final String progress;

    private final String finish;

    private final String touch;

    private final String find;

    private final String list;

    /**
     * Creates a store.
     * @param dataSource the queue's database
     * @param config the queue's settings
     */
    public ActionStore(DataSource dataSource, QueueConfig config) {
        this.jdbc = StoreSupport.jdbc(dataSource, config);
        this.insert = StoreSupport.sql(ActionStatements.INSERT, config);
        this.progress = StoreSupport.sql(ActionStatements.PROGRESS, config);
        this.finish = StoreSupport.sql(ActionStatements.FINISH, config);
        this.touch = StoreSupport.sql(ActionStatements.TOUCH, config);
        this.find = StoreSupport.sql(ActionStatements.FIND, config);
        this.list = StoreSupport.sql(ActionStatements.LIST, config);
    }

    /**
     * Records an action.
     * @param actor who took it, or {@code null}
     * @param action what
     * @param target on what
     * @param state {@link QueueAction.State#RUNNING} for a bulk action that starts, else how it ended
     * @param matched how many jobs a bulk action's filter matched, or {@code null}
     * @param acted how many jobs it changed
     * @param node the node taking it
     * @param message what it did, or {@code null}
     * @return the recorded action
     */
    public QueueAction record(String actor, String action, String target, QueueAction.State state, Long matched,
            long acted, String node, String message) {
        MapSqlParameterSource params = new MapSqlParameterSource("actor", storable(actor))
            .addValue("action", action)
            .addValue("target", storable(target))
            .addValue("state", state.name())
            .addValue("matched", matched, Types.BIGINT)
            .addValue("acted", acted)
            .addValue("node", node)
            .addValue("message", storable(message));
        return this.jdbc.queryForObject(this.insert, params, ActionStore::action);
    }

    /**
     * Adds a batch's counts to a running action.
     * @param id the action
     * @param acted jobs changed
     * @param skipped jobs left as they were
     */
    public void progress(long id, long acted, long skipped) {
        this.jdbc.update(this.progress, new MapSqlParameterSource("id", id).addValue("acted", acted)
            .addValue("skipped", skipped));
    }

    /**
     * Touches running actions, so that reads know their node is alive (an action its node has not
     * touched for five minutes reads STOPPED).
     * @param ids the actions
     */
    public void touch(Collection<Long> ids) {
        if (!ids.isEmpty()) {
            this.jdbc.update(this.touch, new MapSqlParameterSource("ids", SqlArrays.bigints(ids)));
        }
    }

    /**
     * Ends a running action.
     * @param id the action
     * @param state how it ended
     * @param message what it did, or why it ended
     */
    public void finish(long id, QueueAction.State state, String message) {
        this.jdbc.update(this.finish, new MapSqlParameterSource("id", id).addValue("state", state.name())
            .addValue("message", storable(message)));
    }

    /**
     * Reads an action.
     * @param id the action
     * @return it, or empty
     */
    public Optional<QueueAction> find(long id) {
        return this.jdbc.query(this.find, new MapSqlParameterSource("id", id), ActionStore::action).stream().findFirst();
    }

    /**
     * Lists actions, newest first.
     * @param before only actions with a smaller id, or {@code null} for the newest
     * @param limit the most actions
     * @return the actions
     */
    public List<QueueAction> list(Long before, int limit) {
        return this.jdbc.query(this.list, new MapSqlParameterSource().addValue("before", before, Types.BIGINT)
            .addValue("limit", limit), ActionStore::action);
    }

    /** A text as the record keeps it: PostgreSQL's text holds no U+0000, which a name typed by a caller may. */
    private static String storable(String text) {
        return text == null ? null : text.replace('\u0000', '\uFFFD');
    }

    private static QueueAction action(ResultSet rs, int row) throws SQLException {
        Long matched = rs.getObject("matched", Long.class);
        return new QueueAction(rs.getLong("id"), rs.getString("actor"), rs.getString("action"), rs.getString("target"),
                QueueAction.State.valueOf(rs.getString("state")), matched, rs.getLong("acted"),
                rs.getLong("skipped"), rs.getString("node"), rs.getString("message"),
                StoreSupport.instant(rs, "started_at"), StoreSupport.instant(rs, "updated_at"),
                StoreSupport.instant(rs, "finished_at"));
    }
}
