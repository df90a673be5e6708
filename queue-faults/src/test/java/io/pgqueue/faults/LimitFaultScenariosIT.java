package io.pgqueue.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
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
import static io.pgqueue.faults.FaultRun.RESCUE_BOUND;
import static io.pgqueue.faults.FaultRun.SLACK;
import static io.pgqueue.faults.FaultRun.TWO_NODES;
import static io.pgqueue.faults.FaultRun.now;
import static io.pgqueue.faults.FaultRun.sleep;
import static io.pgqueue.faults.Findings.seconds;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Flow control and workflows across worker processes under faults, on a PostgreSQL server of their
 * own: a global concurrency limit, sequences, a concurrency per group and a rate limit across nodes
 * (with a node killed where the scenario says), workflows across nodes and a kill, and (with
 * {@code faults.scale=full}) a ten-minute soak. Like {@link FaultScenariosIT}, every scenario asserts
 * that no job is lost and that no two executions of a job ran at once while both could hold its
 * lease, and reports its figures.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LimitFaultScenariosIT {

    @RegisterExtension
    static final OwnServer server = new OwnServer();

    @Test
    @Order(1)
    void globalConcurrencyAcrossThreeNodesAndAKill() throws Exception {
        int limit = 3;
        try (FaultRun run = new FaultRun(server.get(), "faults_limit")) {
            run.startNodes(List.of("node-a", "node-b", "node-c"), "--pgqueue.tasks.record.concurrency=4",
                    "--pgqueue.tasks.record.global-concurrency=" + limit);
            run.enqueueBacklog(FULL ? 2_000 : 200, new Work(50, 0));
            sleep(FULL ? 5000 : 1000);
            // Killed while it holds slots.
            Set<Long> held = awaitHolding(run, "node-a");
            long killedAt = now();
            run.node("node-a").kill();
            run.awaitFinished(Duration.ofMinutes(2));

            Findings findings = Findings.of("global concurrency 3 on three nodes, kill -9 of one", run,
                    Findings.cut("node-a", killedAt, Long.MAX_VALUE), List.of("node-a"));
            List<Execution> executions = run.executions();
            // The killed node's handlers ran until the kill; the slots they held stay taken until
            // their leases expire and the rescue takes the jobs back.
            int most = mostAtOnce(executions, killedAt);
            long firstAfterRescue = executions.stream().filter(e -> held.contains(e.jobId()) && e.started() > killedAt)
                .mapToLong(Execution::started).max().orElse(killedAt);
            findings.note("at most %d handlers at once across the nodes (limit %d); %d jobs held by the killed node, "
                    + "run again within %s of the kill (bound %s)", most, limit, held.size(),
                    seconds(killedAt, firstAfterRescue), seconds(0, RESCUE_BOUND));
            findings.report();

            findings.assertNothingLostOrOverlapping();
            assertThat(most).as("handlers running at once across the nodes").isEqualTo(limit);
            assertThat(held).as("jobs the killed node held").isNotEmpty();
            assertThat(firstAfterRescue - killedAt).isLessThan(RESCUE_BOUND + SLACK);
        }
    }

    @Test
    @Order(2)
    void sequencesAcrossTwoNodesAndAKill() throws Exception {
        try (FaultRun run = new FaultRun(server.get(), "faults_sequence")) {
            run.startNodes(TWO_NODES, "--pgqueue.tasks.record.concurrency=4", "--pgqueue.tasks.record.groups=sequence");
            run.enqueueGrouped(FULL ? 2_000 : 300, 10, new Work(10, 0));
            sleep(FULL ? 3000 : 600);
            Set<Long> held = awaitHolding(run, "node-a");
            long killedAt = now();
            run.node("node-a").kill();
            run.awaitFinished(Duration.ofMinutes(2));

            Findings findings = Findings.of("sequences of 10 groups on two nodes, kill -9 of one", run,
                    Findings.cut("node-a", killedAt, Long.MAX_VALUE), List.of("node-a"));
            Map<String, List<Execution>> byGroup = run.executions().stream()
                .collect(Collectors.groupingBy(execution -> run.groups.get(execution.jobId())));
            int overlapping = 0;
            int outOfOrder = 0;
            for (List<Execution> executions : byGroup.values()) {
                for (int i = 1; i < executions.size(); i++) {
                    Execution before = executions.get(i - 1);
                    Execution next = executions.get(i);
                    // The killed node's execution has no end: it ran until the kill.
                    long end = before.ended() != null ? before.ended() : killedAt;
                    overlapping += next.started() < end ? 1 : 0;
                    outOfOrder += next.jobId() < before.jobId() ? 1 : 0;
                }
            }
            findings.note("%d jobs held by the killed node; per group %d executions overlapping, %d out of enqueue order",
                    held.size(), overlapping, outOfOrder);
            findings.report();

            findings.assertNothingLostOrOverlapping();
            assertThat(held).as("jobs the killed node held").isNotEmpty();
            assertThat(overlapping).as("executions of one group overlapping").isZero();
            assertThat(outOfOrder).as("executions of one group out of enqueue order").isZero();
        }
    }

    @Test
    @Order(3)
    void aConcurrencyPerGroupAcrossTwoNodes() throws Exception {
        int perGroup = 2;
        try (FaultRun run = new FaultRun(server.get(), "faults_groups")) {
            run.startNodes(TWO_NODES, "--pgqueue.tasks.record.concurrency=4",
                    "--pgqueue.tasks.record.group-concurrency=" + perGroup);
            run.enqueueGrouped(FULL ? 2_000 : 300, 3, new Work(10, 0));
            run.awaitFinished(Duration.ofMinutes(2));

            Findings findings = Findings.of("concurrency 2 per group, 3 groups on two nodes", run, Map.of(), List.of());
            Map<String, List<Execution>> byGroup = run.executions().stream()
                .collect(Collectors.groupingBy(execution -> run.groups.get(execution.jobId())));
            Map<String, Integer> most = new TreeMap<>();
            byGroup.forEach((group, executions) -> most.put(group, mostAtOnce(executions, Long.MAX_VALUE)));
            int overall = mostAtOnce(run.executions(), Long.MAX_VALUE);
            findings.note("most handlers at once per group %s (limit %d), across groups %d", most, perGroup, overall);
            findings.report();

            findings.assertNothingLostOrOverlapping();
            assertThat(most).hasSize(3).allSatisfy((group, count) -> assertThat(count).as(group).isEqualTo(perGroup));
            assertThat(overall).as("groups side by side").isGreaterThan(perGroup);
        }
    }

    @Test
    @Order(4)
    void aRateLimitAcrossTwoNodes() throws Exception {
        int permits = 40;
        int burst = 4;
        try (FaultRun run = new FaultRun(server.get(), "faults_rate")) {
            run.startNodes(TWO_NODES, "--pgqueue.tasks.record.concurrency=4",
                    "--pgqueue.tasks.record.rate=" + permits + "/1s", "--pgqueue.tasks.record.rate-burst=" + burst);
            run.enqueueBacklog(FULL ? 1_200 : 120, new Work(1, 0));
            long from = now();
            run.awaitFinished(Duration.ofMinutes(2));

            Findings findings = Findings.of("rate 40/1s on two nodes", run, Map.of(), List.of());
            List<Long> starts = run.executions().stream().map(Execution::started).sorted().toList();
            // A token bucket lets at most burst + rate * t be claimed in any span t. What the bucket
            // bounds are the claims: their times are the database's (a rate-limited job's started_at
            // is the moment its claim counted the permits). The handlers' starts follow the claims on
            // two busy JVMs, where a pause bunches them.
            List<Long> claims = run.jdbc.queryForList("SELECT CAST(extract(epoch FROM started_at) * 1000000 AS bigint) "
                    + "FROM pgqueue.job_finished WHERE task = 'record' ORDER BY started_at", Long.class);
            int excess = beyondBucket(claims, 1_000_000.0, burst, permits);
            int startsExcess = beyondBucket(starts, 1000.0, burst, permits);
            double took = (starts.get(starts.size() - 1) - from) / 1000.0;
            findings.note("%d starts in %.2f s (%.1f/s); most claims in any span beyond burst + rate x span: %d "
                    + "(handler starts: %d)", starts.size(), took, starts.size() / took, Math.max(excess, 0),
                    Math.max(startsExcess, 0));
            findings.report();

            findings.assertNothingLostOrOverlapping();
            assertThat(claims).hasSize(starts.size());
            assertThat(excess).as("claims beyond the bucket in some span").isLessThanOrEqualTo(0);
            assertThat(starts.size() / took).as("starts per second").isBetween(permits * 0.8, permits * 1.2);
        }
    }

    @Test
    @Order(5)
    void workflowsAcrossTwoNodesAndAKill() throws Exception {
        int width = 10;
        try (FaultRun run = new FaultRun(server.get(), "faults_workflow")) {
            run.startNodes(TWO_NODES, "--pgqueue.tasks.record.concurrency=4");
            // 440 jobs of 100 ms on 8 handler threads: about 5.5 s of work, the kill a second in.
            List<List<Long>> workflows = run.enqueueWorkflows(FULL ? 200 : 40, width, new Work(100, 0));
            sleep(1000);
            Set<Long> held = awaitHolding(run, "node-a");
            long killedAt = now();
            run.node("node-a").kill();
            run.awaitFinished(Duration.ofMinutes(2));

            Findings findings = Findings.of("workflows (10 parts, then a fan-in) on two nodes, kill -9 of one", run,
                    Findings.cut("node-a", killedAt, Long.MAX_VALUE), List.of("node-a"));
            Map<Long, List<Execution>> byJob = run.executions().stream().collect(Collectors.groupingBy(Execution::jobId));
            int early = 0;
            long killedParts = 0;
            for (List<Long> workflow : workflows) {
                long fanInStart = byJob.get(workflow.get(0)).stream().mapToLong(Execution::started).min().orElseThrow();
                long lastPartEnd = 0;
                for (long part : workflow.subList(1, workflow.size())) {
                    List<Execution> executions = byJob.get(part);
                    killedParts += executions.stream().anyMatch(execution -> execution.ended() == null) ? 1 : 0;
                    lastPartEnd = Math.max(lastPartEnd, executions.stream().filter(execution -> execution.ended() != null)
                        .mapToLong(Execution::ended).max().orElseThrow());
                }
                early += fanInStart < lastPartEnd ? 1 : 0;
            }
            long completed = run.jdbc.queryForObject("SELECT count(*) FROM pgqueue.workflow WHERE state = 'COMPLETED'",
                    Long.class);
            findings.note("%d jobs held by the killed node (%d parts cut off mid-run); %d of %d workflows completed; "
                    + "fan-ins started before their last part ended: %d", held.size(), killedParts, completed,
                    workflows.size(), early);
            findings.report();

            findings.assertNothingLostOrOverlapping();
            assertThat(held).as("jobs the killed node held").isNotEmpty();
            assertThat(early).as("fan-ins started before all their parts completed").isZero();
            assertThat(completed).as("workflows completed").isEqualTo(workflows.size());
        }
    }

    @Test
    @Order(6)
    void soak() throws Exception {
        Assumptions.assumeTrue(FULL, "the soak runs with -Dfaults.scale=full");
        Duration length = Duration.ofMinutes(10);
        Duration every = Duration.ofSeconds(30);
        int rate = 1000;
        try (FaultRun run = new FaultRun(server.get(), "faults_soak")) {
            run.startNodes(List.of("node-a"), "--faults.heap-sample-interval=" + every.toMillis() + "ms",
                    "--pgqueue.tasks.record.concurrency=8");
            long start = now();
            AtomicBoolean producing = run.produce(8, rate, new Work(0, 0));
            List<double[]> tables = new ArrayList<>();
            while (now() < start + length.toMillis()) {
                sleep(every.toMillis());
                Map<String, Object> sample = run.jdbc.queryForMap("""
                        SELECT pg_total_relation_size('pgqueue.job') AS job_bytes, n_dead_tup AS dead
                        FROM pg_stat_user_tables WHERE relid = 'pgqueue.job'::regclass""");
                tables.add(new double[] { (now() - start) / 60_000.0, ((Number) sample.get("job_bytes")).doubleValue(),
                        ((Number) sample.get("dead")).doubleValue() });
            }
            producing.set(false);
            run.awaitFinished(Duration.ofMinutes(2));
            List<double[]> heap = run.jdbc.query("""
                    SELECT extract(epoch FROM sampled_at) * 1000, used_bytes FROM fault_heap ORDER BY sampled_at""",
                    (rs, row) -> new double[] { (rs.getDouble(1) - start) / 60_000.0, rs.getDouble(2) });

            Findings findings = Findings.of("soak: " + rate + " jobs/s for " + length.toMinutes() + " min "
                    + length.toSecondsPart() + " s into one node", run, Map.of(), List.of());
            findings.note("heap after GC %s; job table %s (slopes over the last two thirds); dead tuples of the job "
                    + "table at most %s", trend(heap, 1, "MiB"), trend(tables, 1, "MiB"), peaks(tables, 2));
            findings.report();

            findings.assertNothingLostOrOverlapping();
            assertThat(heap).hasSizeGreaterThanOrEqualTo(3);
        }
    }

    /** The most events in any span beyond what a token bucket of this burst and rate allows in it. */
    private static int beyondBucket(List<Long> times, double unitsPerSecond, int burst, int permits) {
        int excess = 0;
        for (int i = 0; i < times.size(); i++) {
            for (int j = i; j < times.size(); j++) {
                double seconds = (times.get(j) - times.get(i)) / unitsPerSecond;
                // The bucket's own arithmetic is in floating point: a hair of slack against rounding.
                excess = Math.max(excess, (j - i + 1) - (int) Math.floor(burst + permits * seconds + 1e-6));
            }
        }
        return excess;
    }

    /** @return the jobs the node holds, once it holds some (at most 10 s later) */
    private static Set<Long> awaitHolding(FaultRun run, String node) {
        long until = now() + 10_000;
        Set<Long> held = run.heldBy(node);
        while (held.isEmpty() && now() < until) {
            sleep(2);
            held = run.heldBy(node);
        }
        return held;
    }

    /** The most executions running at once: each from its start to its end, or to the kill if it never ended. */
    private static int mostAtOnce(List<Execution> executions, long killedAt) {
        List<long[]> events = new ArrayList<>();
        for (Execution execution : executions) {
            events.add(new long[] { execution.started(), 1 });
            events.add(new long[] { execution.ended() != null ? execution.ended() : killedAt, -1 });
        }
        // An end and a start in the same millisecond: the end first (the slot was freed before it was taken).
        events.sort(Comparator.<long[]>comparingLong(event -> event[0]).thenComparingLong(event -> event[1]));
        int running = 0;
        int most = 0;
        for (long[] event : events) {
            running += (int) event[1];
            most = Math.max(most, running);
        }
        return most;
    }

    /** The highest value of a column in the first and in the second half of the samples: growth shows as a rise. */
    private static String peaks(List<double[]> samples, int column) {
        int half = samples.size() / 2;
        double first = samples.subList(0, half).stream().mapToDouble(s -> s[column]).max().orElse(0);
        double second = samples.subList(half, samples.size()).stream().mapToDouble(s -> s[column]).max().orElse(0);
        return String.format("%,.0f in the first half and %,.0f in the second", first, second);
    }

    /** Least-squares slope per minute of column {@code column} over the last two thirds of the samples. */
    private static String trend(List<double[]> samples, int column, String unit) {
        List<double[]> tail = samples.subList(samples.size() / 3, samples.size());
        double scale = unit.equals("MiB") ? 1024 * 1024 : 1;
        double n = tail.size();
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (double[] s : tail) {
            sx += s[0];
            sy += s[column] / scale;
            sxx += s[0] * s[0];
            sxy += s[0] * s[column] / scale;
        }
        double slope = n < 2 ? 0 : (n * sxy - sx * sy) / (n * sxx - sx * sx);
        double last = samples.isEmpty() ? 0 : samples.get(samples.size() - 1)[column] / scale;
        return String.format("%.1f %s at the end, %+.2f %s/min", last, unit, slope, unit);
    }
}
