/*
 * JDBC round trip of the fenced writes (docs/design-notes.md, "Plans"): per iteration, insert a
 * batch of jobs, claim them, then time JobStore.markRunning and JobStore.record (completed) for the
 * batch on one connection; prints p50 over 250 iterations after 50 discarded. To compare two
 * versions of the writes, run it against each build alternately (e.g. from a second git worktree):
 *   CP=queue-core/target/classes:$(cat cp.txt)   # cp.txt: mvn dependency:build-classpath of queue-benchmark,
 *                                                 # without the io/pgqueue jars
 *   javac -d /tmp/probe -cp $CP docs/bench/WriteProbe.java && java -cp /tmp/probe:$CP WriteProbe 1
 * It drops and recreates the schema "planprobe" on 127.0.0.1:5432/test.
 */
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.pgqueue.JobState;
import io.pgqueue.QueueConfig;
import io.pgqueue.store.ClaimLimit;
import io.pgqueue.store.ClaimedJob;
import io.pgqueue.store.JobStore;
import io.pgqueue.store.Lease;
import io.pgqueue.store.NewJob;
import io.pgqueue.store.Outcome;
import io.pgqueue.store.QueueSchema;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

public class WriteProbe {
    public static void main(String[] a) {
        int batch = Integer.parseInt(a[0]);
        SingleConnectionDataSource ds = new SingleConnectionDataSource("jdbc:postgresql://127.0.0.1:5432/test?user=postgres", true);
        QueueConfig config = QueueConfig.defaults().withSchema("planprobe");
        new JdbcTemplate(ds).execute("DROP SCHEMA IF EXISTS planprobe CASCADE");
        QueueSchema.migrate(ds, "planprobe");
        JobStore store = new JobStore(ds, config);
        List<Long> mark = new ArrayList<>();
        List<Long> record = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            List<NewJob> jobs = new ArrayList<>();
            for (int j = 0; j < batch; j++) {
                jobs.add(new NewJob("probe", "1", "{}", 0, null, 0, null, 5, null));
            }
            store.insert(jobs);
            List<Lease> leases = store.claim(List.of(new ClaimLimit("probe", batch)), "me", JobState.STARTING,
                    Duration.ofMinutes(1)).stream().map(ClaimedJob::lease).toList();
            long t0 = System.nanoTime();
            store.markRunning(leases, Duration.ofMinutes(1));
            long t1 = System.nanoTime();
            store.record(leases.stream().map(Outcome::completed).toList());
            long t2 = System.nanoTime();
            if (i >= 50) {
                mark.add(t1 - t0);
                record.add(t2 - t1);
            }
        }
        Collections.sort(mark);
        Collections.sort(record);
        System.out.printf("batch=%d mark_running p50=%.3f ms record p50=%.3f ms%n", batch,
                mark.get(mark.size() / 2) / 1e6, record.get(record.size() / 2) / 1e6);
    }
}
