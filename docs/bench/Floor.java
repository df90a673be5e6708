/*
 * Bare JDBC pipeline probe, the latency floor of an enqueue -> claim (docs/design-notes.md, "The
 * latency floor"): INSERT+NOTIFY on one connection, LISTEN on a second, claim on a third; prints
 * call->claimed, insert and notification-arrival percentiles. -Dfix=true applies the listener
 * adjustment pgqueue makes (no 1 ms probe after each notification); -Dsame=true claims on the
 * listening connection itself (its backend has just woken to deliver the notification).
 *   javac -cp postgresql.jar Floor.java && java -Dfix=true -cp postgresql.jar:. Floor 200 10
 */
import java.sql.*;
import java.util.*;
import java.util.concurrent.locks.LockSupport;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

public class Floor {
    public static void main(String[] a) throws Exception {
        String url = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres";
        int rate = Integer.parseInt(a[0]); int n = rate * Integer.parseInt(a[1]);
        boolean sameThread = a.length > 2 && a[2].equals("inline");
        try (Connection c = DriverManager.getConnection(url)) {
            c.createStatement().execute("drop table if exists floor_job; create table floor_job(id bigserial primary key, state text not null default 'READY', t bigint)");
            c.createStatement().execute("create index on floor_job(id) where state='READY'");
        }
        Connection prod = DriverManager.getConnection(url);
        Connection lis = DriverManager.getConnection(url);
        Connection claim = Boolean.getBoolean("same") ? lis : DriverManager.getConnection(url);
        lis.createStatement().execute("LISTEN floor");
        if (Boolean.getBoolean("fix")) {
            Object qe = lis.unwrap(org.postgresql.core.BaseConnection.class).getQueryExecutor();
            java.lang.reflect.Field f = org.postgresql.core.QueryExecutorBase.class.getDeclaredField("pgStream"); f.setAccessible(true);
            Object st = f.get(qe);
            java.lang.reflect.Field g = st.getClass().getDeclaredField("nextStreamAvailableCheckTime"); g.setAccessible(true);
            g.setLong(st, Long.MAX_VALUE);
        }
        long[] lat = new long[n]; long[] ins = new long[n]; long[] notif = new long[n];
        final int[] got = {0};
        Thread t = new Thread(() -> {
            try {
                PreparedStatement ps = claim.prepareStatement("update floor_job set state='RUNNING' where id = any(array(select id from floor_job where state='READY' order by id limit 10 for update skip locked)) and (SELECT set_config('synchronous_commit', 'off', true)) = 'off' returning id, t");
                PGConnection pg = lis.unwrap(PGConnection.class);
                while (got[0] < n) {
                    PGNotification[] ns = pg.getNotifications(Integer.getInteger("to", 500));
                    if (ns == null) continue;
                    long nn = System.nanoTime();
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) { int id = (int) rs.getLong(1) - 1; long now = System.nanoTime(); lat[id] = now - rs.getLong(2); notif[id] = nn - rs.getLong(2); got[0]++; }
                    }
                }
            } catch (Exception e) { e.printStackTrace(); }
        });
        t.start();
        PreparedStatement ip = prod.prepareStatement("with i as (insert into floor_job(t) values (?) returning id) select pg_notify('floor', '') from i");
        long interval = 1_000_000_000L / rate; long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            long due = start + i * interval;
            while (System.nanoTime() < due) LockSupport.parkNanos(Math.max(1000, due - System.nanoTime() - 50_000));
            long before = System.nanoTime();
            ip.setLong(1, before); ip.executeQuery().close();
            ins[i] = System.nanoTime() - before;
        }
        t.join(10000);
        Arrays.sort(lat); Arrays.sort(ins); Arrays.sort(notif);
        System.out.printf("rate=%d total p50=%.3f p99=%.3f | insert p50=%.3f p99=%.3f | notify-arrival p50=%.3f p99=%.3f%n", rate,
          lat[n/2]/1e6, lat[n*99/100]/1e6, ins[n/2]/1e6, ins[n*99/100]/1e6, notif[n/2]/1e6, notif[n*99/100]/1e6);
        System.exit(0);
    }
}
