package io.pgqueue.testing;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.pgqueue.Engines;
import io.pgqueue.JobSnapshot;
import io.pgqueue.JobState;
import io.pgqueue.PgQueue;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueConfig;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.QueueStores;
import io.pgqueue.internal.worker.AttemptOutcomes;
import io.pgqueue.store.QueueSchema;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * A queue on a test database: schema migrated, stores and client wired, plus direct SQL for
 * assertions and for simulating time passing.
 * <p>
 * As a JUnit extension ({@code @RegisterExtension static final TestQueue queue = TestQueue.perClass(...);})
 * it gives the test class a fresh database with the queue schema migrated before the first test,
 * empties the queue before each test, and drops the database after the last one. Worker nodes on
 * it come from {@link TestWorkers}. {@link #on(DataSource, QueueConfig, TaskDefinition...)} adds
 * another queue (another schema or other settings) on a database at once.
 */
public final class TestQueue implements BeforeAllCallback, BeforeEachCallback, AfterAllCallback {

    /** The lease of the jobs {@link #claim(String, int)} claims. */
    public static final Duration LEASE = Duration.ofSeconds(30);

    static final JsonMapper MAPPER = JsonMapper.builder().build();

    private final TaskRegistry tasks;

    private final int poolSize;

    private TestDatabase database;

    private HikariDataSource ownPool;

    private DataSource dataSource;

    private QueueConfig config;

    private PgQueue queue;

    private QueueStores stores;

    private QueueClient client;

    private AttemptOutcomes outcomes;

    private JdbcTemplate jdbc;

    private TestQueue(TaskRegistry tasks, int poolSize) {
        this.tasks = tasks;
        this.poolSize = poolSize;
    }

    /**
     * Returns an extension that gives each test class its own queue, on the database's shared pool.
     * @param tasks the task types its {@link #client()} may enqueue
     * @return the extension; register it as a static field
     */
    public static TestQueue perClass(TaskDefinition... tasks) {
        return new TestQueue(TaskRegistry.of(tasks), 0);
    }

    /**
     * Returns this extension with a connection pool of its own, of the given size.
     * @param maximumPoolSize the pool's maximum size
     * @return the extension
     */
    public TestQueue withPoolSize(int maximumPoolSize) {
        return new TestQueue(this.tasks, maximumPoolSize);
    }

    /**
     * Migrates a queue on a database now, e.g. a second schema next to the class's queue.
     * @param dataSource the database
     * @param config the queue's settings
     * @param tasks the task types its {@link #client()} may enqueue
     * @return the queue
     */
    public static TestQueue on(DataSource dataSource, QueueConfig config, TaskDefinition... tasks) {
        TestQueue queue = new TestQueue(TaskRegistry.of(tasks), 0);
        queue.open(dataSource, config, true);
        return queue;
    }

    /**
     * Returns a task definition with every default.
     * @param name the task name
     * @return the definition
     */
    public static TaskDefinition task(String name) {
        return TaskDefinition.builder(name).build();
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        this.database = TestDatabase.createMigrated("pgqueue_test");
        if (this.poolSize > 0) {
            this.ownPool = this.database.newDataSource(this.poolSize);
        }
        open(this.ownPool != null ? this.ownPool : this.database.dataSource(), QueueConfig.defaults(), false);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        clear();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        this.client.close();
        if (this.ownPool != null) {
            this.ownPool.close();
        }
        this.database.close();
    }

    private void open(DataSource dataSource, QueueConfig config, boolean migrate) {
        if (migrate) {
            QueueSchema.migrate(dataSource, config.schema());
        }
        this.dataSource = dataSource;
        this.config = config;
        this.queue = PgQueue.builder(dataSource).config(config).tasks(this.tasks).mapper(MAPPER).build();
        this.stores = Engines.of(this.queue).stores();
        this.client = this.queue.client();
        this.outcomes = new AttemptOutcomes(this.tasks);
        this.jdbc = new JdbcTemplate(dataSource);
    }

    /** @return the database the extension created; {@code null} for a queue made with {@code on} */
    public TestDatabase database() {
        return this.database;
    }

    /** @return the queue's database */
    public DataSource dataSource() {
        return this.dataSource;
    }

    /** @return the queue's settings */
    public QueueConfig config() {
        return this.config;
    }

    /** @return the queue, built but not started */
    public PgQueue queue() {
        return this.queue;
    }

    /** @return the queue's stores */
    public QueueStores stores() {
        return this.stores;
    }

    /** @return the job store */
    public JobStore store() {
        return this.stores.jobs();
    }

    /** @return a client for the task types the queue was declared with */
    public QueueClient client() {
        return this.client;
    }

    /** @return the outcomes of attempts of the declared task types, as a worker decides them */
    public AttemptOutcomes outcomes() {
        return this.outcomes;
    }

    /** @return SQL on the queue's database */
    public JdbcTemplate jdbc() {
        return this.jdbc;
    }

    /**
     * Empties the queue: jobs active, waiting and finished, nodes, task controls, rate buckets, group
     * cursors, schedules, workflows, and the shared statistics snapshot (back to its state after migration).
     */
    public void clear() {
        String schema = this.config.schema();
        this.jdbc.execute("TRUNCATE " + schema + ".job, " + schema + ".job_finished, " + schema + ".node, " + schema
                + ".task_control, " + schema + ".task_rate, " + schema + ".task_group_cursor, " + schema + ".schedule, "
                + schema + ".workflow, " + schema + ".job_waiting, " + schema + ".job_dependency, " + schema + ".job_result, "
                + schema + ".stats_snapshot, " + schema + ".queue_action, " + schema + ".task_history, " + schema + ".message_queue_history, "
                + schema + ".message_move_task, " + schema + ".message_moving, " + schema + ".job_step");
        this.jdbc.execute("UPDATE " + schema + ".workflow_total SET workflows = 0");
        this.jdbc.execute("INSERT INTO " + schema + ".stats_snapshot (singleton) VALUES (true)");
    }

    /**
     * Claims jobs as {@code worker-1}, leaving them STARTING with a {@link #LEASE}.
     * @param task the task
     * @param limit the most jobs to claim
     * @return the claimed jobs
     */
    public List<ClaimedJob> claim(String task, int limit) {
        return claim("worker-1", task, limit);
    }

    /**
     * Claims jobs, leaving them STARTING with a {@link #LEASE}.
     * @param owner the claiming worker
     * @param task the task
     * @param limit the most jobs to claim
     * @return the claimed jobs
     */
    public List<ClaimedJob> claim(String owner, String task, int limit) {
        return store().claim(List.of(new ClaimLimit(task, limit)), owner, JobState.STARTING, LEASE);
    }

    /** @return the state of a job that exists */
    public JobState state(long id) {
        return job(id).state();
    }

    /** @return a job that exists */
    public JobSnapshot job(long id) {
        return store().find(id).orElseThrow();
    }

    /** @return the number of jobs in the active table */
    public long activeJobs() {
        return this.jdbc.queryForObject("SELECT count(*) FROM " + this.config.schema() + ".job", Long.class);
    }

    /** @return the number of jobs in the active table in the given state */
    public long activeJobs(JobState state) {
        return this.jdbc.queryForObject("SELECT count(*) FROM " + this.config.schema() + ".job WHERE state = ?",
                Long.class, state.name());
    }

    /** @return the number of finished jobs kept */
    public long finishedJobs() {
        return this.jdbc.queryForObject("SELECT count(*) FROM " + this.config.schema() + ".job_finished", Long.class);
    }

    /** @return the number of finished jobs kept in the given state */
    public long finishedJobs(JobState state) {
        return this.jdbc.queryForObject("SELECT count(*) FROM " + this.config.schema()
                + ".job_finished WHERE state = ?", Long.class, state.name());
    }

    /** @return the number of jobs, active and finished */
    public long totalJobs() {
        return activeJobs() + finishedJobs();
    }

    /** Moves the lease deadline of a claimed job into the past, as if its worker had stopped heartbeating. */
    public void expireLease(long id) {
        this.jdbc.update("UPDATE " + this.config.schema()
                + ".job SET expected_status_change_time = now() - interval '1 second' WHERE id = ?", id);
    }

    /** Makes a scheduled job due now, as if its time had come. */
    public void makeDue(long id) {
        this.jdbc.update("UPDATE " + this.config.schema() + ".job SET schedule_time = now(), "
                + "delay_tolerance_deadline = CASE WHEN delay_tolerance_deadline IS NULL THEN NULL ELSE now() END "
                + "WHERE id = ?", id);
    }

    /** @return seconds from now (database clock) to the job's schedule time */
    public double secondsUntilDue(long id) {
        return this.jdbc.queryForObject("SELECT extract(epoch FROM schedule_time - now()) FROM "
                + this.config.schema() + ".job WHERE id = ?", Double.class, id);
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
    public long functionCalls(String function, Consumer<JobStore> work) throws SQLException {
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
    public long[] jobTableScansOnceGrown(String task, Consumer<JobStore> firstUse,
            Function<JobStore, Runnable> grownUse) throws SQLException {
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
}
