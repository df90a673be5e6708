package io.pgqueue.benchmark;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.pgqueue.EnqueueOptions;
import io.pgqueue.JobRequest;
import io.pgqueue.JobState;
import io.pgqueue.PgQueue;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueConfig;
import io.pgqueue.QueueDefaults;
import io.pgqueue.RateLimit;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskGroups;
import io.pgqueue.TaskHandler;
import io.pgqueue.TaskRegistry;
import io.pgqueue.Workflow;
import io.pgqueue.balance.BalancerSettings;
import io.pgqueue.balance.PartitionBalancer;
import io.pgqueue.observe.MicrometerQueueEvents;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.observe.QueueMeterNames;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.shard.ShardLayout;
import io.pgqueue.store.QueueSchema;
import io.pgqueue.worker.PoolSettings;
import io.pgqueue.worker.WorkerExecutors;
import io.pgqueue.worker.WorkerSettings;
import io.pgqueue.worker.WorkerTask;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * The benchmark command. Uses the queue through its public core API, as an application would,
 * against the database given by {@code url=} (default: an embedded PostgreSQL). Prints one
 * machine-readable line per workload, e.g. {@code workload=drain n=100000 enqueue_per_s=...}.
 * <p>
 * Arguments ({@code key=value}): {@code workload} = drain | latency | mixed | backlog | tasks | all
 * (default all; these drive the core directly), {@code starter-drain}, {@code starter-latency} or
 * {@code starter-latency-external} (an application built with the starter: {@link StarterBenchmark}), {@code balance} (the balancer under a skewed load, with {@code shards=3}, {@code rate}
 * and {@code seconds}; not in all), or {@code balancer}: the partition balancer's simulation ({@link BalancerSimulation},
 * no database; {@code out} names its output directory), {@code n} (jobs for drain/tasks, default 100000), {@code url}, {@code concurrency}
 * (handler threads of the no-op task, default 8), {@code backlog} (queued jobs for the backlog
 * workload, default 1000000), {@code seconds} (duration of latency/mixed runs, default 20),
 * {@code retention} (completed retention, default PT1H; PT0S deletes completed jobs), {@code poll} (poll
 * interval, default PT0.5S), {@code vacuum} (VACUUM interval, default PT10S), {@code prefetch} (maximum
 * prefetch per task, default 1000), {@code memory} ({@code true}: halfway through each drain, a full
 * GC and the live heap and thread count, reported as {@code heap_live_mib} and {@code threads}),
 * {@code repeat} (runs per workload, default 3), {@code warmup}
 * (jobs of the discarded warm-up drains, in drains of at most 100000, default 200000: the JIT
 * compiler needs about that much to settle, and on two cores its threads take CPU from the drain;
 * five discarded seconds of the latency workload at 2,000 jobs/s follow; {@code warmup=0} skips both),
 * {@code dump} (a path prefix: each latency run writes its per-job figures to {@code <prefix>-<rate>.txt}),
 * {@code keys} (the claim-order keys of the drained and queued jobs: {@code batch}, the default, gives
 * each 1,000 consecutive jobs one schedule time, as one {@code enqueueAll} transaction or one group
 * commit does; {@code distinct} gives every job its own, as enqueues in separate transactions do),
 * {@code shards} (0, the default: the unsharded engine; N: a sharded installation of N shards, the
 * benchmark's database and N - 1 more databases on the same server, each enqueue routed by
 * partition and fenced by its shard, and one node claiming from every shard), {@code global_concurrency}
 * and {@code task_rate} (flow control of every task: its global concurrency, and its rate as
 * permits/period; none by default); {@code fairness}: one tenant's {@code n} jobs, then one of another
 * tenant, {@code groups=fair|none} and {@code group_concurrency} (not in all).
 */
public final class QueueBenchmark {

    private static final JsonMapper MAPPER = JsonMapper.builder().build();

    private static final String SCHEMA = "pgqueue_bench";

    /** Names of the drain's durable steps, as a handler's might be. */
    private static final String[] STEP_NAMES = { "charge-", "reserve-", "notify-", "invoice-", "audit-" };

    private final Map<String, String> args;

    private final BenchmarkDatabase database;

    private final HikariDataSource workerPool;

    private final HikariDataSource producerPool;

    private final List<String> results = new ArrayList<>();

    /** The other shards' databases (shards=N), with their worker and producer pools. */
    private final List<HikariDataSource[]> shardPools = new ArrayList<>();

    /** Meters of the current workers: claim statistics explain the figures. */
    private SimpleMeterRegistry meters = new SimpleMeterRegistry();

    private final AtomicLong emptyClaims = new AtomicLong();

    /** Outcomes of the current workers written to the database: a drain ends when all are. */
    private final AtomicInteger written = new AtomicInteger();

    private QueueBenchmark(Map<String, String> args) {
        this.args = args;
        this.database = new BenchmarkDatabase(args.get("url"));
        this.workerPool = this.database.pool("workers", 8);
        // Producers use their own connections, as another application instance would.
        this.producerPool = this.database.pool("producers", 16);
        int shards = intArg("shards", 0);
        for (int i = 1; i < shards; i++) {
            String name = SCHEMA + "_shard_" + i;
            this.database.createDatabase(this.workerPool, name);
            this.shardPools.add(new HikariDataSource[] { this.database.pool(name, "shard-" + i + "-workers", 6),
                this.database.pool(name, "shard-" + i + "-producers", 8) });
        }
    }

