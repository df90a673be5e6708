package io.pgqueue.store;

import java.util.LinkedHashMap;
import java.util.Map;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import io.pgqueue.observe.TaskStats;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The one aggregate query behind every depth, lag and stuck-lease number: metrics, the Actuator
 * endpoint and the health indicator all read its cached result. Internal API.
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
                       count(*) FILTER (WHERE state = 'READY' AND schedule_time <= now()) AS ready,
                       count(*) FILTER (WHERE state = 'READY' AND schedule_time > now()) AS scheduled,
                       count(*) FILTER (WHERE state = 'STARTING') AS starting,
                       count(*) FILTER (WHERE state = 'RUNNING') AS running,
                       count(*) FILTER (WHERE state IN ('STARTING', 'RUNNING')
                                          AND expected_status_change_time < now()) AS stuck,
                       extract(epoch FROM now() - min(schedule_time)
                                                  FILTER (WHERE state = 'READY' AND schedule_time <= now())) AS lag
                FROM ${schema}.job
                GROUP BY task
            ), finished AS (
                SELECT task,
                       count(*) FILTER (WHERE state = 'FAILED') AS failed,
                       count(*) FILTER (WHERE state = 'COMPLETED' AND finished_at > now() - interval '1 minute')
                           AS completed_last_minute,
                       count(*) FILTER (WHERE state = 'FAILED' AND finished_at > now() - interval '1 minute')
                           AS failed_last_minute
                FROM ${schema}.job_finished
                -- Each branch a range of job_finished_retention_idx: finished_at alone would leave
                -- no index to use and read every retained row on every poll.
                WHERE state = 'FAILED' OR (state = 'COMPLETED' AND finished_at > now() - interval '1 minute')
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

    private final JdbcTemplate jdbc;

    private final String snapshot;

    /**
     * Creates a store.
     * @param dataSource the queue's database
     * @param config the queue's settings
     */
    public StatsStore(DataSource dataSource, QueueConfig config) {
        this.jdbc = StoreSupport.jdbc(dataSource, config).getJdbcTemplate();
        this.snapshot = StoreSupport.sql(SNAPSHOT, config);
    }

    /**
     * Runs the aggregate query.
     * @return statistics per task that has jobs (active, retained failures or finished in the last minute)
     */
    public Map<String, TaskStats> snapshot() {
        Map<String, TaskStats> stats = new LinkedHashMap<>();
        this.jdbc.query(this.snapshot, rs -> {
            stats.put(rs.getString("task"), new TaskStats(rs.getLong("ready"), rs.getLong("scheduled"),
                    rs.getLong("starting"), rs.getLong("running"), rs.getLong("failed"), rs.getLong("stuck"),
                    rs.getDouble("lag"), rs.getLong("completed_last_minute"), rs.getLong("failed_last_minute"),
                    rs.getBoolean("paused")));
        });
        return stats;
    }
}
