package io.pgqueue.peers;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.SchedulerClient;
import com.github.kagkarlsson.scheduler.task.TaskInstance;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * db-scheduler 16.7.1 in the peer benchmark (../README.md). Usage:
 * {@code java -cp 'target/classes:target/lib/*' io.pgqueue.peers.DbSchedulerPeer workload=drain|latency|enqueue
 * [config=throughput] [threads=20 lower=4.0 upper=20.0 polling_ms=100] [repeat=3 ...]}.
 *
 * <p>{@code throughput}: the polling strategy its README recommends above 1,000 executions/s,
 * lock-and-fetch ({@code select for update .. skip locked}), with the threads and limits of its
 * published benchmark (20 threads, lower 4.0, upper 20.0); immediate execution on, so that a
 * schedule() due now wakes the poller; a 100 ms polling interval as the backstop (default 10 s).
 * One-time task instances without data: the instance id is the job's index.
 */
public final class DbSchedulerPeer implements PeerHarness.Peer {

    /** The table of db-scheduler's PostgreSQL definition (with the priority column of 15.x and later). */
    private static final String SCHEMA = """
            create table scheduled_tasks (
              task_name text not null,
              task_instance text not null,
              task_data bytea,
              execution_time timestamp with time zone not null,
              picked boolean not null,
              picked_by text,
              last_success timestamp with time zone,
              last_failure timestamp with time zone,
              consecutive_failures int,
              last_heartbeat timestamp with time zone,
              version bigint not null,
              priority smallint,
              primary key (task_name, task_instance)
            );
            create index execution_time_idx on scheduled_tasks (execution_time);
            create index last_heartbeat_idx on scheduled_tasks (last_heartbeat);
            create index priority_execution_time_idx on scheduled_tasks (priority desc, execution_time asc);
            """;

    private final String config;
    private final int threads;
    private final double lower;
    private final double upper;
    private final int pollingMillis;
    private HikariDataSource dataSource;
    private OneTimeTask<Void> task;
    private SchedulerClient bulkClient;
    private Scheduler scheduler;

    private DbSchedulerPeer(PeerHarness h) {
        this.config = h.arg("config", "throughput");
        if (!this.config.equals("throughput")) {
            throw new IllegalArgumentException("config=" + this.config + ": use throughput");
        }
        this.threads = h.intArg("threads", 20);
        this.lower = Double.parseDouble(h.arg("lower", "4.0"));
        this.upper = Double.parseDouble(h.arg("upper", "20.0"));
        this.pollingMillis = h.intArg("polling_ms", 100);
    }

    public static void main(String[] argv) throws Exception {
        PeerHarness[] harness = new PeerHarness[1];
        harness[0] = new PeerHarness(argv, () -> new DbSchedulerPeer(harness[0]));
        harness[0].run();
        System.exit(0);
    }

    @Override
    public String peer() {
        return "db-scheduler";
    }

    @Override
    public String config() {
        return this.config;
    }

    @Override
    public String settings() {
        return "threads=" + this.threads + " lock_and_fetch=" + this.lower + "," + this.upper + " polling_ms="
                + this.pollingMillis;
    }

    @Override
    public void open(String jdbcUrl, IntConsumer onJob) throws Exception {
        HikariConfig hikari = new HikariConfig();
        hikari.setJdbcUrl(jdbcUrl);
        hikari.setMaximumPoolSize(this.threads + 10); // the executions, the poller, 8 producers
        this.dataSource = new HikariDataSource(hikari);
        try (Connection c = this.dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute(SCHEMA);
        }
        this.task = Tasks.oneTime("noop").execute((instance, context) -> onJob.accept(Integer.parseInt(instance.getId())));
        this.bulkClient = SchedulerClient.Builder.create(this.dataSource, this.task).build();
        this.scheduler = Scheduler.create(this.dataSource, this.task)
                .threads(this.threads)
                .pollUsingLockAndFetch(this.lower, this.upper)
                .pollingInterval(Duration.ofMillis(this.pollingMillis))
                .enableImmediateExecution()
                .shutdownMaxWait(Duration.ofSeconds(5))
                .build();
    }

    @Override
    public void enqueueMany(int from, int to) {
        List<TaskInstance<?>> batch = new ArrayList<>(to - from);
        for (int i = from; i < to; i++) {
            batch.add(this.task.instance(Integer.toString(i)));
        }
        this.bulkClient.scheduleBatch(batch, Instant.now());
    }

    @Override
    public void enqueueOne(int i) {
        // Through the running Scheduler (a SchedulerClient), so that immediate execution sees it.
        this.scheduler.schedule(this.task.instance(Integer.toString(i)), Instant.now());
    }

    @Override
    public void startWorkers() {
        this.scheduler.start();
    }

    @Override
    public void close() {
        if (this.scheduler != null) {
            this.scheduler.stop();
        }
        if (this.dataSource != null) {
            this.dataSource.close();
        }
    }
}
