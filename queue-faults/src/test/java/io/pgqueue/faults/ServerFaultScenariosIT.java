package io.pgqueue.faults;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

import io.pgqueue.faults.FaultRun.Execution;
import io.pgqueue.faults.RecordTask.Work;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.pgqueue.faults.FaultRun.FULL;
import static io.pgqueue.faults.FaultRun.LEASE;
import static io.pgqueue.faults.FaultRun.SLACK;
import static io.pgqueue.faults.FaultRun.TWO_NODES;
import static io.pgqueue.faults.FaultRun.now;
import static io.pgqueue.faults.FaultRun.sleep;
import static io.pgqueue.faults.Findings.seconds;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Worker nodes as processes while their PostgreSQL server (fsync on) goes away: the server
 * restarted and every worker connection terminated under producers, with how soon work resumed (the first job,
 * notifications waking the nodes again, start latency once recovered), and a network stall between
 * one node and the server longer than the lease. Each scenario asserts that no job is lost and that
 * no two executions of a job ran at once while both could hold its lease ({@link FaultScenariosIT}
 * states how scenarios report and scale).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ServerFaultScenariosIT {

    /**
     * After an outage the first connection comes from the pool: HikariCP retries a failed connection
     * with a back-off that doubles up to 5 s; the queue then tries again within a second.
     */
    private static final long RECONNECT_BOUND = 5000 + 1000;

    /** With fsync on, as in production: what a crash loses is what a production server loses. */
    @RegisterExtension
    static final OwnServer server = new OwnServer(true);

    @Test
    @Order(1)
    void serverRestartInFastModeWithProducers() throws Exception {
        // The short run restarts in immediate mode only (the crash); the full run in both.
        Assumptions.assumeTrue(FULL, "the restart in fast mode runs with -Dfaults.scale=full");
        serverRestart("fast");
    }

    @Test
    @Order(2)
    void serverRestartInImmediateModeWithProducers() throws Exception {
        serverRestart("immediate");
    }

    private void serverRestart(String mode) throws Exception {
        assertThat(server.get().fsync()).as("the server flushes its writes to disk").isTrue();
        try (FaultRun run = new FaultRun(server.get(), "faults_restart_" + mode)) {
            // Polling every 10 s: a job started within a second was woken by a notification.
            run.startNodes(TWO_NODES, "--pgqueue.poll-interval=10s");
            AtomicBoolean producing = run.produce(4, FULL ? 500 : 200, new Work(5, 0));
            sleep(FULL ? 5000 : 2000);
            server.get().stop(mode);
            // Long enough for retries that back off to seconds to miss the bound.
            sleep(FULL ? 10_000 : 4000);
            server.get().startAgain();
            long upAt = now();
            // Producing past the pool's reconnect back-off, so that latency after recovery is measured.
            sleep(FULL ? 12_000 : 9000);
            producing.set(false);
            run.awaitFinished(Duration.ofMinutes(2));

            Findings findings = Findings.of("PostgreSQL restart (" + mode + ") with producers", run, Map.of(), List.of());
            Recovery recovery = recovery(run, upAt);
            findings.note("%d enqueue calls failed and were repeated", run.failedEnqueues.get());
            recovery.describe(findings, "the server accepted connections again");
            findings.report();

            findings.assertNothingLostOrOverlapping();
            recovery.assertWithin(RECONNECT_BOUND + SLACK);
        }
    }

    @Test
    @Order(3)
    void everyWorkerConnectionTerminatedWithProducers() throws Exception {
        try (FaultRun run = new FaultRun(server.get(), "faults_terminate")) {
            run.startNodes(TWO_NODES, "--pgqueue.poll-interval=10s");
            AtomicBoolean producing = run.produce(4, FULL ? 500 : 200, new Work(5, 0));
            sleep(FULL ? 5000 : 2000);
            Map<String, Object> terminated = run.jdbc.queryForMap("""
                    SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) AS backends,
                           count(*) FILTER (WHERE query ILIKE 'LISTEN%') AS listening
                    FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'node-%'""");
            long cutAt = now();
            sleep(FULL ? 10_000 : 5000);
            producing.set(false);
            run.awaitFinished(Duration.ofMinutes(2));

            Findings findings = Findings.of("pg_terminate_backend of every worker connection", run, Map.of(), List.of());
            Recovery recovery = recovery(run, cutAt);
            findings.note("%s connections terminated, %s of them LISTENing", terminated.get("backends"),
                    terminated.get("listening"));
            recovery.describe(findings, "the connections were terminated");
            findings.report();

            findings.assertNothingLostOrOverlapping();
            assertThat(((Number) terminated.get("listening")).intValue()).isEqualTo(2);
            recovery.assertWithin(1000 + SLACK);
        }
    }

    @Test
    @Order(4)
    void aNetworkStallLongerThanTheLease() throws Exception {
        try (FaultRun run = new FaultRun(server.get(), "faults_stall"); StallingProxy proxy = new StallingProxy(server.get().port())) {
            run.route("node-a", proxy);
            // Second-long jobs and 5 s of them buffered: the stall outlasts the leases of jobs
            // still waiting in the cut-off node's buffer.
            run.startNodes(TWO_NODES, "--pgqueue.tasks.record.concurrency=4", "--pgqueue.tasks.record.timeout=10s",
                    "--pgqueue.pools.default.prefetch-window=5s");
            run.enqueueBacklog(FULL ? 400 : 130, new Work(1000, 0), 20);
            // Once jobs have finished, the pools know their execution time and buffer 5 s of them.
            sleep(3000);
            Set<Long> held = run.heldBy("node-a");
            long cutAt = now();
            proxy.stall();
            sleep(3 * LEASE.toMillis());
            long resumedAt = now();
            proxy.resume();
            run.awaitFinished(Duration.ofMinutes(2));

            Findings findings = Findings.of("a network stall of 3 leases between a node and the server", run,
                    Findings.cut("node-a", cutAt, resumedAt), List.of());
            FaultRun.Rerun rescued = run.rerun(held, "node-b", cutAt);
            findings.note("of %d held, %d started again on the other node within %s, behind the jobs it had "
                    + "buffered", held.size(), rescued.count(), seconds(cutAt, rescued.lastStart()));
            findings.report();

            findings.assertNothingLostOrOverlapping();
            assertThat(held).as("jobs buffered beyond those running when the stall began").hasSizeGreaterThan(8);
            assertThat(rescued.count()).isPositive();
        }
    }

    /**
     * How work resumed after an outage ending at {@code upAt}: the first job to start, when
     * notifications woke the nodes again (the first job enqueued after the outage and started
     * within a second, with polling every 10 s), and the start latency of jobs enqueued from a second
     * after that.
     */
    private static Recovery recovery(FaultRun run, long upAt) {
        List<Execution> executions = run.executions();
        long firstStart = executions.stream().mapToLong(Execution::started).filter(t -> t >= upAt).min()
            .orElse(Long.MAX_VALUE);
        Map<Long, Long> started = executions.stream().collect(Collectors.toMap(Execution::jobId, Execution::started,
                Math::min));
        List<long[]> after = run.enqueued.entrySet().stream().filter(e -> e.getValue() >= upAt)
            .map(e -> new long[] { e.getValue(), started.getOrDefault(e.getKey(), Long.MAX_VALUE) - e.getValue() })
            .sorted((a, b) -> Long.compare(a[0], b[0])).toList();
        long notifiedAt = after.stream().filter(e -> e[1] < 1000).mapToLong(e -> e[0]).findFirst().orElse(Long.MAX_VALUE);
        // Once the nodes are back (woken by notifications again), and a second later.
        long[] latencies = after.stream().filter(e -> notifiedAt != Long.MAX_VALUE && e[0] >= notifiedAt + 1000)
            .mapToLong(e -> e[1]).sorted().toArray();
        long p99 = latencies.length == 0 ? -1 : latencies[(int) Math.min(latencies.length - 1, latencies.length * 0.99)];
        return new Recovery(upAt, firstStart, notifiedAt, p99);
    }

    private record Recovery(long upAt, long firstStart, long notifiedAt, long p99) {

        void describe(Findings findings, String event) {
            findings.note("first job started %s after %s; notifications woke the nodes within %s; "
                    + "enqueue-to-start p99 %d ms from a second later", seconds(this.upAt, this.firstStart), event,
                    seconds(this.upAt, this.notifiedAt), this.p99);
        }

        void assertWithin(long bound) {
            assertThat(this.firstStart - this.upAt).as("first job after recovery").isLessThan(bound);
            assertThat(this.notifiedAt - this.upAt).as("notifications back").isLessThan(bound);
            assertThat(this.p99).as("start latency once recovered").isBetween(0L, 999L);
        }
    }
}
