package io.pgqueue.benchmark;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import javax.sql.DataSource;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Server-wide counters read around a drain: WAL written and checkpoints started. WAL per job is
 * what the disk pays for each job's life cycle; a checkpoint inside a drain makes the first change
 * to every page write a full page image, which tells a slow run from a slow design. When the
 * server runs on this machine, also the CPU time of its processes, which (unlike the drain's rate)
 * the time the shared machine gives to others does not inflate.
 * @param walBytes the WAL position in bytes
 * @param checkpoints checkpoints started (timed and requested)
 * @param cpuTicks CPU time of every process named {@code postgres} on this machine, exited
 * backends included (through the postmaster's reaped children), in clock ticks; -1 if none is visible
 * (after {@link #minus}: the time spent between the two readings)
 * @param ticksByProcess the same per process id (empty after {@link #minus})
 */
record ServerCounters(long walBytes, long checkpoints, long cpuTicks, Map<Long, Long> ticksByProcess) {

    /** Linux reports process times in /proc in units of USER_HZ, 100 per second. */
    private static final double MICROS_PER_TICK = 10_000;

    static ServerCounters read(DataSource dataSource) {
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        // PostgreSQL 17 moved the checkpoint counters from pg_stat_bgwriter to pg_stat_checkpointer.
        boolean checkpointer = jdbc.queryForObject("SELECT current_setting('server_version_num')::int >= 170000",
                Boolean.class);
        String checkpoints = checkpointer ? "SELECT num_timed + num_requested FROM pg_stat_checkpointer"
                : "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter";
        return jdbc.queryForObject("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint AS wal, ("
                + checkpoints + ") AS checkpoints",
                (rs, row) -> {
                    Map<Long, Long> ticks = postgresTicksByProcess();
                    return new ServerCounters(rs.getLong("wal"), rs.getLong("checkpoints"),
                            ticks.isEmpty() ? -1 : ticks.values().stream().mapToLong(Long::longValue).sum(), ticks);
                });
    }

    /**
     * The counters between an earlier reading and this one. The CPU time is summed per process that
     * lives at this reading (a process started since counts from zero): a process that ended meanwhile,
     * a whole other server on the machine included, takes its time with it instead of making the
     * difference negative; a backend of this server that ended left its time in its postmaster's.
     */
    ServerCounters minus(ServerCounters earlier) {
        long ticks = -1;
        if (this.cpuTicks >= 0 && earlier.cpuTicks >= 0) {
            ticks = 0;
            for (Map.Entry<Long, Long> process : this.ticksByProcess.entrySet()) {
                ticks += Math.max(0, process.getValue() - earlier.ticksByProcess.getOrDefault(process.getKey(), 0L));
            }
        }
        return new ServerCounters(this.walBytes - earlier.walBytes, this.checkpoints - earlier.checkpoints, ticks,
                Map.of());
    }

    /**
     * @param jobs the jobs the counters cover
     * @return the server's CPU time per job in microseconds, or -1 when it is not on this machine
     */
    double cpuMicrosPerJob(int jobs) {
        return this.cpuTicks < 0 ? -1 : this.cpuTicks * MICROS_PER_TICK / jobs;
    }

    /** @return the CPU time of the postgres processes on this machine in clock ticks, or -1 if none is visible */
    static long postgresCpuTicks() {
        Map<Long, Long> ticks = postgresTicksByProcess();
        return ticks.isEmpty() ? -1 : ticks.values().stream().mapToLong(Long::longValue).sum();
    }

    /**
     * @return per process named {@code postgres} on this machine, its CPU time and its reaped
     * children's in clock ticks; empty if none is visible
     */
    private static Map<Long, Long> postgresTicksByProcess() {
        Map<Long, Long> ticks = new HashMap<>();
        // An eager listing: processes come and go while it is read.
        String[] entries = new File("/proc").list();
        if (entries == null) {
            return ticks;
        }
        for (String entry : entries) {
            if (!entry.chars().allMatch(Character::isDigit)) {
                continue;
            }
            try {
                String stat = Files.readString(Path.of("/proc", entry, "stat"));
                int open = stat.indexOf('(');
                int close = stat.lastIndexOf(')');
                if (open < 0 || close < open || !stat.substring(open + 1, close).equals("postgres")) {
                    continue;
                }
                // After the name: state, then fields 4 to 52; utime, stime, cutime, cstime are 14 to 17.
                String[] fields = stat.substring(close + 2).split(" ");
                long total = 0;
                for (int field = 14; field <= 17; field++) {
                    total += Long.parseLong(fields[field - 3]);
                }
                ticks.put(Long.parseLong(entry), total);
            }
            catch (IOException | RuntimeException ex) {
                // ended meanwhile
            }
        }
        return ticks;
    }
}
