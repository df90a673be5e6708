package io.pgqueue.internal.store;

import java.util.function.Supplier;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

import javax.sql.DataSource;

import io.pgqueue.JobState;
import io.pgqueue.QueueConfig;
import io.pgqueue.schedule.CatchUp;
import io.pgqueue.schedule.Schedule;
import io.pgqueue.schedule.ScheduleInfo;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;

/**
 * The schedules of recurring jobs (table {@code schedule}, V17): the schedules configured on the
 * nodes and added at runtime, and the scheduler's reads and writes. Every statement names times
 * explicitly (the scheduler's clock), never the database's {@code now()}. Its SQL is in
 * {@link ScheduleStatements}.
 */
public final class ScheduleStore {

    private final TransactionTemplate transactions;

    private final NamedParameterJdbcTemplate jdbc;

    private final QueueConfig config;

    /**
     * @param dataSource the queue's (main) database
     * @param config the queue's settings, naming its schema
     */
    public ScheduleStore(DataSource dataSource, QueueConfig config) {
        this.jdbc = StoreSupport.jdbc(dataSource, config);
        this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        this.config = config;
    }

    /**
     * Runs work in one transaction: the caller's Spring transaction if one is active, a new one otherwise.
     * @param <T> the result type
     * @param work the work
     * @return its result
     */
    public <T> T inTransaction(Supplier<T> work) {
        return this.transactions.execute(status -> work.get());
    }

    /** A schedule as the scheduler locked it. */
    public record Due(Schedule schedule, Instant nextFire) {
    }

    /** @return every schedule, by name, with its last job's state */
    public List<ScheduleInfo> list() {
        return this.jdbc.query(sql(ScheduleStatements.LIST), (rs, row) -> new ScheduleInfo(schedule(rs), "CONFIG".equals(rs.getString("source")),
                StoreSupport.instant(rs, "next_fire"), StoreSupport.instant(rs, "last_fire"), (Long) rs.getObject("last_job_id"),
                rs.getString("last_state") == null ? null : JobState.valueOf(rs.getString("last_state"))));
    }

    /**
     * Creates or updates a configured schedule; its next slot changes only when its expression or
     * zone does.
     * @param nextFire its next slot, used when it is new or its slots changed
     */
    public void upsertConfigured(Schedule schedule, Instant nextFire) {
        this.jdbc.update(sql(ScheduleStatements.UPSERT_CONFIGURED), params(schedule, nextFire));
    }

    /**
     * Deletes the configured schedules of the given tasks that are not among the given names: a
     * node owns the configured schedules of the tasks it declares.
     * @return how many were deleted
     */
    public int deleteUnconfigured(Collection<String> tasks, Collection<String> names) {
        return this.jdbc.update(sql(ScheduleStatements.DELETE_UNCONFIGURED), new MapSqlParameterSource("tasks", SqlArrays.texts(List.copyOf(tasks)))
            .addValue("names", SqlArrays.texts(List.copyOf(names))));
    }

    /**
     * Creates or replaces a schedule added at runtime.
     * @return {@code false} if a configured schedule has the name (nothing changed)
     */
    public boolean putRuntime(Schedule schedule, Instant nextFire) {
        return !this.jdbc.queryForList(sql(ScheduleStatements.PUT_RUNTIME), params(schedule, nextFire), String.class).isEmpty();
    }

    /** @return the source of the schedule of that name ({@code CONFIG}, {@code RUNTIME}), if any */
    public Optional<String> source(String name) {
        return this.jdbc.queryForList(sql(ScheduleStatements.SOURCE), new MapSqlParameterSource("name", name), String.class).stream().findFirst();
    }

    /** @return whether a schedule added at runtime was removed */
    public boolean removeRuntime(String name) {
        return this.jdbc.update(sql(ScheduleStatements.REMOVE_RUNTIME), new MapSqlParameterSource("name", name)) > 0;
    }

    /**
     * Locks due schedules of the given tasks, skipping those another node has locked. Call inside
     * a transaction; the locks last until it ends.
     * @param now the scheduler's clock
     * @param tasks the tasks this node can enqueue
     * @param limit the most schedules to lock
     */
    public List<Due> lockDue(Instant now, Collection<String> tasks, int limit) {
        return this.jdbc.query(sql(ScheduleStatements.LOCK_DUE), new MapSqlParameterSource("now", timestamp(now))
            .addValue("tasks", SqlArrays.texts(List.copyOf(tasks))).addValue("limit", limit),
                (rs, row) -> new Due(schedule(rs), StoreSupport.instant(rs, "next_fire")));
    }

    /**
     * Records a firing: the next slot, and the last job if one was enqueued.
     * @param lastFire the slot of the last job enqueued, or {@code null} if none was
     * @param lastJob that job, or {@code null}
     */
    public void fired(String name, Instant nextFire, Instant lastFire, Long lastJob) {
        this.jdbc.update(sql(ScheduleStatements.FIRED), new MapSqlParameterSource("name", name).addValue("nextFire", timestamp(nextFire))
            .addValue("lastFire", lastFire == null ? null : timestamp(lastFire), Types.TIMESTAMP_WITH_TIMEZONE)
            .addValue("lastJob", lastJob, Types.BIGINT));
    }

    /**
     * Moves a schedule whose slot could not be fired past it, unless another node did meanwhile.
     * @param name the schedule
     * @param slot the slot skipped: its next slot as it was locked
     * @param nextFire the next slot
     */
    public void skipped(String name, Instant slot, Instant nextFire) {
        this.jdbc.update(sql(ScheduleStatements.SKIPPED), new MapSqlParameterSource("name", name).addValue("slot", timestamp(slot))
            .addValue("nextFire", timestamp(nextFire)));
    }

    /** @return the earliest next slot of the given tasks' schedules, if any */
    public Optional<Instant> nextFire(Collection<String> tasks) {
        return Optional.ofNullable(this.jdbc.query(sql(ScheduleStatements.NEXT_FIRE), new MapSqlParameterSource("tasks",
                SqlArrays.texts(List.copyOf(tasks))), rs -> rs.next() ? StoreSupport.instant(rs, "next") : null));
    }

    private MapSqlParameterSource params(Schedule schedule, Instant nextFire) {
        return new MapSqlParameterSource("name", schedule.name()).addValue("task", schedule.task())
            .addValue("cron", schedule.cron()).addValue("zone", schedule.zone().getId())
            .addValue("payload", schedule.payload()).addValue("catchUp", schedule.catchUp().name())
            .addValue("nextFire", timestamp(nextFire));
    }

    private static Schedule schedule(ResultSet rs) throws SQLException {
        return new Schedule(rs.getString("name"), rs.getString("task"), rs.getString("cron"), ZoneId.of(rs.getString("zone")),
                rs.getString("payload"), CatchUp.valueOf(rs.getString("catch_up")));
    }

    private static java.time.OffsetDateTime timestamp(Instant instant) {
        return instant.atOffset(java.time.ZoneOffset.UTC);
    }



    private String sql(String statement) {
        return StoreSupport.sql(statement, this.config);
    }
}
