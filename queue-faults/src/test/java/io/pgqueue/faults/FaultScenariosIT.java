package io.pgqueue.faults;

import java.time.Duration;
import java.util.Comparator;
import java.util.HashSet;
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
import static io.pgqueue.faults.FaultRun.RESCUE_BOUND;
import static io.pgqueue.faults.FaultRun.SLACK;
import static io.pgqueue.faults.FaultRun.TIMEOUT;
import static io.pgqueue.faults.FaultRun.TWO_NODES;
import static io.pgqueue.faults.FaultRun.now;
import static io.pgqueue.faults.FaultRun.sleep;
import static io.pgqueue.faults.Findings.seconds;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Worker nodes as processes on a PostgreSQL server of their own, put through the faults a
 * production queue meets: a node killed, the server restarted, connections terminated, handlers that
 * ignore their timeout, SIGTERM and a network stall ({@link LimitFaultScenariosIT} puts flow control
 * and workflows through faults, {@link ShardFaultScenariosIT} shards). Every scenario asserts that no job is lost and that no two executions of
 * a job ran at once while both could hold its lease, and reports its figures (stdout lines
 * starting {@code FAULT |}, and the table in {@code target/faults-report.md}).
 * <p>
 * {@code faults.scale=short} (every build) runs each scenario on a small load;
 * {@code faults.scale=full} runs the documented fault run: larger backlogs and longer outages.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FaultScenariosIT {

    /**
     * After an outage the first connection comes from the pool: HikariCP retries a failed connection
     * with a back-off that doubles up to 5 s; the queue then tries again within a second.
     */
    private static final long RECONNECT_BOUND = 5000 + 1000;

    @RegisterExtension
    static final OwnServer server = new OwnServer();

    @Test
    @Order(1)
    void killNineOfANodeDrainingABacklog() throws Exception {
        try (FaultRun run = new FaultRun(server.get(), "faults_kill")) {
            run.startNodes(TWO_NODES, "--pgqueue.tasks.record.concurrency=4");
            run.enqueueBacklog(FULL ? 12_000 : 4_000, new Work(10, 0));
            sleep(FULL ? 3000 : 1000);
            long killedAt = now();
            run.node("node-a").kill();
            Set<Long> held = run.heldBy("node-a");
            run.awaitFinished(Duration.ofMinutes(2));

            Findings findings = Findings.of("kill -9 of a node draining a backlog", run,
                    Findings.cut("node-a", killedAt, Long.MAX_VALUE), List.of("node-a"));
            Rerun rescued = rerun(run, held, "node-b", killedAt);
            findings.note("%d held, %d started again on the other node within %s of the kill (bound %s) while %d "
                    + "younger jobs waited", held.size(), rescued.count, seconds(killedAt, rescued.lastStart),
                    seconds(0, RESCUE_BOUND), rescued.waiting);
            findings.report();

            findings.assertNothingLostOrOverlapping();
            assertThat(rescued.count).isPositive();
            assertThat(rescued.lastStart - killedAt).isLessThan(RESCUE_BOUND + SLACK);
            assertThat(rescued.waiting).as("younger jobs still waiting when the rescued ones started").isPositive();
        }
    }

    @Test
    @Order(2)
    void serverRestartInFastModeWithProducers() throws Exception {
        // The short run restarts in immediate mode only (the crash); the full run in both.
        Assumptions.assumeTrue(FULL, "the restart in fast mode runs with -Dfaults.scale=full");
        serverRestart("fast");
    }

    @Test
    @Order(3)
    void serverRestartInImmediateModeWithProducers() throws Exception {
        serverRestart("immediate");
    }

    private void serverRestart(String mode) throws Exception {
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
    @Order(4)
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
    @Order(5)
    void handlersThatIgnoreTheirTimeout() throws Exception {
        try (FaultRun run = new FaultRun(server.get(), "faults_hung")) {
            run.startNodes(TWO_NODES, "--pgqueue.tasks.record.concurrency=2");
            int hangMillis = FULL ? 20_000 : 8000;
            Set<Long> hung = new HashSet<>();
            for (int i = 0; i < 4; i++) {
                hung.add(run.enqueueOne(new Work(0, hangMillis)));
            }
            sleep(500);
            run.enqueueBacklog(FULL ? 4000 : 2000, new Work(20, 0));
            run.awaitFinished(Duration.ofMinutes(2));
            // The hung handlers outlive their jobs' re-runs.
            long until = now() + hangMillis + 10_000;
            while (run.executions().stream().anyMatch(e -> e.ended() == null) && now() < until) {
                sleep(200);
            }

            Findings findings = Findings.of("handlers that ignore their timeout's interrupt", run, Map.of(), List.of());
            List<Execution> executions = run.executions();
            long firstHung = executions.stream().filter(e -> hung.contains(e.jobId())).mapToLong(Execution::started).min()
                .orElseThrow();
            // Per hung job, from its hung start to its next start.
            long slowestRerun = hung.stream().mapToLong(id -> {
                long[] starts = executions.stream().filter(e -> e.jobId() == id).mapToLong(Execution::started).sorted()
                    .toArray();
                return starts.length < 2 ? Long.MAX_VALUE : starts[1] - starts[0];
            }).max().orElseThrow();
            // Where both slots of a node were held by hung handlers: the jobs it started meanwhile.
            long othersWhileHung = 0;
            boolean allSlotsHung = false;
            for (String node : TWO_NODES) {
                List<Execution> stuck = executions.stream().filter(e -> e.node().equals(node) && e.attempt() == 1)
                    .filter(e -> hung.contains(e.jobId())).sorted(Comparator.comparingLong(Execution::started)).toList();
                for (int i = 1; i < stuck.size(); i++) {
                    long from = stuck.get(i).started() + TIMEOUT.toMillis() + LEASE.toMillis() + 1000;
                    long to = Math.min(stuck.get(i - 1).ended(), stuck.get(i).ended()) - 500;
                    if (from < to) {
                        allSlotsHung = true;
                        othersWhileHung += executions.stream().filter(e -> e.node().equals(node))
                            .filter(e -> !hung.contains(e.jobId()) && e.started() > from && e.started() < to).count();
                    }
                }
            }
            findings.note("%d hung jobs each started again within %s of their hung start (bound %s); %s",
                    hung.size(), seconds(0, slowestRerun), seconds(0, TIMEOUT.toMillis() + RESCUE_BOUND),
                    allSlotsHung ? othersWhileHung + " other jobs started on a node while both its slots were held by "
                            + "hung handlers" : "no node had both slots hung at once");
            findings.report();

            findings.assertNothingLostOrOverlapping();
            assertThat(findings.reExecutions).isGreaterThanOrEqualTo(hung.size());
            assertThat(slowestRerun).isLessThan(TIMEOUT.toMillis() + RESCUE_BOUND + SLACK);
            if (allSlotsHung) {
                assertThat(othersWhileHung).as("jobs started in the slots hung handlers gave up").isPositive();
            }
        }
    }

    @Test
    @Order(6)
    void sigtermWithJobsBufferedAndRunning() throws Exception {
        try (FaultRun run = new FaultRun(server.get(), "faults_sigterm")) {
            // Five seconds' worth of jobs buffered beyond those running, to be handed back.
            run.startNodes(TWO_NODES, "--pgqueue.tasks.record.concurrency=4",
                    "--pgqueue.pools.default.prefetch-window=5s");
            run.enqueueBacklog(FULL ? 2000 : 320, new Work(200, 0), 50);
            sleep(FULL ? 3000 : 1000);
            Set<Long> held = run.heldBy("node-a");
            long termAt = now();
            run.node("node-a").terminate();
            boolean exited = run.node("node-a").awaitExit(Duration.ofSeconds(30));
            long exitAt = now();
            run.awaitFinished(Duration.ofMinutes(2));

            Findings findings = Findings.of("SIGTERM with jobs buffered and running", run, Map.of(), List.of());
            Set<Long> ranOnA = run.executions().stream().filter(e -> e.node().equals("node-a"))
                .map(Execution::jobId).collect(Collectors.toSet());
            Set<Long> handedBack = held.stream().filter(id -> !ranOnA.contains(id)).collect(Collectors.toSet());
            Rerun taken = rerun(run, handedBack, "node-b", termAt);
            Integer usedAttempts = run.jdbc.queryForObject(
                    "SELECT count(*) FROM pgqueue.job_finished WHERE task = 'record' AND attempt > 1", Integer.class);
            findings.note("node stopped in %s; of %d held, %d handed back and started on the other node within %s "
                    + "while %d younger jobs waited; %d jobs used a second attempt", seconds(termAt, exitAt),
                    held.size(), taken.count, seconds(termAt, taken.lastStart), taken.waiting, usedAttempts);
            findings.report();

            findings.assertNothingLostOrOverlapping();
            assertThat(exited).as("node-a exited after SIGTERM").isTrue();
            assertThat(taken.count).isPositive();
            assertThat(usedAttempts).isZero();
            assertThat(taken.waiting).as("younger jobs still waiting when the handed-back ones started").isPositive();
        }
    }

    @Test
    @Order(7)
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
            Rerun rescued = rerun(run, held, "node-b", cutAt);
            findings.note("of %d held, %d started again on the other node within %s, behind the jobs it had "
                    + "buffered", held.size(), rescued.count, seconds(cutAt, rescued.lastStart));
            findings.report();

            findings.assertNothingLostOrOverlapping();
            assertThat(held).as("jobs buffered beyond those running when the stall began").hasSizeGreaterThan(8);
            assertThat(rescued.count).isPositive();
        }
    }

    /**
     * When the last of the given jobs that ran on a node after a moment started there, and how many
     * younger jobs (enqueued in a later transaction) had not started yet then.
     */
    private static Rerun rerun(FaultRun run, Set<Long> jobs, String node, long after) {
        List<Execution> executions = run.executions();
        long lastStart = jobs.stream().mapToLong(id -> executions.stream()
            .filter(e -> e.jobId() == id && e.node().equals(node) && e.started() >= after)
            .mapToLong(Execution::started).min().orElse(after)).max().orElse(after);
        Map<Long, Long> firstStart = executions.stream().collect(Collectors.toMap(Execution::jobId,
                Execution::started, Math::min));
        long enqueuedLast = jobs.stream().mapToLong(run.enqueued::get).max().orElse(0);
        long waiting = run.enqueued.entrySet().stream().filter(e -> e.getValue() > enqueuedLast)
            .filter(e -> firstStart.getOrDefault(e.getKey(), Long.MAX_VALUE) > lastStart).count();
        long count = jobs.stream().filter(id -> executions.stream()
            .anyMatch(e -> e.jobId() == id && e.node().equals(node) && e.started() >= after)).count();
        return new Rerun(count, lastStart, waiting);
    }

    private record Rerun(long count, long lastStart, long waiting) {
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
