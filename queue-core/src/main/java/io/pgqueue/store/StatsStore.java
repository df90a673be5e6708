package io.pgqueue.store;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import io.pgqueue.observe.TaskStats;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The one aggregate query behind every depth, lag and stuck-lease number: metrics, the Actuator
 * endpoint and the health indicator all read its cached result. Its result is shared by the
 * nodes through the schema's stats_snapshot row (migration V8): a node counts only when the
 * stored snapshot is older than it accepts and no other node is counting. Internal API.
 */
public final class StatsStore {

    /**
     * Counts per task in one pass over the active-job table (its size is the live backlog, as
     * finished jobs leave it), plus the retained failures and the last minute's finishes from
     * job_finished through its (state, finished_at) index.
     */
    static final String SNAPSHOT = """
            WITH active AS (
                SELECT task,
                       count(*) FILTER (WHERE state = 'READY' AND schedule_time <= statement_timestamp()) AS ready,
                       count(*) FILTER (WHERE state = 'READY' AND schedule_time > statement_timestamp()) AS scheduled,
                       count(*) FILTER (WHERE state = 'STARTING') AS starting,
                       count(*) FILTER (WHERE state = 'RUNNING') AS running,
                       count(*) FILTER (WHERE state IN ('STARTING', 'RUNNING')
                                          AND expected_status_change_time < statement_timestamp()) AS stuck,
                       extract(epoch FROM statement_timestamp() - min(schedule_time)
                               FILTER (WHERE state = 'READY' AND schedule_time <= statement_timestamp())) AS lag
                FROM ${schema}.job
                GROUP BY task
            ), finished AS (
                SELECT task,
                       count(*) FILTER (WHERE state = 'FAILED') AS failed,
                       count(*) FILTER (WHERE state = 'COMPLETED'
                                          AND finished_at > statement_timestamp() - interval '1 minute')
                           AS completed_last_minute,
                       count(*) FILTER (WHERE state = 'FAILED'
                                          AND finished_at > statement_timestamp() - interval '1 minute')
                           AS failed_last_minute
                FROM ${schema}.job_finished
                -- Each branch a range of job_finished_retention_idx: finished_at alone would leave
                -- no index to use and read every retained row on every poll.
                WHERE state = 'FAILED'
                   OR (state = 'COMPLETED' AND finished_at > statement_timestamp() - interval '1 minute')
                GROUP BY task
            )
            SELECT coalesce(a.task, f.task) AS task,
                   coalesce(a.ready, 0) AS ready, coalesce(a.scheduled, 0) AS scheduled,
                   coalesce(a.starting, 0) AS starting, coalesce(a.running, 0) AS running,
                   coalesce(a.stuck, 0) AS stuck, coalesce(a.lag, 0) AS lag,
                   coalesce(f.failed, 0) AS failed, coalesce(f.completed_last_minute, 0) AS completed_last_minute,
                   coalesce(f.failed_last_minute, 0) AS failed_last_minute,
                   coalesce(c.paused, false) AS paused
            FROM active a
            FULL JOIN finished f ON f.task = a.task
            LEFT JOIN ${schema}.task_control c ON c.task = coalesce(a.task, f.task)
            ORDER BY 1
            """;

    /** The stored snapshot: its age (database clock), the count's duration, and its rows. */
    private static final String SHARED = """
            SELECT extract(epoch FROM clock_timestamp() - s.taken_at) * 1000 AS age_ms, s.took_ms, x.*
            FROM ${schema}.stats_snapshot AS s
            LEFT JOIN LATERAL jsonb_to_recordset(s.tasks) AS x(task text, ready bigint, scheduled bigint,
                    starting bigint, running bigint, stuck bigint, lag double precision, failed bigint,
                    completed_last_minute bigint, failed_last_minute bigint, paused boolean) ON true
            """;

    /** Takes the stored snapshot's row lock, unless another node holds it (it is counting). */
    private static final String LOCK_SHARED = "SELECT 1 FROM ${schema}.stats_snapshot FOR UPDATE SKIP LOCKED";

    /** Takes the stored snapshot's row lock, waiting for a node that is counting. */
    private static final String WAIT_FOR_SHARED = "SELECT 1 FROM ${schema}.stats_snapshot FOR UPDATE";

    /** Counts and stores the result as the shared snapshot, taken when the statement began. */
    private static final String COUNT_AND_STORE = """
            WITH counted AS (
            %s
            ), stored AS (
                UPDATE ${schema}.stats_snapshot
                SET taken_at = statement_timestamp(),
                    tasks = (SELECT coalesce(jsonb_agg(to_jsonb(c) ORDER BY c.task), '[]') FROM counted AS c)
            )
            SELECT * FROM counted ORDER BY task
            """.formatted(SNAPSHOT);

    private static final String STORE_DURATION = "UPDATE ${schema}.stats_snapshot SET took_ms = ?";

    /** Puts the row back if someone deleted it. */
    private static final String RESTORE_SHARED =
            "INSERT INTO ${schema}.stats_snapshot (singleton) VALUES (true) ON CONFLICT (singleton) DO NOTHING";

