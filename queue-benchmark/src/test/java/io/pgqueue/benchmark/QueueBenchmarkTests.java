package io.pgqueue.benchmark;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import io.pgqueue.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The benchmark's own correctness with small numbers (no timing is asserted): every job of the
 * drain and many-task-type workloads runs exactly once.
 */
class QueueBenchmarkTests {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.perClass();

    @Test
    void drainAndTaskTypesRunEveryJobExactlyOnce() throws Exception {
        List<String> lines = QueueBenchmark.execute(Map.of("workload", "drain,tasks", "n", "3000", "url", url(),
                "repeat", "1", "warmup", "0"));

        assertThat(lines).hasSize(3).allMatch(line -> line.contains("exactly_once=true"));
        assertThat(lines.get(0)).startsWith("workload=drain task_types=1 n=3000");
        assertThat(lines.get(2)).startsWith("workload=tasks task_types=20 n=3000");
        // The server counters read around each drain (their views differ between PostgreSQL versions).
        assertThat(lines).allSatisfy(line -> assertThat(Double.parseDouble(field(line, "wal_bytes_per_job"))).isPositive());
        // The server's CPU time, when its processes run on this machine (embedded, local, or a container).
        if (ServerCounters.postgresCpuTicks() >= 0) {
            assertThat(lines).allSatisfy(line -> assertThat(Double.parseDouble(field(line, "db_cpu_us_per_job"))).isPositive());
        }
        else {
            assertThat(lines).allSatisfy(line -> assertThat(field(line, "db_cpu_us_per_job")).isEqualTo("-1.0"));
        }
        // And the JVM's own: CPU time and allocation per drained job.
        assertThat(lines).allSatisfy(line -> assertThat(Double.parseDouble(field(line, "jvm_cpu_us_per_job"))).isPositive());
        assertThat(lines).allSatisfy(line -> assertThat(Double.parseDouble(field(line, "alloc_bytes_per_job"))).isPositive());
    }

    @Test
    void theStarterWorkloadsRunAnApplicationBuiltWithTheStarter() throws Exception {
        List<String> drain = StarterBenchmark.run(Map.of("workload", "starter-drain", "n", "2000", "repeat", "1"), url());
        assertThat(drain).singleElement().satisfies(line -> {
            assertThat(line).startsWith("workload=starter-drain n=2000");
            assertThat(Double.parseDouble(field(line, "drain_per_s"))).isPositive();
        });
        List<String> enqueue = StarterBenchmark.run(Map.of("workload", "starter-enqueue", "rate", "400", "seconds", "1",
                "repeat", "1"), url());
        assertThat(enqueue).singleElement().satisfies(line -> {
            assertThat(line).startsWith("workload=starter-enqueue producers=8 target_per_s=400");
            assertThat(Double.parseDouble(field(line, "achieved_per_s"))).as("never ahead of the schedule").isPositive().isLessThanOrEqualTo(440.0);
            assertThat(Double.parseDouble(field(line, "enqueue_call_p50_ms"))).isPositive()
                .isLessThanOrEqualTo(Double.parseDouble(field(line, "enqueue_call_p99_ms")));
        });
        List<String> awaited = StarterBenchmark.run(Map.of("workload", "starter-await", "count", "30", "repeat", "1",
                "warmup_runs", "0"), url());
        assertThat(awaited).singleElement().satisfies(line -> {
            assertThat(line).startsWith("workload=starter-await rate=0 n=30");
            assertThat(Double.parseDouble(field(line, "p50_ms"))).isPositive()
                .isLessThanOrEqualTo(Double.parseDouble(field(line, "p99_ms")));
        });
        for (String workload : List.of("starter-latency", "starter-latency-external")) {
            List<String> latency = StarterBenchmark.run(Map.of("workload", workload, "rate", "200", "count", "100",
                    "repeat", "1", "producer_warmup", "50"), url());
            // Latency counts from the enqueue call's return: on a busy machine a handler can start before
            // the producer's thread reads the clock after the commit, so a low percentile may be negative.
            assertThat(latency).singleElement().satisfies(line -> {
                assertThat(line).startsWith("workload=" + workload + " rate=200 n=100");
                assertThat(Double.parseDouble(field(line, "p50_ms")))
                    .isLessThanOrEqualTo(Double.parseDouble(field(line, "p99_ms")));
                assertThat(Double.parseDouble(field(line, "p99_ms"))).isPositive();
            });
        }
        assertThat(new JdbcTemplate(db.dataSource()).queryForObject("SELECT (SELECT count(*) FROM pgqueue.job) "
                + "+ (SELECT count(*) FROM pgqueue.job_finished)", Long.class))
            .as("the last run's jobs: the producer's warm-up and the measured ones").isEqualTo(50 + 100);
    }

    private static String field(String line, String key) {
        return java.util.Arrays.stream(line.split(" ")).filter(pair -> pair.startsWith(key + "=")).findFirst()
            .orElseThrow().substring(key.length() + 1);
    }

