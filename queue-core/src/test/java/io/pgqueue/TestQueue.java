package io.pgqueue;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;

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
     * @return sequential scans, index scans, rows fetched through indexes
     */
    private long[] jobTableScans(SingleConnectionDataSource connection, Runnable work) {
        JdbcTemplate sameConnection = new JdbcTemplate(connection);
        String scans = "SELECT seq_scan, idx_scan, idx_tup_fetch FROM pg_stat_xact_user_tables "
                + "WHERE relid = CAST(? AS regclass)";
        String table = this.config.schema() + ".job";
        return new TransactionTemplate(new DataSourceTransactionManager(connection)).execute(status -> {
            Map<String, Object> before = sameConnection.queryForMap(scans, table);
            work.run();
            Map<String, Object> after = sameConnection.queryForMap(scans, table);
            return new long[] { (Long) after.get("seq_scan") - (Long) before.get("seq_scan"),
                    (Long) after.get("idx_scan") - (Long) before.get("idx_scan"),
                    (Long) after.get("idx_tup_fetch") - (Long) before.get("idx_tup_fetch") };
        });
    }

    /**
     * Calls of one of the schema's functions, nested calls included, made by work on one
     * connection inside one transaction (track_functions for that transaction only). Read before
     * and after the work: the backend's counts not yet reported include earlier transactions'.
     * @param function the function's name
     * @param work the work, given a store on that connection
     * @return the calls
     */
    long functionCalls(String function, Consumer<JobStore> work) throws SQLException {
        String calls = "SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions WHERE schemaname = ? "
                + "AND funcname = ?";
        try (Connection connection = this.dataSource.getConnection()) {
            SingleConnectionDataSource oneConnection = new SingleConnectionDataSource(connection, true);
            JdbcTemplate sameConnection = new JdbcTemplate(oneConnection);
            JobStore store = new JobStore(oneConnection, this.config);
            return new TransactionTemplate(new DataSourceTransactionManager(oneConnection)).execute(status -> {
                sameConnection.execute("SET LOCAL track_functions = 'pl'");
                long before = sameConnection.queryForObject(calls, Long.class, this.config.schema(), function);
                work.accept(store);
                return sameConnection.queryForObject(calls, Long.class, this.config.schema(), function) - before;
            });
        }
    }

    /**
     * Plans made on a tiny table, used once it has grown: on one connection, {@code firstUse}
     * runs while the job table holds one analyzed job of the task (the connection's plans are
     * made then), then 20,000 more jobs arrive without statistics following them (autovacuum off
     * meanwhile), and the work {@code grownUse} prepares is measured.
     * @param firstUse runs on the tiny table
     * @param grownUse prepares on the grown table and returns the work to measure
     * @return sequential scans, index scans, and rows fetched through indexes of the job table by that work
     */
    long[] jobTableScansOnceGrown(String task, Consumer<JobStore> firstUse, Function<JobStore, Runnable> grownUse)
            throws SQLException {
        String job = this.config.schema() + ".job";
        this.jdbc.execute("ALTER TABLE " + job + " SET (autovacuum_enabled = false)");
        try (Connection connection = this.dataSource.getConnection()) {
            SingleConnectionDataSource oneConnection = new SingleConnectionDataSource(connection, true);
            JobStore store = new JobStore(oneConnection, this.config);
            this.client.enqueue(task, 0);
            this.jdbc.execute("VACUUM ANALYZE " + job);
            firstUse.accept(store);

            this.jdbc.update("INSERT INTO " + job + " (task, payload, max_attempts) SELECT ?, '1', 3 "
                    + "FROM generate_series(1, 20000)", task);
            return jobTableScans(oneConnection, grownUse.apply(store));
        }
        finally {
            this.jdbc.execute("ALTER TABLE " + job + " RESET (autovacuum_enabled)");
        }
    }

    /** Seconds from now (database clock) to the job's schedule time. */
    double secondsUntilDue(long id) {
        return this.jdbc.queryForObject("SELECT extract(epoch FROM schedule_time - now()) FROM "
                + this.config.schema() + ".job WHERE id = ?", Double.class, id);
    }
}
