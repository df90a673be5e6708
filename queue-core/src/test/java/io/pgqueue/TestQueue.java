package io.pgqueue;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import io.pgqueue.store.ClaimLimit;
import io.pgqueue.store.ClaimedJob;
import io.pgqueue.store.JobStore;
import io.pgqueue.store.QueueSchema;
import io.pgqueue.testing.TestDatabase;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * A queue on a test database: schema migrated, store and client wired, plus direct SQL for
 * assertions and for simulating time passing.
 */
final class TestQueue {

    static final Duration LEASE = Duration.ofSeconds(30);

    final DataSource dataSource;
    final QueueConfig config;
    final JobStore store;
    final QueueClient client;
    final AttemptOutcomes outcomes;
    final JdbcTemplate jdbc;

    private TestQueue(DataSource dataSource, QueueConfig config, TaskRegistry tasks) {
        this.dataSource = dataSource;
        this.config = config;
        QueueSchema.migrate(dataSource, config.schema());
        this.store = new JobStore(dataSource, config);
        this.client = new QueueClient(this.store, config, tasks, JsonMapper.builder().build());
        this.outcomes = new AttemptOutcomes(tasks);
        this.jdbc = new JdbcTemplate(dataSource);
    }

    static TestQueue on(TestDatabase db, TaskDefinition... tasks) {
        return on(db.dataSource(), QueueConfig.defaults(), tasks);
    }

    static TestQueue on(DataSource dataSource, QueueConfig config, TaskDefinition... tasks) {
        return new TestQueue(dataSource, config, TaskRegistry.of(tasks));
    }

    static TaskDefinition task(String name) {
        return TaskDefinition.builder(name).build();
    }

    /** Removes every job, so each test starts from an empty queue. */
    void clear() {
        this.jdbc.execute("TRUNCATE " + this.config.schema() + ".job, " + this.config.schema() + ".job_finished");
    }

    List<ClaimedJob> claim(String task, int limit) {
        return this.store.claim(List.of(new ClaimLimit(task, limit)), "worker-1", JobState.STARTING, LEASE);
    }

    List<ClaimedJob> claim(String owner, String task, int limit) {
        return this.store.claim(List.of(new ClaimLimit(task, limit)), owner, JobState.STARTING, LEASE);
    }

    JobState state(long id) {
        return this.store.find(id).orElseThrow().state();
    }

    JobSnapshot job(long id) {
        return this.store.find(id).orElseThrow();
    }

    long activeJobs() {
        return this.jdbc.queryForObject("SELECT count(*) FROM " + this.config.schema() + ".job", Long.class);
    }

    long finishedJobs() {
        return this.jdbc.queryForObject("SELECT count(*) FROM " + this.config.schema() + ".job_finished", Long.class);
    }

    long totalJobs() {
        return activeJobs() + finishedJobs();
    }

    /** Moves the lease deadline of a claimed job into the past, as if its worker had stopped heartbeating. */
    void expireLease(long id) {
        this.jdbc.update("UPDATE " + this.config.schema()
                + ".job SET expected_status_change_time = now() - interval '1 second' WHERE id = ?", id);
    }

    /** Makes a scheduled job due now, as if its time had come. */
    void makeDue(long id) {
        this.jdbc.update("UPDATE " + this.config.schema() + ".job SET schedule_time = now(), "
                + "delay_tolerance_deadline = CASE WHEN delay_tolerance_deadline IS NULL THEN NULL ELSE now() END "
                + "WHERE id = ?", id);
    }

    /**
     * Sequential and index scans of the job table made by work on one connection, read before and
     * after it inside one transaction (a backend reports its table accesses only between
     * transactions, so pg_stat_xact_user_tables shows this backend's own).
     * @return sequential scans, index scans
     */
    long[] jobTableScans(SingleConnectionDataSource connection, Runnable work) {
        JdbcTemplate sameConnection = new JdbcTemplate(connection);
        String scans = "SELECT seq_scan, idx_scan FROM pg_stat_xact_user_tables WHERE relid = CAST(? AS regclass)";
        String table = this.config.schema() + ".job";
        return new TransactionTemplate(new DataSourceTransactionManager(connection)).execute(status -> {
            Map<String, Object> before = sameConnection.queryForMap(scans, table);
            work.run();
            Map<String, Object> after = sameConnection.queryForMap(scans, table);
            return new long[] { (Long) after.get("seq_scan") - (Long) before.get("seq_scan"),
                    (Long) after.get("idx_scan") - (Long) before.get("idx_scan") };
        });
    }

    /** Seconds from now (database clock) to the job's schedule time. */
    double secondsUntilDue(long id) {
        return this.jdbc.queryForObject("SELECT extract(epoch FROM schedule_time - now()) FROM "
                + this.config.schema() + ".job WHERE id = ?", Double.class, id);
    }
}
