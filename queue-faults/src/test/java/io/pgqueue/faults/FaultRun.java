package io.pgqueue.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.pgqueue.EnqueueOptions;
import io.pgqueue.EnqueueResult;
import io.pgqueue.EnqueuedWorkflow;
import io.pgqueue.JobRequest;
import io.pgqueue.PgQueue;
import io.pgqueue.QueueClient;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.Workflow;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * One scenario's world: a fresh database on the {@link FaultServer} (and, for a sharded run, one
 * more per shard), worker nodes on it, a client that enqueues and remembers when each enqueue
 * returned, and the recorder's view of what ran.
 */
final class FaultRun implements AutoCloseable {

    /** Whether this is the documented fault run ({@code faults.scale=full}) rather than the short one of every build. */
    static final boolean FULL = "full".equals(System.getProperty("faults.scale"));

    /** Slack on the time bounds in the short run, which shares two cores with the rest of a build. */
    static final long SLACK = FULL ? 0 : 2000;

    /** Lease settings every node of every scenario runs with. */
    static final Duration LEASE = Duration.ofSeconds(2);

    static final Duration HEARTBEAT = Duration.ofMillis(500);

    static final Duration RESCUE_INTERVAL = Duration.ofMillis(500);

    static final Duration TIMEOUT = Duration.ofSeconds(1);

    /** A node's jobs are back in the queue within a lease and a rescue interval; one second to start them. */
    static final long RESCUE_BOUND = LEASE.toMillis() + RESCUE_INTERVAL.toMillis() + 1000;

    /** The two worker nodes most scenarios run. */
    static final List<String> TWO_NODES = List.of("node-a", "node-b");

    final FaultServer server;

    final String database;

    final HikariDataSource dataSource;

    final JdbcTemplate jdbc;

    /**
     * Every database of the run by shard name, {@code main} (the nodes' DataSource) first; for an
     * unsharded run only {@code main}.
     */
    final Map<String, JdbcTemplate> shards = new LinkedHashMap<>();

    private final List<HikariDataSource> shardDataSources = new ArrayList<>();

    final List<WorkerNode> nodes = new ArrayList<>();

    /** Job id → when its enqueue call returned (epoch millis). */
    final Map<Long, Long> enqueued = new ConcurrentHashMap<>();

    /** The producers {@link #produce} started. */
    private final List<Producer> producers = new CopyOnWriteArrayList<>();

    /** The group of each job enqueued by {@link #enqueueGrouped}. */
    final Map<Long, String> groups = new ConcurrentHashMap<>();

    final AtomicLong failedEnqueues = new AtomicLong();

    /** The record task's timeout on this run's nodes. */
    Duration timeout = TIMEOUT;

    /** Further JVM options of the nodes this run starts from now on. */
    List<String> jvmOptions = List.of();

    /** How the nodes this run starts from now on are launched; {@code null} for this release's node. */
    NodeImage image;

    /** Where the nodes record their executions, a file each. */
    private final Path records;

    private QueueClient client;

    FaultRun(FaultServer server, String database) throws Exception {
        this(server, database, List.of());
    }

    /**
     * A sharded run: besides the main database, one named {@code <database>_<shard>} per shard,
     * which every node is configured with ({@code pgqueue.shards.<shard>.url}).
     */
    FaultRun(FaultServer server, String database, List<String> shards) throws Exception {
        this.server = server;
        this.database = database;
        try (Connection connection = server.connect("postgres"); Statement statement = connection.createStatement()) {
            statement.execute("CREATE DATABASE " + database);
            for (String shard : shards) {
                statement.execute("CREATE DATABASE " + shardDatabase(shard));
            }
        }
        this.dataSource = pool(database, 10);
        this.jdbc = new JdbcTemplate(this.dataSource);
        this.jdbc.execute(HeapSampler.TABLE_DDL);
        this.shards.put("main", this.jdbc);
        for (String shard : shards) {
            HikariDataSource pool = pool(shardDatabase(shard), 3);
            this.shardDataSources.add(pool);
            this.shards.put(shard, new JdbcTemplate(pool));
        }
        this.records = Files.createTempDirectory("pgqueue-faults-" + database);
    }