    /**
     * Runs the benchmark.
     * @param argv {@code key=value} arguments
     * @throws Exception on failure
     */
    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new LinkedHashMap<>();
        for (String arg : argv) {
            int eq = arg.indexOf('=');
            if (eq < 0) {
                args.put("workload", arg);
            }
            else {
                args.put(arg.substring(0, eq).replaceFirst("^--", ""), arg.substring(eq + 1));
            }
        }
        if ("sqs".equals(args.get("workload"))) {
            // A client of running SQS servers: no database of its own.
            SqsBenchmark.main(args);
            System.exit(0);
        }
        if (args.getOrDefault("workload", "").startsWith("starter-")) {
            // Through the starter: a Spring Boot application of its own on the benchmark's database.
            try (BenchmarkDatabase database = new BenchmarkDatabase(args.get("url"))) {
                List<String> lines = StarterBenchmark.run(args, database.jdbcUrl());
                System.out.println();
                Summary.of(lines).forEach(System.out::println);
            }
            System.exit(0);
        }
        if ("balancer".equals(args.get("workload"))) {
            // A simulation: no database.
            BalancerSimulation.main(new String[] { "out=" + args.getOrDefault("out", "target/balancer") });
            System.exit(0);
        }
        execute(args);
        System.exit(0);
    }

    private void run(String workload) throws Exception {
        switch (workload) {
            case "drain" -> drain(prepare("drain", 1, intArg("n", 100_000), 0, SCHEMA));
            case "tasks" -> {
                drain(prepare("tasks", 1, intArg("n", 100_000), 0, SCHEMA));
                drain(prepare("tasks", 20, intArg("n", 100_000), 0, SCHEMA));
            }
            case "latency" -> {
                for (String rate : this.args.getOrDefault("rates", "200,2000").split(",")) {
                    latency(Integer.parseInt(rate.trim()), intArg("seconds", 20));
                }
            }
            case "mixed" -> mixed();
            case "fairness" -> fairness();
            case "workflow" -> workflow();
            case "balance" -> balance();
            case "backlog" -> {
                // The two drains of a pair run back to back, the backlog filled before both: their
                // ratio is less exposed to the machine's drift than medians of runs minutes apart,
                // and filling 10 M jobs takes a minute.
                int backlog = intArg("backlog", 1_000_000);
                Drain queued = prepare("backlog", 1, intArg("n", 100_000), backlog, SCHEMA + "_backlog");
                Drain alone = prepare("backlog", 1, intArg("n", 100_000), 0, SCHEMA);
                checkpoint();
                double empty = drain(alone);
                checkpoint();
                double full = drain(queued);
                report("workload=backlog_vs_empty backlog=%d keys=%s drain_ratio=%.3f%n", backlog, queued.keys(),
                        full / empty);
            }
            default -> throw new IllegalArgumentException("Unknown workload '" + workload
                    + "'; use drain, latency, mixed, backlog, tasks, fairness, workflow or all");
        }
    }

    /** A step of the workflow workload: a part of a fan-out, its fan-in, or a step of a chain. */
    record StepJob(String kind, int workflow, int n) {
    }

    /**
     * Workflows through the workers: {@code workflows} fan-outs of {@code width} parts (default 20 ×
     * 1,000) with one fan-in each, enqueued together and drained; then one chain of {@code chain}
     * steps (default 200), each after the previous. Reports the enqueue time per fan-out workflow,
     * the drain rate of all their jobs, the delay from the end of a fan-out's last part to the start of
     * its fan-in, and the delay between the end of a chain step and the start of the next (the
     * handlers' return to the next start: outcome write, release at commit, notification, claim).
     */
    private void workflow() throws Exception {
        int width = intArg("width", 1_000);
        int count = intArg("workflows", 20);
        int chain = intArg("chain", 200);
        QueueConfig config = config();
        reset(config);
        long[] lastPartEnd = new long[count];
        long[] fanInDelay = new long[count];
        long[] hops = new long[chain - 1];
        AtomicLong previousEnd = new AtomicLong();
        AtomicInteger fanIns = new AtomicInteger();
        AtomicInteger chainDone = new AtomicInteger();
        TaskHandler<StepJob> handler = (step, context) -> {
            long now = System.nanoTime();
            switch (step.kind()) {
                case "part" -> {
                    synchronized (lastPartEnd) {
                        lastPartEnd[step.workflow()] = Math.max(lastPartEnd[step.workflow()], System.nanoTime());
                    }
                }
                case "fan-in" -> {
                    synchronized (lastPartEnd) {
                        fanInDelay[step.workflow()] = now - lastPartEnd[step.workflow()];
                    }
                    fanIns.incrementAndGet();
                }
                default -> {
                    if (step.n() > 0) {
                        hops[step.n() - 1] = now - previousEnd.get();
                    }
                    previousEnd.set(System.nanoTime());
                    chainDone.incrementAndGet();
                }
            }
        };
        WorkerTask task = task("step", handler, StepJob.class, intArg("concurrency", 8));
        QueueClient client = client(config, List.of(task), this.producerPool);
        long enqueueStart = System.nanoTime();
        for (int w = 0; w < count; w++) {
            Workflow fan = client.workflow("fan");
            String[] parts = new String[width];
            for (int i = 0; i < width; i++) {
                parts[i] = "p" + i;
                fan.add(parts[i], "step", new StepJob("part", w, i));
            }
            fan.add("fan-in", "step", new StepJob("fan-in", w, 0), Workflow.after(parts)).enqueue();
        }
        double enqueueSeconds = seconds(enqueueStart);
        PgQueue workers = workers(config, List.of(task));
        long start = System.nanoTime();
        workers.startWorkers();
        awaitCount(fanIns, count, Duration.ofMinutes(30));
        double drainSeconds = seconds(start);
        Workflow steps = client.workflow("chain");
        for (int i = 0; i < chain; i++) {
            steps.add("s" + i, "step", new StepJob("chain", 0, i), i == 0 ? null : Workflow.after("s" + (i - 1)));
        }
        steps.enqueue();
        awaitCount(chainDone, chain, Duration.ofMinutes(10));
        workers.stop();
        long[] fanIn = fanInDelay.clone();
        Arrays.sort(fanIn);
        long[] hop = hops.clone();
        Arrays.sort(hop);
        report("workload=workflow width=%d workflows=%d enqueue_ms_per_workflow=%.1f drain_per_s=%.0f fan_in_p50_ms=%.2f "
                + "fan_in_max_ms=%.2f chain=%d hop_p50_ms=%.2f hop_p95_ms=%.2f hop_p99_ms=%.2f %s%n", width, count,
                enqueueSeconds * 1000 / count, count * (width + 1) / drainSeconds, ms(fanIn, 0.5), ms(fanIn, 1.0), chain,
                ms(hop, 0.5), ms(hop, 0.95), ms(hop, 0.99), claimStats());
    }

    /** A job of the fairness workload: its tenant (group) and its number. */
    record TenantJob(String tenant, int n) {
    }

    /**
     * One tenant's n jobs (default 100,000) queued, then one job of another tenant: how long until
     * that job starts, how many of the big tenant's jobs started before it, and the drain rate of
     * the whole. With {@code groups=fair} (the default) the task's claims go round-robin across
     * tenants; {@code groups=none} claims in enqueue order, the small tenant's job after all others.
     */
    private void fairness() throws Exception {
        int n = intArg("n", 100_000);
        boolean fair = !"none".equals(this.args.getOrDefault("groups", "fair"));
        QueueConfig config = config();
        reset(config);
        AtomicInteger started = new AtomicInteger();
        AtomicInteger startedBefore = new AtomicInteger(-1);
        AtomicLong smallStarted = new AtomicLong();
        TaskHandler<TenantJob> handler = (job, context) -> {
            int order = started.incrementAndGet();
            if (job.tenant().equals("small")) {
                smallStarted.set(System.nanoTime());
                startedBefore.set(order - 1);
            }
        };
        TaskDefinition.Builder definition = TaskDefinition.builder("tenant-work");
        if (fair) {
            definition.groups(TaskGroups.fair(intArg("group_concurrency", 0)).withKey(job -> ((TenantJob) job).tenant()));
        }
        WorkerTask task = WorkerTask.of(definition.build(), handler, TenantJob.class, intArg("concurrency", 8),
                Duration.ofMinutes(1), "default");
        QueueClient client = client(config, List.of(task), this.producerPool);
        for (int from = 0; from < n; from += 1000) {
            List<JobRequest> jobs = new ArrayList<>();
            for (int i = from; i < Math.min(n, from + 1000); i++) {
                jobs.add(JobRequest.of("tenant-work", new TenantJob("big", i)));
            }
            client.enqueueAll(jobs);
        }
        client.enqueue("tenant-work", new TenantJob("small", 0));
        PgQueue workers = workers(config, List.of(task));
        long start = System.nanoTime();
        workers.startWorkers();
        awaitCount(this.written, n + 1, Duration.ofMinutes(30));
        double seconds = seconds(start);
        workers.stop();
        report("workload=fairness groups=%s n=%d small_start_ms=%.1f big_started_before=%d drain_per_s=%.0f %s%n",
                fair ? "fair" : "none", n, (smallStarted.get() - start) / 1e6, startedBefore.get(), (n + 1) / seconds,
                claimStats());
    }

    /**
     * A drain made ready to run: its schema, tasks and enqueued jobs.
     * @param workload the workload name to report
     * @param taskTypes how many task types the jobs are spread over
     * @param n the jobs to drain
     * @param backlog the jobs queued ahead of them
     * @param distinctKeys whether every job has its own schedule time
     * @param config the queue configuration, naming the drain's schema
     * @param tasks the tasks the workers run
     * @param runs how often each job ran, by payload
     * @param enqueueSeconds how long enqueuing the n jobs took
     */
    private record Drain(String workload, int taskTypes, int n, int backlog, boolean distinctKeys, QueueConfig config,
            List<WorkerTask> tasks, AtomicIntegerArray runs, double enqueueSeconds) {

        /** @return the key shape as the result lines name it */
        String keys() {
            return this.distinctKeys ? "distinct" : "batch";
        }
    }

    /**
     * Enqueues n jobs in bulk over the given number of task types (plus an optional backlog of
     * queued jobs of the same types, inserted directly) into a new schema of the given name.
     * @param workload the workload name to report
     * @param taskTypes how many task types to spread the jobs over
     * @param n the jobs to enqueue and drain
     * @param backlog the jobs to queue ahead of them, 0 for none
     * @param schema the schema to create (dropped first if it exists)
     * @return the drain, to be run by {@link #drain(Drain)}
     */
    private Drain prepare(String workload, int taskTypes, int n, int backlog, String schema) {
        QueueConfig config = config().withSchema(schema);
        reset(config);
        List<String> names = new ArrayList<>();
        for (int t = 0; t < taskTypes; t++) {
            names.add("noop-" + t);
        }
        AtomicIntegerArray runs = new AtomicIntegerArray(n + backlog);
        // Durable steps per job (argument steps, 0 by default): each records its value, as a durable handler's do.
        int steps = intArg("steps", 0);
        TaskHandler<Integer> handler = steps == 0 ? (i, context) -> runs.incrementAndGet(i) : (i, context) -> {
            for (int step = 0; step < steps; step++) {
                context.step(STEP_NAMES[step % STEP_NAMES.length] + step, Integer.class, () -> i);
            }
            runs.incrementAndGet(i);
        };
        int perTask = Math.max(1, intArg("concurrency", 8) / taskTypes);
        List<WorkerTask> tasks = names.stream().map(name -> task(name, handler, Integer.class,
                taskTypes == 1 ? intArg("concurrency", 8) : perTask)).toList();
        QueueClient client = client(config, tasks, this.producerPool);

        boolean distinctKeys = distinctKeys();
        if (backlog > 0) {
            fillBacklog(config, names, n, backlog, distinctKeys);
        }
        // Distinct keys: due a minute ago, 1 µs apart, in enqueue order (after any backlog's keys).
        // Whole microseconds, as PostgreSQL stores them: from a start with 500 ns left over, it
        // would round two neighbours (n + 0.5 and n + 1.5 µs) half to even onto one time.
        Instant firstDue = Instant.now().truncatedTo(ChronoUnit.MICROS).minus(Duration.ofMinutes(1));
        long start = System.nanoTime();
        List<JobRequest> batch = new ArrayList<>(1000);
        for (int i = 0; i < n; i++) {
            batch.add(distinctKeys
                    ? JobRequest.of(names.get(i % taskTypes), i, EnqueueOptions.defaults().withRunAt(firstDue.plusNanos(i * 1000L)))
                    : JobRequest.of(names.get(i % taskTypes), i));
            if (batch.size() == 1000) {
                client.enqueueAll(batch);
                batch.clear();
            }
        }
        if (!batch.isEmpty()) {
            client.enqueueAll(batch);
        }
        return new Drain(workload, taskTypes, n, backlog, distinctKeys, config, tasks, runs, seconds(start));
    }

    /**
     * Drains n jobs of a prepared drain with one node and checks that each ran at most once (exactly
     * once without a backlog).
     * @return the drain rate, jobs per second
     */
    private double drain(Drain drain) throws Exception {
        int n = drain.n();
        AtomicIntegerArray runs = drain.runs();
        PgQueue workers = workers(drain.config(), drain.tasks());
        ServerCounters before = ServerCounters.read(this.producerPool);
        JvmCounters jvmBefore = JvmCounters.read();
        long drainStart = System.nanoTime();
        workers.startWorkers();
        String memory = "";
        if (Boolean.parseBoolean(this.args.getOrDefault("memory", "false"))) {
            // Halfway, with every shard's fetch loop busy and the buffers full: a full GC, then the live heap.
            awaitCount(this.written, n / 2, Duration.ofMinutes(10));
            memory = " " + JvmCounters.liveHeapAndThreads();
        }
        // Done when every outcome is written (durably finished), not when the handlers ran.
        awaitCount(this.written, n, Duration.ofMinutes(10));
        double drainSeconds = seconds(drainStart);
        String jvm = JvmCounters.read().perJobSince(jvmBefore, n);
        ServerCounters during = ServerCounters.read(this.producerPool).minus(before);
        workers.stop();

        boolean exactlyOnce = true;
        if (drain.backlog() == 0) {
            for (int i = 0; i < n; i++) {
                exactlyOnce &= runs.get(i) == 1;
            }
            exactlyOnce &= activeJobs(drain.config()) == 0;
        }
        else {
            for (int i = 0; i < runs.length(); i++) {
                exactlyOnce &= runs.get(i) <= 1;
            }
        }
        report("workload=%s task_types=%d n=%d backlog=%d keys=%s steps=%d enqueue_per_s=%.0f drain_per_s=%.0f "
                + "exactly_once=%s %s wal_bytes_per_job=%.0f checkpoints=%d db_cpu_us_per_job=%.1f %s%s%n",
                drain.workload(), drain.taskTypes(), n, drain.backlog(), drain.keys(), intArg("steps", 0),
                n / drain.enqueueSeconds(), n / drainSeconds, exactlyOnce, claimStats(),
                (double) during.walBytes() / n, during.checkpoints(), during.cpuMicrosPerJob(n), jvm, memory);
        return n / drainSeconds;
    }

    /** Jobs enqueued one at a time at a steady rate by another connection pool; enqueue → start. */
    private void latency(int rate, int seconds) throws Exception {
        QueueConfig config = config();
        reset(config);
        int total = rate * seconds;
        long[] latencies = new long[total];
        long[] enqueueCalls = new long[total];
        AtomicInteger done = new AtomicInteger();
        TaskHandler<long[]> handler = (payload, context) -> {
            latencies[(int) payload[0]] = System.nanoTime() - payload[1];
            done.incrementAndGet();
        };
        WorkerTask task = task("ping", handler, long[].class, 8);
        QueueClient producer = client(config, List.of(task), this.producerPool);
        PgQueue workers = workers(config, List.of(task));
        workers.startWorkers();
        long interval = 1_000_000_000L / rate;
        long start = System.nanoTime();
        for (int i = 0; i < total; i++) {
            long due = start + i * interval;
            while (System.nanoTime() < due) {
                LockSupport.parkNanos(Math.max(1000, due - System.nanoTime() - 50_000));
            }
            long before = System.nanoTime();
            producer.enqueue("ping", new long[] { i, before });
            enqueueCalls[i] = System.nanoTime() - before;
        }
        double achieved = total / seconds(start);
        awaitCount(done, total, Duration.ofMinutes(2));
        workers.stop();
        // From the moment the enqueue call returned (the job committed) to the handler's start;
        // negative when the worker started the job before the producer saw its commit.
        long[] afterCommit = new long[total];
        for (int i = 0; i < total; i++) {
            afterCommit[i] = latencies[i] - enqueueCalls[i];
        }
        String dump = this.args.get("dump");
        if (dump != null) {
            // One line per job in enqueue order (20 s at 200/s: job i was due at i / 200 s): index,
            // call → start and the enqueue call, in microseconds; shows whether slow jobs cluster.
            try (PrintWriter out = new PrintWriter(dump + "-" + rate + ".txt", StandardCharsets.UTF_8)) {
                for (int i = 0; i < total; i++) {
                    out.println(i + " " + latencies[i] / 1000 + " " + enqueueCalls[i] / 1000);
                }
            }
        }
        long[] sorted = latencies.clone();
        Arrays.sort(sorted);
        Arrays.sort(enqueueCalls);
        Arrays.sort(afterCommit);
        report("workload=latency rate=%d achieved_per_s=%.0f n=%d p50_ms=%.2f p95_ms=%.2f "
                + "p99_ms=%.2f max_ms=%.2f enqueue_call_p50_ms=%.2f enqueue_call_p99_ms=%.2f commit_to_start_p50_ms=%.2f "
                + "commit_to_start_p99_ms=%.2f %s%n", rate, achieved, total, ms(sorted, 0.50), ms(sorted, 0.95),
                ms(sorted, 0.99), sorted[total - 1] / 1e6, ms(enqueueCalls, 0.50), ms(enqueueCalls, 0.99),
                ms(afterCommit, 0.50), ms(afterCommit, 0.99), claimStats());
    }

    /** 8 producers making single enqueue calls at fixed rates while workers drain; finds the highest sustainable rate. */
    private void mixed() throws Exception {
        int seconds = Math.max(5, intArg("seconds", 20) / 2);
        int best = 0;
        for (int rate : new int[] { 1000, 2000, 4000, 5000, 6000, 7000, 8000, 10000, 12000 }) {
            QueueConfig config = config();
            reset(config);
            AtomicInteger done = new AtomicInteger();
            WorkerTask task = task("noop-0", (Integer i, TaskContext context) -> done.incrementAndGet(), Integer.class,
                    intArg("concurrency", 8));
            QueueClient producer = client(config, List.of(task), this.producerPool);
            PgQueue workers = workers(config, List.of(task));
            workers.startWorkers();
            int producers = 8;
            PacedProducers.Result produced = PacedProducers.run(producers, rate, seconds,
                    i -> producer.enqueue("noop-0", i));
            double achieved = produced.perSecond();
            long backlogAtEnd = produced.enqueued() - done.get();
            awaitCount(done, produced.enqueued(), Duration.ofMinutes(2));
            workers.stop();
            boolean sustained = achieved >= rate * 0.95 && backlogAtEnd < rate;
            report("workload=mixed producers=%d target_per_s=%d achieved_per_s=%.0f "
                    + "backlog_at_end=%d sustained=%s%n", producers, rate, achieved, backlogAtEnd, sustained);
            if (!sustained) {
                break;
            }
            best = rate;
        }
        report("workload=mixed highest_sustained_per_s=%d%n", best);
    }

    /**
     * The balancer on the shards under a steady load whose keys are skewed onto the main shard's
     * partitions: 8 producers enqueue single jobs at {@code rate} for {@code seconds} while the
     * workers run them and the balancer (a round every 2 s, weights over 30 s) moves partitions.
     * Prints a line per second (completions, Gini index, moves, whether a move ran) and a summary;
     * every job must have run exactly once.
     */
    private void balance() throws Exception {
        if (this.shardPools.isEmpty()) {
            throw new IllegalArgumentException("workload=balance needs shards=2 or more");
        }
        int seconds = intArg("seconds", 120);
        int rate = intArg("rate", 2000);
        QueueConfig config = config();
        reset(config);
        AtomicIntegerArray runs = new AtomicIntegerArray(rate * seconds * 2 + 1000);
        AtomicInteger done = new AtomicInteger();
        // Jobs started per 100 ms since the start, to see what a move of a few hundred milliseconds costs.
        AtomicIntegerArray started = new AtomicIntegerArray(seconds * 10 + 1200);
        long[] origin = new long[1];
        WorkerTask task = task("noop-0", (Integer i, TaskContext context) -> {
            runs.incrementAndGet(i);
            done.incrementAndGet();
            int bucket = (int) ((System.nanoTime() - origin[0]) / 100_000_000L);
            if (bucket >= 0 && bucket < started.length()) {
                started.incrementAndGet(bucket);
            }
        }, Integer.class, intArg("concurrency", 8));
        BalancerSettings settings = new BalancerSettings(Duration.ofSeconds(2), 1, QueueDefaults.BALANCER_OVERLOAD_LAG,
                QueueDefaults.BALANCER_OVERLOAD_WINDOW, QueueDefaults.BALANCER_GINI_UPPER, QueueDefaults.BALANCER_GINI_LOWER,
                QueueDefaults.BALANCER_FRICTION_MOVES, QueueDefaults.BALANCER_FRICTION_WINDOW, Map.of());
        // The producers' node runs the balancer: it weighs the partitions by the jobs it enqueues.
        PgQueue producers = queue(config, List.of(task), this.producerPool, 1).statsInterval(Duration.ofSeconds(1))
            .balancer(true, settings, Duration.ofSeconds(30)).build();
        producers.start();
        QueueClient producer = producers.client();
        PartitionBalancer balancer = producers.balancer();
        PgQueue workers = workers(config, List.of(task));
        workers.startWorkers();
        ShardLayout layout = producers.admin().shards();
        SkewedKeys keys = new SkewedKeys(layout.partitions(), new JdbcTemplate(this.producerPool).queryForList(
                "SELECT partition FROM " + config.schema() + ".partition_map WHERE shard = ?", Integer.class,
                QueueDefaults.MAIN_SHARD), 1000, 50, 42);

        int threadCount = 8;
        AtomicInteger enqueued = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(threadCount);
        long start = System.nanoTime();
        Instant startedAt = Instant.now();
        origin[0] = start;
        long end = start + TimeUnit.SECONDS.toNanos(seconds);
        long interval = 1_000_000_000L * threadCount / rate;
        for (int p = 0; p < threadCount; p++) {
            long offset = interval * p / threadCount;
            int seed = p;
            threads.submit(() -> {
                java.util.Random random = new java.util.Random(seed);
                long due = start + offset;
                while (due < end) {
                    while (System.nanoTime() < due) {
                        LockSupport.parkNanos(Math.max(1000, due - System.nanoTime() - 50_000));
                    }
                    int n = enqueued.getAndIncrement();
                    producer.enqueue("noop-0", n, EnqueueOptions.defaults().withPartitionKey(keys.next(random)));
                    due += interval;
                }
                return null;
            });
        }
        List<Double> perSecond = new ArrayList<>();
        double giniStart = Double.NaN;
        int lastDone = 0;
        for (int second = 1; second <= seconds; second++) {
            Thread.sleep(Math.max(0, TimeUnit.NANOSECONDS.toMillis(start + TimeUnit.SECONDS.toNanos(second) - System.nanoTime())));
            int now = done.get();
            double completed = now - lastDone;
            lastDone = now;
            boolean moving = !producers.admin().shards().moving().isEmpty();
            double gini = balancer.lastRound().map(io.pgqueue.balance.BalancerRound::gini).orElse(Double.NaN);
            if (Double.isNaN(giniStart) && !Double.isNaN(gini) && second >= 30) {
                giniStart = gini;
            }
            long moves = balancer.moves().values().stream().mapToLong(Long::longValue).sum();
            perSecond.add(completed);
            report("workload=balance t=%d done_per_s=%.0f gini=%.3f moves=%d moving=%s loads=%s%n", second, completed, gini,
                    moves, moving, balancer.lastRound().map(round -> round.loads().toString().replace(" ", "")).orElse("-"));
        }
        threads.shutdown();
        threads.awaitTermination(1, TimeUnit.MINUTES);
        awaitCount(done, enqueued.get(), Duration.ofMinutes(2));
        producers.stop();
        workers.stop();
        boolean exactlyOnce = activeJobs(config) == 0;
        int duplicates = 0;
        for (int i = 0; i < enqueued.get(); i++) {
            exactlyOnce &= runs.get(i) == 1;
            duplicates += Math.max(0, runs.get(i) - 1);
        }
        double giniEnd = balancer.lastRound().map(io.pgqueue.balance.BalancerRound::gini).orElse(Double.NaN);
        // Starts per second in the 100 ms buckets a move overlapped, against the others (after the first 5 s).
        boolean[] moving = new boolean[started.length()];
        long moveMillis = 0;
        for (var decision : balancer.recentDecisions(1000)) {
            if (decision.finishedAt() == null) {
                continue;
            }
            long from = Duration.between(startedAt, decision.decidedAt()).toMillis() / 100;
            long to = Duration.between(startedAt, decision.finishedAt()).toMillis() / 100;
            moveMillis += Duration.between(decision.decidedAt(), decision.finishedAt()).toMillis();
            for (long b = Math.max(0, from); b <= to && b < moving.length; b++) {
                moving[(int) b] = true;
            }
        }
        List<Double> duringMoves = new ArrayList<>();
        List<Double> withoutMoves = new ArrayList<>();
        for (int b = 50; b < seconds * 10; b++) {
            (moving[b] ? duringMoves : withoutMoves).add(started.get(b) * 10.0);
        }
        long moves = balancer.moves().values().stream().mapToLong(Long::longValue).sum();
        report("workload=balance shards=%d seconds=%d rate=%d enqueued=%d exactly_once=%s duplicates=%d moves=%d "
                + "move_ms_mean=%.0f gini_at_30s=%.3f gini_end=%.3f done_per_s_mean=%.0f started_per_s_during_moves=%.0f "
                + "started_per_s_without_moves=%.0f%n", layout.shards().size(), seconds, rate, enqueued.get(), exactlyOnce,
                duplicates, moves, moves == 0 ? 0.0 : (double) moveMillis / moves, giniStart, giniEnd, mean(perSecond),
                mean(duringMoves), mean(withoutMoves));
    }

    private static double mean(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
    }

    /** Claims made, jobs per claim and mean claim latency of the last workers. */
    private String claimStats() {
        var batch = this.meters.find(QueueMeterNames.CLAIM_BATCH).summary();
        var latency = this.meters.find(QueueMeterNames.CLAIM_LATENCY).timer();
        if (batch == null || latency == null) {
            return "claims=0";
        }
        return String.format(Locale.ROOT, "claims=%d empty_claims=%d jobs_per_claim=%.2f claim_ms=%.3f", batch.count(),
                this.emptyClaims.get(), batch.mean(), latency.mean(TimeUnit.MILLISECONDS));
    }

    private void fillBacklog(QueueConfig config, List<String> names, int offset, int backlog, boolean distinctKeys) {
        JdbcTemplate jdbc = new JdbcTemplate(this.workerPool);
        // Finished rows not yet cleaned up: older jobs, so their ids come first from the job
        // sequence, as in a queue that ran for a while, where each drained job's finished row is
        // appended at the right end of job_finished_pkey (with ids above the backlog's, every one
        // would go to its left end).
        jdbc.update("INSERT INTO " + config.schema() + ".job_finished (id, task, state, priority, payload, headers, "
                + "schedule_time, attempt, max_attempts, created_at, started_at, finished_at) "
                + "SELECT nextval('" + config.schema() + ".job_id_seq'), 'noop-0', 'COMPLETED', 0, '0', '{}', now(), 1, 5, "
                + "now(), now(), now() FROM generate_series(1, ?) n", backlog / 2);
        String tasks = "ARRAY[" + String.join(",", names.stream().map(name -> "'" + name + "'").toList()) + "]";
        for (int from = 0; from < backlog; from += 1_000_000) {
            int to = Math.min(backlog, from + 1_000_000);
            // Due already, like a backlog that piled up: the drain claims from the whole of it. Its
            // keys have the shape of the drained jobs' (see distinctKeys), or the pair would compare
            // key shapes rather than queue lengths: a claim walks the index entries its predecessors
            // left behind until VACUUM removes them, and deduplication packs entries with one key
            // into a fraction of the pages (1,000 leaf pages against 4,926 for 1 M jobs).
            String due = distinctKeys ? "n * interval '1 microsecond'" : "(n / 1000) * interval '1 millisecond'";
            jdbc.update("INSERT INTO " + config.schema() + ".job (task, payload, max_attempts, schedule_time) "
                    + "SELECT (" + tasks + ")[1 + n % " + names.size() + "], to_jsonb(n + " + offset + "), 5, "
                    + "now() - interval '1 hour' + " + due + " FROM generate_series(?, ?) n", from, to - 1);
        }
        jdbc.execute("VACUUM ANALYZE " + config.schema() + ".job");
        // Vacuumed too, or the millions of inserted rows set off an autovacuum of it within a
        // minute (insert threshold: 20 % of the table), which could fall into either drain.
        jdbc.execute("VACUUM ANALYZE " + config.schema() + ".job_finished");
    }

    /**
     * Starts a drain of the backlog pair on a fresh checkpoint. Writing 10 M rows in seconds leaves
     * ~1.7 GB of dirty pages, which the checkpoint that filling the WAL sets off would otherwise
     * flush during a timed drain (10 M / empty ratios of 0.60 and 0.83 with that flush inside the
     * drain); a backlog that piled up over hours went through its checkpoints as it grew. Before
     * each drain of the pair, not only after the fill: with one CHECKPOINT after the fill, the
     * empty drain's WAL sets off a checkpoint inside the backlog's drain (checkpoints=1 in all three
     * 10 M drains of a run); this way both drains first change their pages after a checkpoint.
     */
    private void checkpoint() {
        try {
            new JdbcTemplate(this.workerPool).execute("CHECKPOINT");
        }
        catch (DataAccessException ex) {
            System.out.println("# CHECKPOINT not permitted (" + ex.getMostSpecificCause().getMessage()
                    + "): the backlog's writes may still be flushed during the drain");
        }
    }

    private void report(String format, Object... values) {
        String line = String.format(Locale.ROOT, format, values).strip();
        System.out.println(line);
        this.results.add(line);
    }

    /**
     * Runs the given workloads and returns their result lines.
     * @param args the arguments (see the class description)
     * @return one line per workload
     * @throws Exception on failure
     */
    static List<String> execute(Map<String, String> args) throws Exception {
        QueueBenchmark benchmark = new QueueBenchmark(args);
        try {
            System.out.println("# pgqueue benchmark on " + benchmark.database.description() + ", "
                    + Runtime.getRuntime().availableProcessors() + " cores, Java " + Runtime.version());
            String workload = args.getOrDefault("workload", "all");
            int repeat = benchmark.intArg("repeat", 3);
            // JIT and connection warm-up; not reported. After a 20,000-job warm-up the first measured
            // 100,000-job drain runs ~30 % slower than the rest (34-39 k vs 51-63 k jobs/s); with the
            // JIT limited to C1 that gap mostly closes, so it is compilation, not the database.
            for (int left = benchmark.intArg("warmup", 200_000); left > 0; left -= 100_000) {
                benchmark.drain(benchmark.prepare("warmup", 1, Math.min(left, 100_000), 0, SCHEMA));
            }
            // The single-enqueue and single-job claim paths are not compiled by then: without this,
            // the first measured 2,000 jobs/s run has a p99 of 43 ms with its slow jobs in its first
            // 5 s, against 3.5-3.7 ms for the next two. Five discarded seconds at that rate compile them.
            if (benchmark.intArg("warmup", 200_000) > 0) {
                benchmark.latency(2000, 5);
            }
            benchmark.results.clear();
            for (String name : workload.equals("all") ? List.of("drain", "tasks", "latency", "mixed", "backlog")
                    : Arrays.asList(workload.split(","))) {
                for (int i = 0; i < repeat; i++) {
                    benchmark.run(name);
                }
            }
            List<String> summary = Summary.of(benchmark.results);
            summary.forEach(line -> System.out.println("summary " + line));
            return List.copyOf(benchmark.results);
        }
        finally {
            benchmark.close();
        }
    }

    private QueueConfig config() {
        return QueueConfig.defaults()
            .withSchema(SCHEMA)
            .withCompletedRetention(Duration.parse(this.args.getOrDefault("retention", "PT1H")));
    }

    private void reset(QueueConfig config) {
        List<HikariDataSource> databases = new ArrayList<>(List.of(this.workerPool));
        this.shardPools.forEach(pools -> databases.add(pools[0]));
        for (HikariDataSource database : databases) {
            new JdbcTemplate(database).execute("DROP SCHEMA IF EXISTS " + config.schema() + " CASCADE");
            QueueSchema.migrate(database, config.schema());
        }
    }

    /**
     * A queue of the given tasks on the given pools (index 0: workers, 1: producers), on the run's
     * shards if it has any.
     */
    private PgQueue.Builder queue(QueueConfig config, List<WorkerTask> tasks, HikariDataSource main, int pool) {
        PgQueue.Builder builder = PgQueue.builder(main).config(config).mapper(MAPPER)
            .tasks(TaskRegistry.of(tasks.stream().map(WorkerTask::definition).toList()));
        if (intArg("shards", 0) > 0) {
            for (int i = 0; i < this.shardPools.size(); i++) {
                builder.shard("shard-" + (i + 1), this.shardPools.get(i)[pool]);
            }
        }
        return builder;
    }

    /** A node with workers for the tasks; {@link PgQueue#startWorkers()} starts it. */
    private PgQueue workers(QueueConfig config, List<WorkerTask> tasks) {
        WorkerSettings settings = WorkerSettings.builder("bench-" + ProcessHandle.current().pid())
            .pollInterval(Duration.parse(this.args.getOrDefault("poll", "PT0.5S")))
            .vacuumInterval(Duration.parse(this.args.getOrDefault("vacuum", "PT10S")))
            .pools(Map.of("default", new PoolSettings(intArg("prefetch", 1000), Duration.ofMillis(200))))
            .build();
        this.meters = new SimpleMeterRegistry();
        this.emptyClaims.set(0);
        this.written.set(0);
        QueueEvents emptyClaimCounter = new QueueEvents() {
            @Override
            public void claimRan(String pool, int batchSize, Duration latency) {
                if (batchSize == 0) {
                    QueueBenchmark.this.emptyClaims.incrementAndGet();
                }
            }

            @Override
            public void recorded(String task, JobState state) {
                QueueBenchmark.this.written.incrementAndGet();
            }
        };
        QueueTelemetry telemetry = new QueueTelemetry(QueueEvents.of(List.of(new MicrometerQueueEvents(this.meters),
                emptyClaimCounter)), ObservationRegistry.NOOP);
        return queue(config, tasks, this.workerPool, 0).workers(settings, tasks).telemetry(telemetry)
            .executors(WorkerExecutors.platformThreads()).build();
    }

    private QueueClient client(QueueConfig config, List<WorkerTask> tasks, HikariDataSource pool) {
        return queue(config, tasks, pool, 1).build().client();
    }

    /** A task of the benchmark, with the limits across nodes {@code global_concurrency} and {@code task_rate} give. */
    private <P> WorkerTask task(String name, TaskHandler<P> handler, Class<P> payloadType, int concurrency) {
        String rate = this.args.get("task_rate");
        TaskDefinition definition = TaskDefinition.builder(name)
            .globalConcurrency(intArg("global_concurrency", 0))
            .rateLimit(rate == null ? null : RateLimit.parse(rate, null))
            .build();
        return WorkerTask.of(definition, handler, payloadType, concurrency, Duration.ofMinutes(1), "default");
    }

    /** @return whether every job gets its own claim-order key ({@code keys=distinct}) */
    private boolean distinctKeys() {
        String keys = this.args.getOrDefault("keys", "batch");
        if (!keys.equals("batch") && !keys.equals("distinct")) {
            throw new IllegalArgumentException("Unknown keys '" + keys + "'; use batch or distinct");
        }
        return keys.equals("distinct");
    }

    private int intArg(String name, int fallback) {
        String value = this.args.get(name);
        return value == null ? fallback : Integer.parseInt(value.replace("_", ""));
    }

    private long activeJobs(QueueConfig config) {
        long active = new JdbcTemplate(this.workerPool).queryForObject("SELECT count(*) FROM " + config.schema() + ".job",
                Long.class);
        for (HikariDataSource[] pools : this.shardPools) {
            active += new JdbcTemplate(pools[0]).queryForObject("SELECT count(*) FROM " + config.schema() + ".job",
                    Long.class);
        }
        return active;
    }

    private static void awaitCount(AtomicInteger counter, int expected, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (counter.get() < expected) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("Only " + counter.get() + " of " + expected + " jobs ran within " + timeout);
            }
            Thread.sleep(2);
        }
    }

    private static double seconds(long startNanos) {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    private static double ms(long[] sorted, double quantile) {
        return sorted[(int) Math.min(sorted.length - 1, Math.floor(quantile * sorted.length))] / 1e6;
    }

    private void close() throws Exception {
        this.shardPools.forEach(pools -> {
            pools[0].close();
            pools[1].close();
        });
        this.producerPool.close();
        this.workerPool.close();
        this.database.close();
    }
}
