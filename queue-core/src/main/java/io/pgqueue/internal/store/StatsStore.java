package io.pgqueue.internal.store;

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
 * stored snapshot is older than it accepts and no other node is counting. Internal API; its SQL is
 * in {@link StatsStatements}.
 */
public final class StatsStore {

    private final JdbcTemplate jdbc;

    private final TransactionTemplate transactions;

    private final String shared;

    private final String lockShared;

    private final String waitForShared;

    private final String countAndStore;

    private final String storeDuration;

    private final String restoreShared;
    private final String workflowCounts;

    private final String suspendedCounts;

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
        this.shared = StoreSupport.sql(StatsStatements.SHARED, config);
        this.lockShared = StoreSupport.sql(StatsStatements.LOCK_SHARED, config);
        this.waitForShared = StoreSupport.sql(StatsStatements.WAIT_FOR_SHARED, config);
        this.countAndStore = StoreSupport.sql(StatsStatements.COUNT_AND_STORE, config);
        this.storeDuration = StoreSupport.sql(StatsStatements.STORE_DURATION, config);
        this.restoreShared = StoreSupport.sql(StatsStatements.RESTORE_SHARED, config);
        this.workflowCounts = StoreSupport.sql(StatsStatements.WORKFLOW_COUNTS, config);
        this.suspendedCounts = StoreSupport.sql(StatsStatements.SUSPENDED_COUNTS, config);
    }

    /**
     * Returns how long the oldest transaction of the database that holds back cleanup (VACUUM) has
     * been open.
     * @return the age, zero when no other transaction holds a snapshot
     */
    public Duration oldestTransaction() {
        Double seconds = this.jdbc.queryForObject(StatsStatements.OLDEST_TRANSACTION, Double.class);
        return Duration.ofMillis(Math.round((seconds == null ? 0 : seconds) * 1000));
    }

    /**
     * Counts workflows: those running now, and those that ended per final state since the schema
     * was created (cumulative: retention does not lower them).
     * @return counts by state: RUNNING, COMPLETED, FAILED, CANCELLED
     */
    public Map<String, Long> workflowCounts() {
        Map<String, Long> counts = new LinkedHashMap<>();
        this.jdbc.query(this.workflowCounts, rs -> {
            counts.put(rs.getString("state"), rs.getLong("workflows"));
        });
        return counts;
    }

    /**
     * Counts the jobs of durable handlers suspended now.
     * @return jobs by what they wait for: "sleep", "signal"
     */
    public Map<String, Long> suspendedCounts() {
        Map<String, Long> counts = new LinkedHashMap<>();
        this.jdbc.query(this.suspendedCounts, rs -> {
            counts.put(rs.getString("reason"), rs.getLong("jobs"));
        });
        return counts;
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
