package io.pgqueue.benchmark;

import javax.sql.DataSource;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Server-wide counters read around a drain: WAL written and checkpoints started. WAL per job is
 * what the disk pays for each job's life cycle; a checkpoint inside a drain makes the first change
 * to every page write a full page image, which tells a slow run from a slow design.
 * @param walBytes the WAL position in bytes
 * @param checkpoints checkpoints started (timed and requested)
 */
record ServerCounters(long walBytes, long checkpoints) {

    static ServerCounters read(DataSource dataSource) {
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        // PostgreSQL 17 moved the checkpoint counters from pg_stat_bgwriter to pg_stat_checkpointer.
        boolean checkpointer = jdbc.queryForObject("SELECT current_setting('server_version_num')::int >= 170000",
                Boolean.class);
        String checkpoints = checkpointer ? "SELECT num_timed + num_requested FROM pg_stat_checkpointer"
                : "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter";
        return jdbc.queryForObject("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint AS wal, ("
                + checkpoints + ") AS checkpoints",
                (rs, row) -> new ServerCounters(rs.getLong("wal"), rs.getLong("checkpoints")));
    }

    ServerCounters minus(ServerCounters earlier) {
        return new ServerCounters(this.walBytes - earlier.walBytes, this.checkpoints - earlier.checkpoints);
    }
}