    /**
     * Batch keys: the backlog's 5,000 jobs share 5 schedule times, 1,000 each, and the 2,000
     * enqueued behind it one per enqueueAll transaction of 1,000. Distinct keys: every job its own.
     */
    @ParameterizedTest
    @CsvSource({ "batch, 7", "distinct, 7000" })
    void backlogDrainsBehindQueuedJobsOfTheSameKeyShapeAndComparesThePair(String keys, long scheduleTimes)
            throws Exception {
        List<String> lines = QueueBenchmark.execute(Map.of("workload", "backlog", "n", "2000", "backlog", "5000",
                "keys", keys, "url", url(), "repeat", "1", "warmup", "0"));

        assertThat(lines).hasSize(3);
        assertThat(lines.get(0)).startsWith("workload=backlog task_types=1 n=2000 backlog=0 keys=" + keys + " ")
            .contains("exactly_once=true");
        assertThat(lines.get(1)).startsWith("workload=backlog task_types=1 n=2000 backlog=5000 keys=" + keys + " ")
            .contains("exactly_once=true");
        assertThat(lines.get(2)).startsWith("workload=backlog_vs_empty backlog=5000 keys=" + keys + " drain_ratio=");
        assertThat(Double.parseDouble(field(lines.get(2), "drain_ratio"))).isPositive();
        assertThat(scheduleTimesOfBacklogDrainJobs()).as(SHARED_SCHEDULE_TIMES::get)
            .containsExactly(7000L, scheduleTimes, 1L);
    }

    /** The backlog drain's schedule times that more than one job holds, and which jobs: why a count differs. */
    private static final Supplier<String> SHARED_SCHEDULE_TIMES = () -> new JdbcTemplate(
            db.dataSource()).queryForList("SELECT schedule_time, count(*) AS jobs, min(payload::text::int) AS first, "
                + "max(payload::text::int) AS last, string_agg(DISTINCT state || '/' || attempt, ',') AS states FROM ("
                + "SELECT schedule_time, payload, state, attempt FROM pgqueue_bench_backlog.job UNION ALL "
                + "SELECT schedule_time, payload, state, attempt FROM pgqueue_bench_backlog.job_finished "
                + "WHERE lease_owner IS NOT NULL) jobs GROUP BY schedule_time HAVING count(*) > 1 ORDER BY 2 DESC LIMIT 10")
        .toString();

    /**
     * @return of the backlog drain's jobs (queued and enqueued, run or not; not the finished rows
     * inserted with the backlog, which no worker held): how many, how many schedule times they have,
     * and 1 if every queued job (payload 2000 and up) is due before every enqueued one, else 0
     */
    private static List<Long> scheduleTimesOfBacklogDrainJobs() {
        return new JdbcTemplate(db.dataSource()).queryForObject("SELECT count(*), count(DISTINCT schedule_time), "
                + "CASE WHEN max(schedule_time) FILTER (WHERE payload::text::int >= 2000) "
                + "< min(schedule_time) FILTER (WHERE payload::text::int < 2000) THEN 1 ELSE 0 END FROM ("
                + "SELECT schedule_time, payload FROM pgqueue_bench_backlog.job UNION ALL "
                + "SELECT schedule_time, payload FROM pgqueue_bench_backlog.job_finished WHERE lease_owner IS NOT NULL) jobs",
                (rs, row) -> List.of(rs.getLong(1), rs.getLong(2), rs.getLong(3)));
    }

    @Test
    void workflowRunsEveryFanInAndEveryChainStep() throws Exception {
        List<String> lines = QueueBenchmark.execute(Map.of("workload", "workflow", "width", "50", "workflows", "3",
                "chain", "20", "url", url(), "repeat", "1", "warmup", "0"));

        // The workload waits for 3 fan-ins and 20 chain steps before it reports.
        assertThat(lines).singleElement().asString().startsWith("workload=workflow width=50 workflows=3 ")
            .contains(" chain=20 hop_p50_ms=");
    }

    @Test
    void latencyRunsEveryJobAndDumpsOneLinePerJob(@TempDir Path dir) throws Exception {
        List<String> lines = QueueBenchmark.execute(Map.of("workload", "latency", "rates", "200", "seconds", "1",
                "url", url(), "repeat", "1", "warmup", "0", "dump", dir.resolve("run").toString()));

        assertThat(lines).singleElement().asString().startsWith("workload=latency rate=200 ");
        List<String> jobs = Files.readAllLines(dir.resolve("run-200.txt"));
        assertThat(jobs).hasSize(200);
        for (int i = 0; i < jobs.size(); i++) {
            String[] fields = jobs.get(i).split(" ");
            assertThat(fields).hasSize(3);
            assertThat(Long.parseLong(fields[0])).isEqualTo(i);
            // Every job started (the handler set its latency) after its enqueue call began.
            assertThat(Long.parseLong(fields[1])).isPositive();
        }
    }

    @Test
    void summaryFoldsRepeatedRunsIntoMedianAndRange() {
        List<String> summary = Summary.of(List.of("workload=drain n=10 drain_per_s=100 exactly_once=true",
                "workload=drain n=10 drain_per_s=300 exactly_once=true",
                "workload=drain n=10 drain_per_s=200 exactly_once=true"));

        assertThat(summary).containsExactly("workload=drain n=10 drain_per_s=200(100-300) exactly_once=true runs=3");
    }

    private static String url() {
        String url = db.jdbcUrl();
        if (db.user() != null) {
            url += (url.contains("?") ? "&" : "?") + "user=" + db.user();
        }
        if (db.password() != null) {
            url += "&password=" + db.password();
        }
        return url;
    }
}