    private final JdbcTemplate jdbc;

    private final TransactionTemplate transactions;

    private final String shared;

    private final String lockShared;

    private final String waitForShared;

    private final String countAndStore;

    private final String storeDuration;

    private final String restoreShared;

    /**
     * Creates a store.
     * @param dataSource the queue's database
     * @param config the queue's settings
     */
    public StatsStore(DataSource dataSource, QueueConfig config) {
        this.jdbc = StoreSupport.jdbc(dataSource, config).getJdbcTemplate();
        this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        // Its own transaction even when called inside a caller's: the row lock must not outlive the count.
        this.transactions.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        this.shared = StoreSupport.sql(SHARED, config);
        this.lockShared = StoreSupport.sql(LOCK_SHARED, config);
        this.waitForShared = StoreSupport.sql(WAIT_FOR_SHARED, config);
        this.countAndStore = StoreSupport.sql(COUNT_AND_STORE, config);
        this.storeDuration = StoreSupport.sql(STORE_DURATION, config);
        this.restoreShared = StoreSupport.sql(RESTORE_SHARED, config);
    }

    /**
     * Returns the shared snapshot if it is younger than {@code maxAge}, or if another node is
     * counting right now (then the previous one, however old); otherwise counts, stores the
     * result for the other nodes and returns it. A count that fails (past the statement timeout,
     * say) still stores how long it ran, so that the nodes wait accordingly before the next.
     * @param maxAge the oldest snapshot acceptable; zero counts anew, waiting for a node that is
     * counting to finish first
     * @return the snapshot
     */
    public Snapshot snapshot(Duration maxAge) {
        long[] countStart = new long[1];
        try {
            return this.transactions.execute(status -> {
                Snapshot stored = shared();
                if (stored.isYoungerThan(maxAge)) {
                    return stored;
                }
                // With nothing counted yet (a new schema), wait for a node counting rather than show nothing.
                boolean wait = maxAge.isZero() || stored.age() == null;
                if (this.jdbc.queryForList(wait ? this.waitForShared : this.lockShared).isEmpty()) {
                    return stored;
                }
                if (!maxAge.isZero()) {
                    // Another node may have stored a count between the read and the lock.
                    stored = shared();
                    if (stored.isYoungerThan(maxAge)) {
                        return stored;
                    }
                }
                countStart[0] = System.nanoTime();
                Map<String, TaskStats> stats = new LinkedHashMap<>();
                this.jdbc.query(this.countAndStore, rs -> {
                    stats.put(rs.getString("task"), taskStats(rs));
                });
                Duration took = Duration.ofNanos(System.nanoTime() - countStart[0]);
                this.jdbc.update(this.storeDuration, millis(took));
                return new Snapshot(stats, took, took);
            });
        }
        catch (RuntimeException ex) {
            if (countStart[0] != 0) {
                try {
                    Duration ran = Duration.ofNanos(System.nanoTime() - countStart[0]);
                    this.jdbc.update(this.storeDuration, millis(ran));
                }
                catch (RuntimeException notStored) {
                    ex.addSuppressed(notStored);
                }
            }
            throw ex;
        }
    }

    private Snapshot shared() {
        Map<String, TaskStats> stats = new LinkedHashMap<>();
        // One row per task (at least one), each with the snapshot's age and count duration.
        List<Snapshot> rows = this.jdbc.query(this.shared, (rs, row) -> {
            if (rs.getString("task") != null) {
                stats.put(rs.getString("task"), taskStats(rs));
            }
            double age = rs.getDouble("age_ms");
            return new Snapshot(stats, rs.wasNull() ? null : duration(age), duration(rs.getDouble("took_ms")));
        });
        if (rows.isEmpty()) {
            this.jdbc.update(this.restoreShared);
            return new Snapshot(Map.of(), null, Duration.ZERO);
        }
        return rows.get(0);
    }

    private static Duration duration(double millis) {
        return Duration.ofNanos((long) (millis * 1e6));
    }

    private static double millis(Duration duration) {
        return duration.toNanos() / 1e6;
    }

    private static TaskStats taskStats(ResultSet rs) throws SQLException {
        return new TaskStats(rs.getLong("ready"), rs.getLong("scheduled"), rs.getLong("starting"),
                rs.getLong("running"), rs.getLong("failed"), rs.getLong("stuck"), rs.getDouble("lag"),
                rs.getLong("completed_last_minute"), rs.getLong("failed_last_minute"), rs.getBoolean("paused"));
    }

    /**
     * Statistics per task as counted at one moment.
     * @param tasks statistics per task that has jobs
     * @param age how long ago the count began (database clock), or {@code null} if none was stored yet
     * @param took how long the count took
     */
    public record Snapshot(Map<String, TaskStats> tasks, Duration age, Duration took) {

        boolean isYoungerThan(Duration maxAge) {
            return this.age != null && this.age.compareTo(maxAge) < 0;
        }
    }
}
