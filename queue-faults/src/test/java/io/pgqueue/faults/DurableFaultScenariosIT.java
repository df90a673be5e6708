package io.pgqueue.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.pgqueue.JobRequest;
import io.pgqueue.PgQueue;
import io.pgqueue.QueueClient;
import io.pgqueue.SignalResult;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.faults.DurableOrderTask.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.pgqueue.faults.FaultRun.FULL;
import static io.pgqueue.faults.FaultRun.now;
import static io.pgqueue.faults.FaultRun.sleep;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Durable handlers under kill -9: worker nodes running durable order flows (charge, spawn and await
 * an invoice as a child job, wait for the signal "shipped", sleep, follow up) are killed one after another at whatever point their flows
 * are, and started again. The nodes record each step's work in files outside the database; the
 * scenario compares them with the steps the database recorded: every flow completes, no step's work
 * begins after its record committed (exactly once where the record committed), and no follow-up
 * begins before its sleep ended.
 */
class DurableFaultScenariosIT {

    @RegisterExtension
    static final OwnServer server = new OwnServer();

    /** What a node may not exceed between a record's commit time and a begin it should have prevented. */
    private static final long CLOCK_SLACK_MILLIS = 100;

    @Test
    void killNineOfNodesRunningDurableFlowsAtEveryPoint() throws Exception {
        try (FaultRun run = new FaultRun(server.get(), "faults_durable")) {
            List<String> ids = List.of("node-a", "node-b", "node-c");
            run.startNodes(ids, "--pgqueue.tasks.record.concurrency=1");
            Map<String, Integer> kills = new ConcurrentHashMap<>();
            List<String> atKills = new ArrayList<>();
            int turn = 0;
            QueueClient client = PgQueue.builder(run.dataSource)
                .tasks(TaskRegistry.of(TaskDefinition.builder("durable-order").build())).build().client();
            int orders = FULL ? 1200 : 200;
            long window = FULL ? 40_000 : 10_000;
            long started = now();

            // Orders come steadily over the window; each is shipped 0.1 to 3 s after it came: before its
            // flow waits for the signal or while it waits.
            List<Long> jobs = Collections.synchronizedList(new ArrayList<>());
            Map<SignalResult, Integer> signals = new ConcurrentHashMap<>();
            ScheduledExecutorService shipping = Executors.newScheduledThreadPool(2);
            for (int i = 0; i < orders; i++) {
                sleep(Math.max(0, started + i * window / orders - now()));
                long job = client.enqueue(JobRequest.of("durable-order", new Order(150, 1000))).jobId();
                jobs.add(job);
                String carrier = i % 2 == 0 ? "ups" : "dhl";
                shipping.schedule(() -> signals.merge(client.signal(job, "shipped", carrier), 1, Integer::sum),
                        100 + ThreadLocalRandom.current().nextLong(2900), TimeUnit.MILLISECONDS);
                if (i > 0 && i % (orders / (window / 2000)) == 0) {
                    killOne(run, ids, turn++, kills, atKills);
                }
            }
            // And twice more while the last flows wait, sleep and follow up.
            for (int k = 0; k < 2; k++) {
                sleep(1200);
                killOne(run, ids, turn++, kills, atKills);
            }
            shipping.shutdown();
            assertThat(shipping.awaitTermination(1, TimeUnit.MINUTES)).isTrue();
            await("every flow completed").atMost(Duration.ofMinutes(FULL ? 6 : 3)).pollInterval(Duration.ofMillis(500))
                .until(() -> run.jdbc.queryForObject("SELECT count(*) FROM pgqueue.job_finished WHERE task = 'durable-order'",
                        Long.class) == orders);

            Map<String, List<long[]>> work = readWork(run.records());
            Map<String, Map<String, Object>> recorded = new HashMap<>();
            run.jdbc.query("SELECT job_id, name, kind, resolved, result::text AS result, finished_at, wake_at "
                    + "FROM pgqueue.job_step WHERE job_id IN (SELECT id FROM pgqueue.job_finished WHERE task = 'durable-order')",
                    rs -> {
                        Map<String, Object> row = new HashMap<>();
                        row.put("kind", rs.getString("kind"));
                        row.put("resolved", rs.getString("resolved"));
                        row.put("result", rs.getString("result"));
                        row.put("finished", rs.getTimestamp("finished_at").getTime());
                        Timestamp wake = rs.getTimestamp("wake_at");
                        row.put("wake", wake == null ? null : wake.getTime());
                        recorded.put(rs.getLong("job_id") + " " + rs.getString("name"), row);
                    });
            List<String> states = run.jdbc.queryForList("SELECT DISTINCT state FROM pgqueue.job_finished "
                    + "WHERE task = 'durable-order'", String.class);
            // Each flow spawned its invoice once, however often it ran, and the invoice completed.
            Map<String, Object> invoices = run.jdbc.queryForMap("SELECT count(*) AS invoices, "
                    + "count(DISTINCT headers ->> 'pgqueue.parent') AS parents, "
                    + "count(*) FILTER (WHERE state = 'COMPLETED') AS completed "
                    + "FROM pgqueue.job_finished WHERE task = 'durable-invoice'");

            int ranOnce = 0;
            int ranAgainBeforeRecord = 0;
            List<String> ranAfterRecord = new ArrayList<>();
            List<String> unrecorded = new ArrayList<>();
            List<String> wokeEarly = new ArrayList<>();
            List<String> unsignalled = new ArrayList<>();
            for (long job : jobs) {
                for (String step : List.of("charge", "follow-up")) {
                    Map<String, Object> row = recorded.get(job + " " + step);
                    List<long[]> runs = work.getOrDefault(job + " " + step, List.of());
                    if (row == null || runs.stream().noneMatch(r -> r[1] > 0)) {
                        unrecorded.add(job + " " + step);
                        continue;
                    }
                    long committed = (long) row.get("finished");
                    runs.stream().filter(r -> r[0] > committed + CLOCK_SLACK_MILLIS)
                        .forEach(r -> ranAfterRecord.add(job + " " + step + " began " + (r[0] - committed) + " ms after its record"));
                    if (runs.size() == 1) {
                        ranOnce++;
                    }
                    else {
                        ranAgainBeforeRecord += runs.size() - 1;
                    }
                }
                Map<String, Object> signal = recorded.get(job + " signal:shipped");
                if (signal == null || !"RECEIVED".equals(signal.get("resolved"))) {
                    unsignalled.add(String.valueOf(job));
                }
                Map<String, Object> sleep = recorded.get(job + " cool-off");
                long followUp = work.getOrDefault(job + " follow-up", List.<long[]>of(new long[] { Long.MAX_VALUE, 0 }))
                    .stream().mapToLong(r -> r[0]).min().orElse(Long.MAX_VALUE);
                if (sleep == null || followUp < (long) sleep.get("wake") - CLOCK_SLACK_MILLIS) {
                    wokeEarly.add(String.valueOf(job));
                }
            }

            Findings findings = Findings.ofMessages("kill -9 of nodes running durable flows", orders,
                    unrecorded.size(), ranAfterRecord.size(), ranAgainBeforeRecord);
            Map<String, Long> cutShort = new TreeMap<>();
            work.forEach((key, runs) -> runs.stream().filter(r -> r[1] == 0)
                .forEach(r -> cutShort.merge(key.split(" ")[1], 1L, Long::sum)));
            findings.note("flows at each kill: %s; step work cut short by a kill: %s; %s invoices (children) spawned "
                    + "by %s flows", atKills, cutShort, invoices.get("invoices"), invoices.get("parents"));
            findings.note("%d kills (%s) in %.1f s; %d of %d step runs once, %d runs again before their record "
                    + "committed (work done, record lost in the kill), %d after it; signals %s; %d follow-ups before "
                    + "their sleep ended", kills.values().stream().mapToInt(Integer::intValue).sum(), kills,
                    (now() - started) / 1000.0, ranOnce, orders * 2, ranAgainBeforeRecord, ranAfterRecord.size(), signals,
                    wokeEarly.size());
            findings.report();

            assertThat(states).containsExactly("COMPLETED");
            assertThat(((Number) invoices.get("invoices")).intValue()).as("children spawned").isEqualTo(orders);
            assertThat(((Number) invoices.get("parents")).intValue()).as("one per flow").isEqualTo(orders);
            assertThat(((Number) invoices.get("completed")).intValue()).isEqualTo(orders);
            assertThat(unrecorded).as("steps without a record or a finished run").isEmpty();
            assertThat(ranAfterRecord).as("step work begun after its record committed").isEmpty();
            assertThat(unsignalled).as("flows that completed without their signal").isEmpty();
            assertThat(wokeEarly).as("follow-ups begun before their sleep ended").isEmpty();
            assertThat(signals).doesNotContainKeys(SignalResult.NOT_FOUND, SignalResult.FINISHED, SignalResult.DUPLICATE,
                    SignalResult.TOO_LATE);
            assertThat(kills.values().stream().mapToInt(Integer::intValue).sum()).isGreaterThanOrEqualTo(3);
        }
    }

