package io.pgqueue.faults;

import java.time.Duration;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import io.pgqueue.faults.FaultRun.Execution;
import io.pgqueue.faults.RecordTask.Work;
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
 * production queue meets at its nodes: a node killed, handlers that ignore their timeout, SIGTERM
 * ({@link ServerFaultScenariosIT} restarts the server, terminates connections and stalls the network,
 * {@link LimitFaultScenariosIT} puts flow control and workflows through faults,
 * {@link ShardFaultScenariosIT} shards). Every scenario asserts that no job is lost and that no two
 * executions of a job ran at once while both could hold its lease, and reports its figures (stdout
 * lines starting {@code FAULT |}, and the table in {@code target/faults-report.md}).
 * <p>
 * {@code faults.scale=short} (every build) runs each scenario on a small load;
 * {@code faults.scale=full} runs the documented fault run: larger backlogs and longer outages.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FaultScenariosIT {

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
            FaultRun.Rerun rescued = run.rerun(held, "node-b", killedAt);
            findings.note("%d held, %d started again on the other node within %s of the kill (bound %s) while %d "
                    + "younger jobs waited", held.size(), rescued.count(), seconds(killedAt, rescued.lastStart()),
                    seconds(0, RESCUE_BOUND), rescued.waiting());
            findings.report();

            findings.assertNothingLostOrOverlapping();
            assertThat(rescued.count()).isPositive();
            assertThat(rescued.lastStart() - killedAt).isLessThan(RESCUE_BOUND + SLACK);
            assertThat(rescued.waiting()).as("younger jobs still waiting when the rescued ones started").isPositive();
        }
    }

    @Test
    @Order(2)
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
    @Order(3)
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
            FaultRun.Rerun taken = run.rerun(handedBack, "node-b", termAt);
            Integer usedAttempts = run.jdbc.queryForObject(
                    "SELECT count(*) FROM pgqueue.job_finished WHERE task = 'record' AND attempt > 1", Integer.class);
            findings.note("node stopped in %s; of %d held, %d handed back and started on the other node within %s "
                    + "while %d younger jobs waited; %d jobs used a second attempt", seconds(termAt, exitAt),
                    held.size(), taken.count(), seconds(termAt, taken.lastStart()), taken.waiting(), usedAttempts);
            findings.report();

            findings.assertNothingLostOrOverlapping();
            assertThat(exited).as("node-a exited after SIGTERM").isTrue();
            assertThat(taken.count()).isPositive();
            assertThat(usedAttempts).isZero();
            assertThat(taken.waiting()).as("younger jobs still waiting when the handed-back ones started").isPositive();
        }
    }
}
