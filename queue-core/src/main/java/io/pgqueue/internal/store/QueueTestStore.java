package io.pgqueue.internal.store;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import javax.sql.DataSource;

import io.pgqueue.JobSnapshot;
import io.pgqueue.QueueConfig;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;

/**
 * What tests do to a queue besides running its jobs: read a task's jobs, move the queue's time,
 * promote a job and empty the queue. Statements run in the caller's transaction when there is one.
 */
public final class QueueTestStore {

    private final NamedParameterJdbcTemplate jdbc;

    private final String activeJobs;
    private final String shiftReady;
    private final String shiftReadyJobs;
    private final String shiftWaiting;
    private final String readyTask;
    private final String promote;
    private final String empty;

    /**
     * @param dataSource the queue's database
     * @param config the queue's settings
     */
    public QueueTestStore(DataSource dataSource, QueueConfig config) {
        this.jdbc = StoreSupport.jdbc(dataSource, config);
        this.activeJobs = StoreSupport.sql(QueueTestStatements.ACTIVE_JOBS, config);
        this.shiftReady = StoreSupport.sql(QueueTestStatements.SHIFT_READY, config);
        this.shiftReadyJobs = StoreSupport.sql(QueueTestStatements.SHIFT_READY_JOBS, config);
        this.shiftWaiting = StoreSupport.sql(QueueTestStatements.SHIFT_WAITING, config);
        this.readyTask = StoreSupport.sql(QueueTestStatements.READY_TASK, config);
        this.promote = StoreSupport.sql(QueueTestStatements.PROMOTE, config);
        this.empty = StoreSupport.sql(QueueTestStatements.EMPTY, config);
    }

    /**
     * @param task the task
     * @return its active and waiting jobs, oldest first
     */
    public List<JobSnapshot> activeJobs(String task) {
        return this.jdbc.query(this.activeJobs, new MapSqlParameterSource("task", task), JobStore.SNAPSHOT);
    }

    /**
     * Makes READY jobs due earlier.
     * @param by how much earlier
     * @param ids the jobs, or {@code null} for every READY job
     */
    public void shiftReady(Duration by, List<Long> ids) {
        if (ids == null) {
            this.jdbc.update(this.shiftReady, new MapSqlParameterSource("millis", by.toMillis()));
        }
        else if (!ids.isEmpty()) {
            this.jdbc.update(this.shiftReadyJobs, new MapSqlParameterSource("millis", by.toMillis())
                .addValue("ids", SqlArrays.bigints(ids)));
        }
    }

    /**
     * Makes waiting jobs with a run-at time run earlier.
     * @param by how much earlier
     */
    public void shiftWaiting(Duration by) {
        this.jdbc.update(this.shiftWaiting, new MapSqlParameterSource("millis", by.toMillis()));
    }

    /**
     * @param jobId a job
     * @return its task, or empty if no such job is READY
     */
    public Optional<String> readyTask(long jobId) {
        return this.jdbc.queryForList(this.readyTask, new MapSqlParameterSource("id", jobId), String.class).stream()
            .findFirst();
    }

    /**
     * Makes a READY job the next of its task to be claimed, due or not.
     * @param jobId the job
     * @return its task, or empty if no such job is READY
     */
    public Optional<String> promote(long jobId) {
        return this.jdbc.queryForList(this.promote, new MapSqlParameterSource("id", jobId), String.class).stream()
            .findFirst();
    }

    /** Deletes every job, workflow, schedule and task control. */
    public void empty() {
        this.jdbc.getJdbcTemplate().execute(this.empty);
    }

    /** @return the name of the database the queue is on */
    public String databaseName() {
        return this.jdbc.getJdbcTemplate().queryForObject(QueueTestStatements.DATABASE, String.class);
    }
}