    /**
     * Kills a node (the next in turn) with kill -9 and starts it again at once, noting how many flows
     * were awaiting their invoice, waiting for their signal and sleeping then.
     */
    private static void killOne(FaultRun run, List<String> ids, int turn, Map<String, Integer> kills, List<String> atKills)
            throws Exception {
        String victim = ids.get(turn % ids.size());
        atKills.add(run.jdbc.queryForObject("SELECT count(*) FILTER (WHERE s.name LIKE 'signal:child:%') "
                + "|| ' awaiting the invoice, ' || count(*) FILTER (WHERE s.name = 'signal:shipped') || ' waiting, ' "
                + "|| count(*) FILTER (WHERE s.kind = 'SLEEP') || ' sleeping' FROM pgqueue.job AS j "
                + "JOIN pgqueue.job_step AS s ON s.job_id = j.id "
                + "AND (s.name IN ('signal:shipped', 'cool-off') OR s.name LIKE 'signal:child:%') "
                + "WHERE j.state = 'READY' AND j.schedule_time > now() AND s.resolved IS NULL "
                + "AND NOT EXISTS (SELECT 1 FROM pgqueue.job_step AS n WHERE n.job_id = j.id AND n.seq > s.seq)",
                String.class));
        run.node(victim).kill();
        kills.merge(victim, 1, Integer::sum);
        run.launch(List.of(victim), "--pgqueue.tasks.record.concurrency=1");
    }

    /** The nodes' step records: per "job step", each run's begin and end (0: no end, the node died). */
    private static Map<String, List<long[]>> readWork(Path directory) throws IOException {
        Map<String, List<long[]>> runs = new HashMap<>();
        Map<String, long[]> open = new HashMap<>();
        try (Stream<Path> files = Files.list(directory)) {
            for (Path file : files.filter(path -> path.toString().endsWith(".steps")).sorted().toList()) {
                open.clear();
                for (String line : readLines(file)) {
                    String[] parts = line.split(" ");
                    String key = parts[1] + " " + parts[2];
                    long at = Long.parseLong(parts[3]);
                    if (parts[0].equals("B")) {
                        long[] run = { at, 0 };
                        runs.computeIfAbsent(key, any -> new ArrayList<>()).add(run);
                        open.put(key, run);
                    }
                    else if (open.containsKey(key)) {
                        open.remove(key)[1] = at;
                    }
                }
            }
        }
        return runs;
    }

    private static List<String> readLines(Path file) {
        try {
            return Files.readAllLines(file).stream().filter(line -> !line.isBlank()).toList();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
