/*
 * Plan-cache probe (docs/design-notes.md, "Plans"): times the claim written as a statement through
 * bare JDBC, one execution every 2 ms after another connection inserted one job, with literal
 * arrays and with bound array parameters, and under each plan_cache_mode. With parameters
 * PostgreSQL re-plans the statement on every execution (its generic plan assumes 10 rows per unnest
 * and always looks dearer than the custom plan), 0.15-0.25 ms per claim on the benchmark machine.
 * Needs the benchmark's schema (run the benchmark once, or QueueSchema.migrate into pgqueue_bench).
 *   javac -cp postgresql.jar PlanCache.java && java -cp postgresql.jar:. PlanCache
 */
import java.sql.*;
import java.util.*;
import java.util.concurrent.locks.LockSupport;

public class PlanCache {
    static final Object[] TASKS = { "text", new String[] { "ping" } };
    static final Object[] LIMITS = { "integer", new Integer[] { 8 } };

    static long[] run(Connection c, String sql, int n, Runnable before) throws Exception {
        long[] t = new long[n];
        PreparedStatement ps = c.prepareStatement(sql);
        for (int i = 0; i < n; i++) {
            before.run(); LockSupport.parkNanos(2_000_000);
            long t0 = System.nanoTime();
            boolean rs = ps.execute();
            if (rs) try (ResultSet r = ps.getResultSet()) { while (r.next()) {} }
            t[i] = System.nanoTime() - t0;
        }
        return t;
    }
    /** Like run, binding the given arrays (element type, values) to the statement's parameters. */
    static long[] runP(Connection c, String sql, int n, Runnable before, Object[]... arrays) throws Exception {
        long[] t = new long[n];
        PreparedStatement ps = c.prepareStatement(sql);
        for (int i = 0; i < n; i++) {
            before.run(); LockSupport.parkNanos(2_000_000);
            long t0 = System.nanoTime();
            for (int k = 0; k < arrays.length; k++) {
                ps.setArray(k + 1, c.createArrayOf((String) arrays[k][0], (Object[]) arrays[k][1]));
            }
            try (ResultSet r = ps.executeQuery()) { while (r.next()) {} }
            t[i] = System.nanoTime() - t0;
        }
        return t;
    }
    static void p(String name, long[] t) {
        int n = t.length; long[] s = Arrays.copyOfRange(t, n / 5, n); Arrays.sort(s);
        System.out.printf("%-40s p50=%.3f p90=%.3f%n", name, s[s.length / 2] / 1e6, s[s.length * 9 / 10] / 1e6);
    }
    public static void main(String[] a) throws Exception {
        String url = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";
        Connection c = DriverManager.getConnection(url), ins = DriverManager.getConnection(url);
        PreparedStatement ip = ins.prepareStatement("INSERT INTO pgqueue_bench.job (task, payload, max_attempts) VALUES ('ping', '1', 5)");
        Runnable insert = () -> { try { ip.executeUpdate(); } catch (SQLException e) { throw new RuntimeException(e); } };
        Runnable nothing = () -> {};
        int n = 2000;
        String claim = "UPDATE pgqueue_bench.job SET state = 'STARTING', lease_owner = 'x', attempt = attempt + 1, started_at = now(), expected_status_change_time = now() WHERE id = ANY(ARRAY(SELECT id FROM pgqueue_bench.job WHERE task = 'ping' AND state = 'READY' ORDER BY priority DESC, coalesce(delay_tolerance_deadline, schedule_time) LIMIT 8 FOR UPDATE SKIP LOCKED)) AND (SELECT set_config('synchronous_commit', 'off', true)) = 'off' RETURNING id";
        String full = "UPDATE pgqueue_bench.job SET state = 'STARTING', lease_owner = 'x', lease_epoch = lease_epoch + 1, attempt = attempt + 1, started_at = now(), expected_status_change_time = now() + 60000 * interval '1 millisecond' WHERE id = ANY(ARRAY(SELECT j.id FROM unnest(CAST('{ping}' AS text[]), CAST('{8}' AS integer[])) AS t(task, lim) CROSS JOIN LATERAL (SELECT id FROM pgqueue_bench.job WHERE job.task = t.task AND job.state = 'READY' AND job.schedule_time <= now() AND job.attempt < job.max_attempts ORDER BY job.priority DESC, coalesce(job.delay_tolerance_deadline, job.schedule_time) LIMIT t.lim FOR UPDATE SKIP LOCKED) j)) AND (SELECT set_config('synchronous_commit', 'off', true)) = 'off' RETURNING id, lease_epoch, task, CAST(payload AS text) AS payload, CAST(headers AS text) AS headers, priority, attempt, max_attempts, schedule_time, delay_tolerance_deadline, created_at, started_at, expected_status_change_time";
        p("full claim after insert", run(c, full, n, insert));
        p("full claim RETURNING id", run(c, full.substring(0, full.indexOf("RETURNING")) + "RETURNING id", n, insert));
        p("full claim RETURNING id,ts", run(c, full.substring(0, full.indexOf("RETURNING")) + "RETURNING id, created_at, started_at, schedule_time", n, insert));
        p("full claim RETURNING id,payload", run(c, full.substring(0, full.indexOf("RETURNING")) + "RETURNING id, CAST(payload AS text), CAST(headers AS text)", n, insert));
        p("simple claim", run(c, claim, n, insert));
        String param = full.replace("CAST('{ping}' AS text[])", "CAST(? AS text[])").replace("CAST('{8}' AS integer[])", "CAST(? AS integer[])");
        p("param claim after insert", runP(c, param, n, insert, TASKS, LIMITS));
        p("param claim after insert", runP(c, param, n, insert, TASKS, LIMITS));
        String param2 = full.replace("CAST('{8}' AS integer[])", "CAST(? AS integer[])");
        p("param limit only", runP(c, param2, n, insert, LIMITS));
        c.createStatement().execute("set plan_cache_mode = force_generic_plan");
        p("param claim generic", runP(c, param + " ", n, insert, TASKS, LIMITS));
        c.createStatement().execute("set plan_cache_mode = force_custom_plan");
        p("param claim custom", runP(c, param + "  ", n, insert, TASKS, LIMITS));
        c.createStatement().execute("set plan_cache_mode = auto");
        p("param claim auto", runP(c, param + "   ", n, insert, TASKS, LIMITS));
        p("full claim after insert", run(c, full, n, insert));
    }
}
