package io.pgqueue.benchmark;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import io.pgqueue.JobRequest;
import io.pgqueue.PgQueue;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The workloads that measure what an application built the way the docs describe gets: a Spring
 * Boot application with the starter, one {@code @QueueTask} no-op handler and settings a user
 * would pick from docs/configuration.md for throughput (task concurrency 8, notifications on, a
 * Hikari pool of 20; the pool's prefetch at its default), on the database given by {@code url=}.
 * <ul>
 * <li>{@code workload=starter-drain}: {@code n} jobs (default 100,000) enqueued with
 * {@code enqueueAll} in chunks of 1,000 while the workers are stopped, then the workers started,
 * timed to the last handler start;</li>
 * <li>{@code workload=starter-latency}: single enqueues at {@code rate} jobs/s (default 200),
 * {@code count} of them (default 4,000), each timed from the return of the enqueue call to its
 * handler's start: p50, p95, p99, max;</li>
 * <li>{@code workload=starter-await}: one caller enqueues a job and awaits its result, {@code count}
 * times in a row (default 1,000), each timed from the enqueue call to the await's return: p50, p95,
 * p99, max; with {@code results=true} the other workloads' handler records a result too;</li>
 * <li>{@code workload=starter-enqueue}: single enqueue calls from {@code producers} threads
 * (default 8) at {@code rate} jobs/s together (default 10,000) for {@code seconds} (default 20) while
 * the workers run: the rate achieved, the backlog at the end, the enqueue call's p50 and p99;</li>
 * <li>{@code workload=starter-latency-external}: the same with the producer in another JVM
 * ({@link ExternalProducer}, after {@code producer_warmup} jobs it enqueues uncounted, default
 * 20,000), timed on the machine's clock; {@code dump} names a file that gets, per job of the last
 * run, its id, the return of its enqueue call and its handler's start, in microseconds since the
 * epoch (to set beside the job's {@code created_at} and {@code started_at} in the database).</li>
 * </ul>
 * {@code repeat} runs of each (default 3), after {@code warmup_runs} discarded runs (default 1) that
 * let the JIT compile the paths first; any {@code --spring.*} or {@code --pgqueue.*} argument
 * overrides a setting.
 */
final class StarterBenchmark {

    /** Settings a user would pick from docs/configuration.md for throughput. */
    static final Map<String, Object> THROUGHPUT_SETTINGS = Map.of(
            "pgqueue.tasks.noop.concurrency", "8",
            "pgqueue.notifications.enabled", "true",
            "spring.datasource.hikari.maximum-pool-size", "20");

    /** The payload of a job the handler does not count: the producer's warm-up. */
    static final long NOT_COUNTED = -1;

    private StarterBenchmark() {
    }

    /** The application: the starter's auto-configuration and one no-op task. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class BenchmarkApplication {

        @Bean
        NoopTask noopTask() {
            return new NoopTask();
        }
    }

    /** Records when each job's handler started, on the machine's clock and on this JVM's. */
    @QueueTask(name = "noop")
    static class NoopTask implements TaskHandler<Long> {

        static final Map<Long, Long> STARTED_NANOS = new ConcurrentHashMap<>();

        static final Map<Long, Long> STARTED_EPOCH_MICROS = new ConcurrentHashMap<>();

        static final AtomicInteger STARTS = new AtomicInteger();

        static final AtomicLong LAST_START_NANOS = new AtomicLong();

        static volatile boolean recordEach;

        /** Whether each job records its payload as its result ({@code results=true}). */
        static volatile boolean recordResults;

        @Override
        public void handle(Long payload, TaskContext context) {
            long now = System.nanoTime();
            if (recordResults) {
                context.recordResult(payload);
            }
            if (payload == NOT_COUNTED) {
                return;
            }
            if (recordEach) {
                STARTED_NANOS.put(context.jobId(), now);
                STARTED_EPOCH_MICROS.put(context.jobId(), epochMicros());
            }
            LAST_START_NANOS.accumulateAndGet(now, Math::max);
            STARTS.incrementAndGet();
        }

        static void reset(boolean each) {
            STARTED_NANOS.clear();
            STARTED_EPOCH_MICROS.clear();
            STARTS.set(0);
            LAST_START_NANOS.set(0);
            recordEach = each;
        }
    }

    static List<String> run(Map<String, String> args, String url) throws Exception {
        String workload = args.get("workload");
        int repeat = Integer.parseInt(args.getOrDefault("repeat", "3"));
        int warmup = Integer.parseInt(args.getOrDefault("warmup_runs", "1"));
        List<String> lines = new ArrayList<>();
        try (ConfigurableApplicationContext context = start(args, url)) {
            PgQueue workers = context.getBean(PgQueue.class);
            QueueClient queue = context.getBean(QueueClient.class);
            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
            NoopTask.recordResults = Boolean.parseBoolean(args.getOrDefault("results", "false"))
                    || workload.equals("starter-await");
            for (int run = 1 - warmup; run <= repeat; run++) {
                String line = switch (workload) {
                    case "starter-drain" -> drain(workers, queue, jdbc, Integer.parseInt(args.getOrDefault("n", "100000")));
                    case "starter-latency" -> latency(queue, jdbc, Integer.parseInt(args.getOrDefault("rate", "200")),
                            Integer.parseInt(args.getOrDefault("count", "4000")));
                    case "starter-await" -> awaitEach(queue, jdbc, Integer.parseInt(args.getOrDefault("count", "1000")));
                    case "starter-enqueue" -> enqueue(queue, jdbc, Integer.parseInt(args.getOrDefault("producers", "8")),
                            Integer.parseInt(args.getOrDefault("rate", "10000")),
                            Integer.parseInt(args.getOrDefault("seconds", "20")));
                    case "starter-latency-external" -> external(jdbc, url, Integer.parseInt(args.getOrDefault("rate", "200")),
                            Integer.parseInt(args.getOrDefault("count", "4000")),
                            Integer.parseInt(args.getOrDefault("producer_warmup", "20000")), args.get("dump"));
                    default -> throw new IllegalArgumentException("Unknown workload '" + workload + "'");
                };
                if (run <= 0) {
                    System.out.println("(warm-up, discarded) " + line);
                }
                else {
                    System.out.println(line);
                    lines.add(line);
                }
            }
        }
        return lines;
    }

    private static ConfigurableApplicationContext start(Map<String, String> args, String url) {
        SpringApplication application = new SpringApplication(BenchmarkApplication.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        Map<String, Object> properties = new LinkedHashMap<>(THROUGHPUT_SETTINGS);
        properties.put("spring.datasource.url", url);
        properties.put("pgqueue.retention.completed", "PT1H");
        properties.put("logging.level.root", "WARN");
        properties.put("spring.main.banner-mode", "off");
        args.forEach((key, value) -> {
            if (key.startsWith("spring.") || key.startsWith("pgqueue.") || key.startsWith("management.")) {
                properties.put(key, value);
            }
        });
        application.setDefaultProperties(properties);
        return application.run();
    }

    /** Enqueues n jobs with the workers stopped, starts them, times the drain to the last handler start. */
    private static String drain(PgQueue workers, QueueClient queue, JdbcTemplate jdbc, int n) {
        workers.stopWorkers();
        clear(jdbc);
        NoopTask.reset(false);
        long enqueueStart = System.nanoTime();
        List<JobRequest> chunk = new ArrayList<>(1000);
        for (int i = 0; i < n; i++) {
            chunk.add(JobRequest.of("noop", (long) i));
            if (chunk.size() == 1000 || i == n - 1) {
                queue.enqueueAll(chunk);
                chunk.clear();
            }
        }
        double enqueueSeconds = (System.nanoTime() - enqueueStart) / 1e9;
        JvmCounters before = JvmCounters.read();
        ServerCounters serverBefore = ServerCounters.read(jdbc.getDataSource());
        long started = System.nanoTime();
        workers.startWorkers();
        long deadline = started + TimeUnit.MINUTES.toNanos(5);
        while (NoopTask.STARTS.get() < n && System.nanoTime() < deadline) {
            LockSupport.parkNanos(200_000);
        }
        if (NoopTask.STARTS.get() < n) {
            throw new IllegalStateException("Only " + NoopTask.STARTS.get() + " of " + n + " jobs started in 5 minutes");
        }
        double seconds = (NoopTask.LAST_START_NANOS.get() - started) / 1e9;
        String jvm = JvmCounters.read().perJobSince(before, n);
        ServerCounters server = ServerCounters.read(jdbc.getDataSource()).minus(serverBefore);
        return String.format(Locale.ROOT, "workload=starter-drain n=%d enqueue_per_s=%.0f drain_per_s=%.0f %s "
                + "server_cpu_us_per_job=%.1f", n, n / enqueueSeconds, n / seconds, jvm, server.cpuMicrosPerJob(n));
    }

    /** Single enqueues at a fixed rate on this JVM: enqueue return to handler start. */
    private static String latency(QueueClient queue, JdbcTemplate jdbc, int rate, int count) {
        clear(jdbc);
        NoopTask.reset(true);
        Map<Long, Long> returned = new LinkedHashMap<>();
        long interval = TimeUnit.SECONDS.toNanos(1) / rate;
        long next = System.nanoTime();
        for (int i = 0; i < count; i++) {
            long wait = next - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            }
            long id = queue.enqueue("noop", (long) i).jobId();
            returned.put(id, System.nanoTime());
            next += interval;
        }
        awaitStarts(count);
        double[] millis = returned.entrySet().stream()
            .mapToDouble(entry -> (NoopTask.STARTED_NANOS.get(entry.getKey()) - entry.getValue()) / 1e6)
            .toArray();
        return percentiles("starter-latency", rate, millis);
    }

    /**
     * One caller that enqueues a job and awaits its result, {@code count} times in a row: the time
     * from the enqueue call to the await's return, through the claim, the handler recording its
     * result, the completion and the end's notification.
     */
    private static String awaitEach(QueueClient queue, JdbcTemplate jdbc, int count) {
        clear(jdbc);
        NoopTask.reset(false);
        double[] millis = new double[count];
        for (int i = 0; i < count; i++) {
            long start = System.nanoTime();
            long id = queue.enqueue("noop", (long) i).jobId();
            Long result = queue.await(id, Long.class, Duration.ofSeconds(30));
            millis[i] = (System.nanoTime() - start) / 1e6;
            if (result == null || result != i) {
                throw new IllegalStateException("Job " + id + " returned " + result + ", not " + i);
            }
        }
        return percentiles("starter-await", 0, millis);
    }

    /**
     * Single enqueue calls from several producer threads at a fixed total rate while the workers run:
     * the rate achieved, the backlog left at the end (enqueued, not started), and the enqueue call's
     * duration. Sustained: at least 95 % of the target and a backlog under a second's worth.
     */
    private static String enqueue(QueueClient queue, JdbcTemplate jdbc, int producers, int rate, int seconds)
            throws InterruptedException {
        clear(jdbc);
        NoopTask.reset(false);
        PacedProducers.Result produced = PacedProducers.run(producers, rate, seconds, i -> queue.enqueue("noop", (long) i));
        int backlog = produced.enqueued() - NoopTask.STARTS.get();
        awaitStarts(produced.enqueued());
        boolean sustained = produced.perSecond() >= rate * 0.95 && backlog < rate;
        return String.format(Locale.ROOT, "workload=starter-enqueue producers=%d target_per_s=%d achieved_per_s=%.0f "
                + "backlog_at_end=%d sustained=%s enqueue_call_p50_ms=%.2f enqueue_call_p99_ms=%.2f", producers, rate,
                produced.perSecond(), backlog, sustained, produced.callMillisAt(0.50), produced.callMillisAt(0.99));
    }

    /** Single enqueues at a fixed rate from another JVM: enqueue return to handler start, on the machine's clock. */
    private static String external(JdbcTemplate jdbc, String url, int rate, int count, int warmup, String dump)
            throws IOException, InterruptedException {
        clear(jdbc);
        NoopTask.reset(true);
        Path out = Files.createTempFile("pgqueue-producer", ".txt");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process producer = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                ExternalProducer.class.getName(), url, Integer.toString(rate), Integer.toString(count), out.toString(),
                Integer.toString(warmup))
            .redirectErrorStream(true).start();
        try (BufferedReader output = new BufferedReader(new InputStreamReader(producer.getInputStream(),
                StandardCharsets.UTF_8))) {
            output.lines().forEach(line -> System.out.println("  producer: " + line));
        }
        if (producer.waitFor() != 0) {
            throw new IllegalStateException("The producer JVM failed");
        }
        awaitStarts(count);
        List<String> lines = Files.readAllLines(out);
        double[] millis = new double[lines.size()];
        StringBuilder dumped = new StringBuilder();
        for (int i = 0; i < millis.length; i++) {
            String[] fields = lines.get(i).split(" ");
            long startedMicros = NoopTask.STARTED_EPOCH_MICROS.get(Long.parseLong(fields[0]));
            millis[i] = (startedMicros - Long.parseLong(fields[1])) / 1000.0;
            dumped.append(lines.get(i)).append(' ').append(startedMicros).append('\n');
        }
        Files.deleteIfExists(out);
        if (dump != null) {
            Files.writeString(Path.of(dump), dumped.toString());
        }
        return percentiles("starter-latency-external", rate, millis);
    }

    private static void awaitStarts(int count) {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (NoopTask.STARTS.get() < count && System.nanoTime() < deadline) {
            LockSupport.parkNanos(1_000_000);
        }
        if (NoopTask.STARTS.get() < count) {
            throw new IllegalStateException("Only " + NoopTask.STARTS.get() + " of " + count + " jobs started");
        }
    }

    /**
     * The percentiles of latencies given in enqueue order, and how many starts took over 2 ms in each
     * quarter of the run (a tail that shrinks quarter by quarter is warm-up, an even one is not).
     */
    private static String percentiles(String workload, int rate, double[] inOrder) {
        int[] slow = new int[4];
        for (int i = 0; i < inOrder.length; i++) {
            if (inOrder[i] > 2.0) {
                slow[i * 4 / inOrder.length]++;
            }
        }
        double[] millis = inOrder.clone();
        Arrays.sort(millis);
        return String.format(Locale.ROOT, "workload=%s rate=%d n=%d p50_ms=%.2f p95_ms=%.2f p99_ms=%.2f max_ms=%.2f "
                + "over_2ms_by_quarter=%d/%d/%d/%d", workload, rate, millis.length, at(millis, 0.50), at(millis, 0.95),
                at(millis, 0.99), millis[millis.length - 1], slow[0], slow[1], slow[2], slow[3]);
    }

    /** The value at a quantile of sorted values (nearest rank). */
    static double at(double[] sorted, double quantile) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(quantile * sorted.length) - 1)];
    }

    private static void clear(JdbcTemplate jdbc) {
        jdbc.execute("TRUNCATE pgqueue.job, pgqueue.job_finished");
    }

    static long epochMicros() {
        Instant now = Instant.now();
        return ChronoUnit.MICROS.between(Instant.EPOCH, now);
    }
}