    private HikariDataSource pool(String name, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url(name, "faults-harness"));
        config.setMaximumPoolSize(size);
        config.setConnectionTimeout(30_000);
        config.setPoolName(name);
        return new HikariDataSource(config);
    }

    /** @return the name of a shard's database */
    String shardDatabase(String shard) {
        return this.database + "_" + shard;
    }

    /** Nodes that reach the server through a proxy: node id → the proxy's port. */
    private final Map<String, Integer> routes = new HashMap<>();

    /** The database's URL, with the connections' application name (how a scenario finds a node's backends). */
    String url(String applicationName) {
        return url(this.database, applicationName);
    }

    /** A database's URL, with the connections' application name, through the node's proxy if it has one. */
    private String url(String database, String applicationName) {
        String url = this.server.jdbcUrl(database);
        Integer route = this.routes.get(applicationName);
        if (route != null) {
            url = url.replace(":" + this.server.port() + "/", ":" + route + "/");
        }
        return url + "&ApplicationName=" + applicationName;
    }

    /** Makes a node, started afterwards, reach the server through a proxy. */
    void route(String node, StallingProxy proxy) {
        this.routes.put(node, proxy.port());
    }

    /**
     * Starts nodes at once and waits until all run.
     * @param settings {@code --name=value} arguments, on top of (or instead of) the lease settings
     * every node has
     */
    void startNodes(List<String> ids, String... settings) throws Exception {
        launch(ids, settings).forEach(WorkerNode::awaitStarted);
    }

    /**
     * Starts nodes at once without waiting for them ({@link WorkerNode#awaitStarted()} does), so
     * that nodes of different settings start side by side.
     * @param settings as for {@link #startNodes(List, String...)}
     * @return the nodes
     */
    List<WorkerNode> launch(List<String> ids, String... settings) throws Exception {
        Map<String, String> arguments = new LinkedHashMap<>();
        arguments.put("pgqueue.lease.duration", LEASE.toMillis() + "ms");
        arguments.put("pgqueue.lease.heartbeat-interval", HEARTBEAT.toMillis() + "ms");
        arguments.put("pgqueue.rescue.interval", RESCUE_INTERVAL.toMillis() + "ms");
        arguments.put("pgqueue.tasks.record.timeout", TIMEOUT.toMillis() + "ms");
        arguments.put("pgqueue.shutdown.timeout", "5s");
        arguments.put("faults.record-dir", this.records.toString());
        for (String setting : settings) {
            String[] pair = setting.substring(2).split("=", 2);
            arguments.put(pair[0], pair[1]);
        }
        this.timeout = DurationStyle.detectAndParse(arguments.get("pgqueue.tasks.record.timeout"));
        NodeImage image = this.image != null ? this.image : NodeImage.of(this.server);
        List<WorkerNode> started = new ArrayList<>();
        for (String id : ids) {
            List<String> nodeArguments = new ArrayList<>(arguments.entrySet().stream()
                .map(argument -> "--" + argument.getKey() + "=" + argument.getValue()).toList());
            this.shards.keySet().stream().filter(shard -> !shard.equals("main")).forEach(shard -> nodeArguments
                .add("--pgqueue.shards." + shard + ".url=" + url(shardDatabase(shard), id)));
            WorkerNode node = WorkerNode.start(id, image, url(id), this.jvmOptions, nodeArguments);
            started.add(node);
            this.nodes.add(node);
        }
        return started;
    }

    /** @return the node of that id started last (a node killed and started again keeps its id) */
    WorkerNode node(String id) {
        return this.nodes.stream().filter(node -> node.id.equals(id)).reduce((first, second) -> second).orElseThrow();
    }

    /** @return the directory the nodes record in: executions, and a producer's or mover's ledger */
    Path records() {
        return this.records;
    }

    synchronized QueueClient client() {
        if (this.client == null) {
            this.client = PgQueue.builder(this.dataSource).tasks(TaskRegistry.of(TaskDefinition.builder("record").build()))
                .build().client();
        }
        return this.client;
    }

    /** Enqueues jobs in batches of 1,000, remembering when each batch returned. */
    void enqueueBacklog(int jobs, RecordTask.Work work) {
        enqueueBacklog(jobs, work, 1000);
    }

    /**
     * Enqueues jobs in batches, remembering when each batch returned. The jobs of one batch share
     * one transaction, so one schedule time: the queue sees them as equally old.
     */
    void enqueueBacklog(int jobs, RecordTask.Work work, int batchSize) {
        for (int from = 0; from < jobs; from += batchSize) {
            List<JobRequest> batch = new ArrayList<>();
            for (int i = from; i < Math.min(jobs, from + batchSize); i++) {
                batch.add(JobRequest.of("record", work));
            }
            List<EnqueueResult> results = client().enqueueAll(batch);
            long now = System.currentTimeMillis();
            results.forEach(result -> this.enqueued.put(result.jobId(), now));
        }
    }

    /**
     * Enqueues jobs spread round-robin over groups ({@code g-0}, {@code g-1}, ...), in batches of
     * 1,000, remembering each job's group.
     */
    void enqueueGrouped(int jobs, int groups, RecordTask.Work work) {
        for (int from = 0; from < jobs; from += 1000) {
            List<JobRequest> batch = new ArrayList<>();
            for (int i = from; i < Math.min(jobs, from + 1000); i++) {
                batch.add(JobRequest.of("record", work, EnqueueOptions.defaults().withGroup("g-" + (i % groups))));
            }
            List<EnqueueResult> results = client().enqueueAll(batch);
            long now = System.currentTimeMillis();
            for (int i = 0; i < results.size(); i++) {
                this.enqueued.put(results.get(i).jobId(), now);
                this.groups.put(results.get(i).jobId(), "g-" + ((from + i) % groups));
            }
        }
    }

    /**
     * Enqueues workflows of {@code width} parts and one fan-in after all of them, one transaction
     * each, remembering when each returned.
     * @return per workflow, its fan-in's job id and then its parts' job ids
     */
    List<List<Long>> enqueueWorkflows(int workflows, int width, RecordTask.Work work) {
        List<List<Long>> enqueuedWorkflows = new ArrayList<>();
        for (int w = 0; w < workflows; w++) {
            Workflow workflow = client().workflow("fault-" + w);
            String[] parts = new String[width];
            for (int i = 0; i < width; i++) {
                parts[i] = "part-" + i;
                workflow.add(parts[i], "record", work);
            }
            EnqueuedWorkflow enqueuedWorkflow = workflow.add("fan-in", "record", work, Workflow.after(parts)).enqueue();
            long now = System.currentTimeMillis();
            enqueuedWorkflow.jobs().values().forEach(id -> this.enqueued.put(id, now));
            List<Long> ids = new ArrayList<>();
            ids.add(enqueuedWorkflow.jobId("fan-in"));
            for (String part : parts) {
                ids.add(enqueuedWorkflow.jobId(part));
            }
            enqueuedWorkflows.add(ids);
        }
        return enqueuedWorkflows;
    }

    /** Enqueues one job; a failed call is counted and tried again until it succeeds. */
    long enqueueOne(RecordTask.Work work) {
        while (true) {
            try {
                long id = client().enqueue("record", work).jobId();
                this.enqueued.put(id, System.currentTimeMillis());
                return id;
            }
            catch (RuntimeException ex) {
                this.failedEnqueues.incrementAndGet();
                sleep(100);
            }
        }
    }

    /**
     * Starts producer threads enqueueing single jobs at a steady total rate until the returned
     * flag is cleared.
     */
    AtomicBoolean produce(int threads, int jobsPerSecond, RecordTask.Work work) {
        AtomicBoolean running = new AtomicBoolean(true);
        long periodNanos = 1_000_000_000L * threads / jobsPerSecond;
        for (int t = 0; t < threads; t++) {
            Thread producer = new Thread(() -> {
                long next = System.nanoTime();
                while (running.get()) {
                    enqueueOne(work);
                    next += periodNanos;
                    long wait = next - System.nanoTime();
                    if (wait > 0) {
                        sleep(wait / 1_000_000);
                    }
                    else {
                        next = System.nanoTime();
                    }
                }
            }, "fault-producer-" + t);
            producer.setDaemon(true);
            producer.start();
            this.producers.add(new Producer(running, producer));
        }
        return running;
    }

    /** A producer thread and the flag that stops it. */
    private record Producer(AtomicBoolean running, Thread thread) {
    }

    /**
     * Waits until every acknowledged job (its enqueue call returned its id) has finished, or the
     * timeout passes. Counting finished rows would not do: an enqueue call that failed as the
     * server went down may have committed all the same, and its job, which no one waits for,
     * would stand in for one still running.
     */
    void awaitFinished(Duration timeout) {
        long deadline = System.currentTimeMillis() + timeout.toMillis();
        // A producer told to stop may still be in an enqueue call: the job it acknowledges when the
        // call returns is one to wait for too, so the stopped producers end first.
        for (Producer producer : this.producers) {
            if (!producer.running().get()) {
                try {
                    producer.thread().join(Math.max(1, deadline - System.currentTimeMillis()));
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
        while (unfinished() > 0 && System.currentTimeMillis() < deadline) {
            sleep(250);
        }
    }

    /** @return the acknowledged jobs not finished yet, or {@link Long#MAX_VALUE} while the database cannot tell */
    private long unfinished() {
        try {
            Map<Long, String> finished = finishedStates();
            return this.enqueued.keySet().stream().filter(id -> !finished.containsKey(id)).count();
        }
        catch (RuntimeException ex) {
            return Long.MAX_VALUE;
        }
    }

    /** @return the ids of jobs that a node's pools hold now (lease owner {@code <node>/<pool>}) */
    Set<Long> heldBy(String node) {
        return Set.copyOf(this.jdbc.queryForList("SELECT id FROM pgqueue.job WHERE lease_owner LIKE ? || '/%'",
                Long.class, node));
    }

    /** @return every recorded execution, oldest first */
    List<Execution> executions() {
        List<Execution> executions = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(this.records, "*.executions")) {
            for (Path file : files) {
                String node = file.getFileName().toString().replace(".executions", "");
                Map<String, String[]> started = new HashMap<>();
                Map<String, Long> ended = new HashMap<>();
                for (String line : Files.readAllLines(file)) {
                    String[] words = line.split(" ");
                    if (words[0].equals("S") && words.length == 5) {
                        started.put(words[1], words);
                    }
                    else if (words[0].equals("E") && words.length == 3) {
                        ended.put(words[1], Long.parseLong(words[2]));
                    }
                }
                started.forEach((execution, words) -> executions.add(new Execution(Long.parseLong(words[2]),
                        Integer.parseInt(words[3]), node, Long.parseLong(words[4]), ended.get(execution))));
            }
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        executions.sort(Comparator.comparingLong(Execution::started));
        return executions;
    }

    /** @return final state of each enqueued job that finished, on any shard */
    Map<Long, String> finishedStates() {
        Map<Long, String> states = new HashMap<>();
        for (JdbcTemplate shard : this.shards.values()) {
            shard.query("SELECT id, state FROM pgqueue.job_finished WHERE task = 'record'",
                    rs -> {
                        states.put(rs.getLong(1), rs.getString(2));
                    });
        }
        return states;
    }

    /**
     * @param ids finished jobs
     * @return each as "id state attempt n: error", for the report of jobs that did not complete
     */
    List<String> describeFinished(List<Long> ids) {
        List<String> rows = new ArrayList<>();
        for (JdbcTemplate shard : this.shards.values()) {
            shard.query("SELECT id, state, attempt, left(coalesce(last_error, ''), 300) FROM pgqueue.job_finished "
                    + "WHERE id = ANY(?) ORDER BY id", rs -> {
                        rows.add(rs.getLong(1) + " " + rs.getString(2) + " attempt " + rs.getInt(3) + ": " + rs.getString(4));
                    }, (Object) ids.toArray(Long[]::new));
        }
        return rows;
    }

    /**
     * When the last of the given jobs that ran on a node after a moment started there, and how many
     * younger jobs (enqueued in a later transaction) had not started yet then.
     */
    Rerun rerun(Set<Long> jobs, String node, long after) {
        List<Execution> executions = executions();
        long lastStart = jobs.stream().mapToLong(id -> executions.stream()
            .filter(e -> e.jobId() == id && e.node().equals(node) && e.started() >= after)
            .mapToLong(Execution::started).min().orElse(after)).max().orElse(after);
        Map<Long, Long> firstStart = executions.stream().collect(Collectors.toMap(Execution::jobId,
                Execution::started, Math::min));
        long enqueuedLast = jobs.stream().mapToLong(this.enqueued::get).max().orElse(0);
        long waiting = this.enqueued.entrySet().stream().filter(e -> e.getValue() > enqueuedLast)
            .filter(e -> firstStart.getOrDefault(e.getKey(), Long.MAX_VALUE) > lastStart).count();
        long count = jobs.stream().filter(id -> executions.stream()
            .anyMatch(e -> e.jobId() == id && e.node().equals(node) && e.started() >= after)).count();
        return new Rerun(count, lastStart, waiting);
    }

    /** @see #rerun(Set, String, long) */
    record Rerun(long count, long lastStart, long waiting) {
    }

    static long now() {
        return System.currentTimeMillis();
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    @Override
    public void close() throws Exception {
        for (WorkerNode node : this.nodes) {
            node.close();
        }
        if (System.getProperty("faults.keep-logs") == null) {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(this.records)) {
                for (Path file : files) {
                    Files.delete(file);
                }
            }
            Files.delete(this.records);
        }
        else {
            System.out.println("The nodes' records are kept in " + this.records);
        }
        if (this.client != null) {
            this.client.close();
        }
        this.dataSource.close();
        this.shardDataSources.forEach(HikariDataSource::close);
        try (Connection connection = this.server.connect("postgres"); Statement statement = connection.createStatement()) {
            statement.execute("DROP DATABASE IF EXISTS " + this.database + " WITH (FORCE)");
            for (String shard : this.shards.keySet()) {
                if (!shard.equals("main")) {
                    statement.execute("DROP DATABASE IF EXISTS " + shardDatabase(shard) + " WITH (FORCE)");
                }
            }
        }
    }

    /**
     * One run of a handler as the recorder saw it, in epoch millis.
     * @param ended {@code null} when the handler has not ended (still running, or its node was killed)
     */
    record Execution(long jobId, int attempt, String node, long started, Long ended) {
    }
}
