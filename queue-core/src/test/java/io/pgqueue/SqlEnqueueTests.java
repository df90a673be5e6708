package io.pgqueue;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import io.pgqueue.internal.shard.PartitionHash;
import io.pgqueue.testing.TestDatabase;
import io.pgqueue.testing.TestShards;
import io.pgqueue.testing.TestWorkers;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.util.PSQLException;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * Jobs enqueued from SQL through enqueue_job: with the semantics of QueueClient.enqueue (the task's
 * defaults, dedup policies, partitions, tags and groups), from plain JDBC, from a trigger in the
 * caller's transaction and from Python, each run by a Java handler exactly once; bad input raises
 * a clear error and writes nothing.
 */
class SqlEnqueueTests {

    private static final String ENQUEUE = "SELECT job_id, outcome FROM pgqueue.enqueue_job(";

    private static final PayloadEncryption ENCRYPTION = PayloadEncryption.of(null,
            Map.of("k", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="));

    @RegisterExtension
    final TestShards databases = TestShards.perTest("sqlenqueue", 2);

    private final List<PgQueue> queues = new ArrayList<>();

    /** What each handler got: task, then payload, by job id. */
    private final Map<Long, String> handled = new ConcurrentHashMap<>();

    private final List<Long> runs = new CopyOnWriteArrayList<>();

    /** The tasks the nodes declare, so that every node declares them alike. */
    private final Map<String, TaskDefinition> definitions = new java.util.LinkedHashMap<>();

    @AfterEach
    void stop() {
        this.queues.forEach(PgQueue::stop);
    }

    @Test
    void aJobEnqueuedWithPlainJdbcGetsTheTasksDefaultsAndRunsInAJavaHandlerOnce() {
        PgQueue queue = node(TaskDefinition.builder("mail").priority(5).maxAttempts(7).tags(List.of("mail")).build(),
                TaskDefinition.builder("report").build());
        JdbcTemplate jdbc = jdbc();

        Map<String, Object> created = jdbc.queryForMap(ENQUEUE + "task => 'mail', payload => '{\"to\": \"ann\"}', "
                + "tags => ARRAY['vip'], headers => '{\"tenant\": \"t1\"}')");
        Map<String, Object> overridden = jdbc.queryForMap(ENQUEUE + "'report', '{\"n\": 1}', priority => -3, "
                + "max_attempts => 2, delay => interval '1 hour', partition_key => 'customer-9')");

        long mail = (Long) created.get("job_id");
        assertThat(created.get("outcome")).isEqualTo("CREATED");
        JobSnapshot job = queue.client().find(mail).orElseThrow();
        assertThat(job.priority()).isEqualTo(5);
        assertThat(job.maxAttempts()).isEqualTo(7);
        assertThat(job.headers()).contains("\"pgqueue.tags\": \"mail,vip\"", "\"tenant\": \"t1\"");
        JobSnapshot report = queue.client().find((Long) overridden.get("job_id")).orElseThrow();
        assertThat(report.priority()).isEqualTo(-3);
        assertThat(report.maxAttempts()).isEqualTo(2);
        assertThat(report.state()).isEqualTo(JobState.READY);
        assertThat(report.scheduleTime()).isAfter(java.time.Instant.now().plus(Duration.ofMinutes(59)));
        assertThat(report.partition()).isEqualTo(PartitionHash.partitionOf("customer-9", 1024));
        assertThat(queue.admin().jobs(JobQuery.of(JobQuery.Group.READY).withTags(List.of("vip"))).jobs())
            .extracting(JobPage.Job::id).containsExactly(mail);

        worker("mail");
        await().atMost(Duration.ofSeconds(20)).until(() -> this.runs.contains(mail));
        assertThat(this.handled.get(mail)).isEqualTo("mail {to=ann}");
        assertThat(queue.client().find(mail).orElseThrow().state()).isEqualTo(JobState.COMPLETED);
        assertThat(this.runs).containsOnlyOnce(mail);
    }

    @Test
    void aTriggerEnqueuesInTheCallersTransactionSoARollbackLeavesNoJob() {
        node(TaskDefinition.builder("ship").build());
        JdbcTemplate jdbc = jdbc();
        jdbc.execute("CREATE TABLE orders (id bigint PRIMARY KEY, customer text NOT NULL)");
        jdbc.execute("""
                CREATE FUNCTION ship_order() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    PERFORM pgqueue.enqueue_job('ship', jsonb_build_object('order', NEW.id, 'customer', NEW.customer),
                                                dedup_key => 'order-' || NEW.id);
                    RETURN NEW;
                END $$""");
        jdbc.execute("CREATE TRIGGER orders_ship AFTER INSERT ON orders FOR EACH ROW EXECUTE FUNCTION ship_order()");
        TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(
                this.databases.get(0).dataSource()));

        transactions.executeWithoutResult(status -> {
            jdbc.update("INSERT INTO orders VALUES (1, 'ann')");
            status.setRollbackOnly();
        });
        assertThat(jdbc.queryForObject("SELECT count(*) FROM pgqueue.job", Long.class)).as("rolled back").isZero();
        transactions.executeWithoutResult(status -> jdbc.update("INSERT INTO orders VALUES (2, 'bob')"));

        worker("ship");
        await().atMost(Duration.ofSeconds(20)).until(() -> this.runs.size() == 1);
        assertThat(this.handled.values()).containsExactly("ship {customer=bob, order=2}");
        assertThat(jdbc.queryForObject("SELECT dedup_key FROM pgqueue.job_finished", String.class)).isEqualTo("order-2");
    }

    @Test
    void dedupPoliciesResolveAKeyAnActiveOrFinishedJobHolds() {
        PgQueue queue = node(TaskDefinition.builder("sync").build(),
                TaskDefinition.builder("once").dedupPolicy(DedupPolicy.unique(Duration.ofHours(1), JobState.COMPLETED)).build());
        JdbcTemplate jdbc = jdbc();

        Map<String, Object> first = jdbc.queryForMap(ENQUEUE + "'sync', '{\"v\": 1}', dedup_key => 'u1')");
        Map<String, Object> kept = jdbc.queryForMap(ENQUEUE + "'sync', '{\"v\": 2}', dedup_key => 'u1')");
        Map<String, Object> replaced = jdbc.queryForMap(ENQUEUE + "'sync', '{\"v\": 3}', dedup_key => 'u1', "
                + "dedup_policy => 'REPLACE_IF_READY', priority => 9)");
        assertThat(kept).isEqualTo(Map.of("job_id", first.get("job_id"), "outcome", "KEPT_EXISTING"));
        assertThat(replaced).isEqualTo(Map.of("job_id", first.get("job_id"), "outcome", "REPLACED"));
        JobSnapshot job = queue.client().find((Long) first.get("job_id")).orElseThrow();
        assertThat(job.payload()).isEqualTo("{\"v\": 3}");
        assertThat(job.priority()).isEqualTo(9);
        assertThat(job.partition()).as("the partition of its key, as a Java enqueue's")
            .isEqualTo(PartitionHash.partitionOf("u1", 1024));
        // A Java enqueue of the same key finds the job SQL wrote.
        assertThat(queue.client().enqueue("sync", Map.of("v", 4), EnqueueOptions.defaults().withDedupKey("u1")))
            .isEqualTo(new EnqueueResult((Long) first.get("job_id"), EnqueueOutcome.KEPT_EXISTING));

        // RERUN on a running job asks for one more run with the newest payload.
        jdbc.update("UPDATE pgqueue.job SET state = 'RUNNING', lease_owner = 'n', lease_epoch = 1, started_at = now(), "
                + "expected_status_change_time = now() + interval '1 minute', attempt = 1 WHERE id = ?",
                first.get("job_id"));
        Map<String, Object> rerun = jdbc.queryForMap(ENQUEUE + "'sync', '{\"v\": 5}', dedup_key => 'u1', "
                + "dedup_policy => 'RERUN')");
        assertThat(rerun).isEqualTo(Map.of("job_id", first.get("job_id"), "outcome", "RERUN_SCHEDULED"));
        assertThat(jdbc.queryForObject("SELECT rerun_requested FROM pgqueue.job WHERE id = ?", Boolean.class,
                first.get("job_id"))).isTrue();

        // UNIQUE: a job of the key that completed within the period holds it.
        Map<String, Object> once = jdbc.queryForMap(ENQUEUE + "'once', '{}', dedup_key => 'o1')");
        worker("once");
        await().atMost(Duration.ofSeconds(20)).until(() -> this.runs.contains((Long) once.get("job_id")));
        await().atMost(Duration.ofSeconds(10)).until(() -> queue.client().find((Long) once.get("job_id")).orElseThrow()
            .state() == JobState.COMPLETED);
        assertThat(jdbc.queryForMap(ENQUEUE + "'once', '{}', dedup_key => 'o1')"))
            .isEqualTo(Map.of("job_id", once.get("job_id"), "outcome", "KEPT_EXISTING"));
        assertThat(jdbc.queryForMap(ENQUEUE + "'once', '{}', dedup_key => 'o1', dedup_policy => 'KEEP_EXISTING')")
            .get("outcome")).as("another policy, another answer").isEqualTo("CREATED");
    }

    @Test
    void badInputRaisesAClearErrorAndWritesNothing() {
        node(TaskDefinition.builder("mail").build(), TaskDefinition.builder("secret").encrypted(true).build(),
                TaskDefinition.builder("merged").dedupPolicy(DedupPolicy.mergeIfReady((a, b) -> b)).build(),
                TaskDefinition.builder("keyed").dedupKey(payload -> "k").build());
        JdbcTemplate jdbc = jdbc();
        Map<String, String> refused = new java.util.LinkedHashMap<>();
        refused.put("'nope', '{}'", "unknown task 'nope'");
        refused.put("'mail', NULL", "must not be null");
        refused.put("'mail', 'null'", "must not be null");
        refused.put("'mail', '{}', priority => 5000", "between -1000 and 1000, was 5000");
        refused.put("'mail', '{}', run_at => now(), delay => interval '1 minute'", "both run_at and delay");
        refused.put("'mail', '{}', delay => interval '-1 minute'", "must not be negative");
        refused.put("'mail', '{}', max_attempts => 0", "at least 1, was 0");
        refused.put("'mail', '{}', dedup_key => '  '", "non-blank");
        refused.put("'mail', '{}', dedup_key => 'k', dedup_policy => 'SOMETIMES'", "unknown dedup_policy 'SOMETIMES'");
        refused.put("'mail', '{}', dedup_key => 'k', dedup_policy => 'UNIQUE:x:COMPLETED'", "UNIQUE:<period ms>:<states>");
        refused.put("'mail', '{}', headers => '{\"a\": 1}'", "JSON object of strings");
        refused.put("'mail', '{}', headers => '{\"pgqueue.group\": \"g\"}'", "queue's own");
        refused.put("'mail', '{}', tags => ARRAY['a,b']", "without commas");
        refused.put("'mail', '{}', group_key => 'g'", "has no groups");
        refused.put("'secret', '{}'", "encrypts its payloads");
        refused.put("'merged', '{}', dedup_key => 'k'", "merges duplicates with a Java function");
        refused.put("'keyed', '{}'", "derives its dedup key from the payload in Java; give dedup_key");
        refused.forEach((arguments, message) -> assertThatThrownBy(() -> jdbc.queryForMap(ENQUEUE + arguments + ")"))
            .as(arguments)
            .isInstanceOf(DataAccessException.class)
            .hasMessageContaining(message)
            .rootCause().isInstanceOfSatisfying(PSQLException.class,
                    ex -> assertThat(ex.getSQLState()).isEqualTo("22023")));
        assertThat(jdbc.queryForObject("SELECT count(*) FROM pgqueue.job", Long.class)).isZero();
        assertThat(jdbc.queryForMap(ENQUEUE + "'keyed', '{}', dedup_key => 'given')").get("outcome"))
            .isEqualTo("CREATED");
    }

    @Test
    void onTheMainDatabaseOfAShardedInstallationAJobGoesThroughTheOutboxToItsShardAndOtherShardsRefuse() {
        TaskDefinition mail = TaskDefinition.builder("mail").build();
        List<WorkerTask> workers = List.of(WorkerTask.of(mail, this::record, Map.class, 2, Duration.ofSeconds(30), "default"));
        PgQueue queue = PgQueue.builder(this.databases.get(0).dataSource()).tasks(TaskRegistry.of(List.of(mail)))
            .shard("b", this.databases.get(1).dataSource())
            .workers(TestWorkers.settings("sharded").build(), workers).migrateSchema(true).build();
        this.queues.add(queue);
        queue.start();
        // A key whose partition lives on shard b.
        String key = java.util.stream.IntStream.range(0, 1000).mapToObj(i -> "k" + i).filter(candidate -> "b".equals(
                Engines.of(queue).shards().map().shardOf(PartitionHash.partitionOf(candidate, 1024)))).findFirst().orElseThrow();

        Map<String, Object> relayed = jdbc().queryForMap(ENQUEUE + "'mail', '{\"to\": \"ann\"}', dedup_key => ?)", key);

        assertThat(relayed.get("outcome")).isEqualTo("RELAYED");
        long id = (Long) relayed.get("job_id");
        await().atMost(Duration.ofSeconds(20)).until(() -> this.runs.contains(id));
        assertThat(new JdbcTemplate(this.databases.get(1).dataSource()).queryForObject(
                "SELECT count(*) FROM pgqueue.job_finished WHERE id = ?", Long.class, id)).as("on shard b").isOne();
        assertThat(this.runs).containsOnlyOnce(id);
        assertThatThrownBy(() -> new JdbcTemplate(this.databases.get(1).dataSource()).queryForMap(ENQUEUE + "'mail', '{}')"))
            .hasMessageContaining("this database is the shard 'b'").hasMessageContaining("main database");
    }

    @Test
    void aJobEnqueuedFromPythonRunsInAJavaHandlerOnce() throws Exception {
        assumeThat(pythonWithPsycopg()).as("/usr/bin/python3 with psycopg2 (Debian's python3-psycopg2)").isTrue();
        node(TaskDefinition.builder("mail").build());
        TestDatabase database = this.databases.get(0);
        Path script = Files.createTempFile("enqueue", ".py");
        Files.writeString(script, """
                import json, sys
                import psycopg2
                connection = psycopg2.connect(sys.argv[1])
                with connection:
                    with connection.cursor() as cursor:
                        cursor.execute("SELECT job_id, outcome FROM pgqueue.enqueue_job(task => %s, payload => %s::jsonb)",
                                       ("mail", json.dumps({"to": "from python", "n": 3})))
                        print(*cursor.fetchone())
                connection.close()
                """);
        Process python = new ProcessBuilder("/usr/bin/python3", script.toString(), libpq(database))
            .redirectErrorStream(true).start();
        assertThat(python.waitFor(30, TimeUnit.SECONDS)).isTrue();
        String output = new String(python.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(python.exitValue()).as(output).isZero();
        assertThat(output).endsWith("CREATED");
        long id = Long.parseLong(output.split(" ")[0]);

        worker("mail");
        await().atMost(Duration.ofSeconds(20)).until(() -> this.runs.contains(id));
        assertThat(this.handled.get(id)).isEqualTo("mail {n=3, to=from python}");
        assertThat(this.runs).containsOnlyOnce(id);
        Files.delete(script);
    }

    private static boolean pythonWithPsycopg() throws InterruptedException {
        try {
            Process probe = new ProcessBuilder("/usr/bin/python3", "-c", "import psycopg2").start();
            return probe.waitFor(20, TimeUnit.SECONDS) && probe.exitValue() == 0;
        }
        catch (IOException ex) {
            return false;
        }
    }

    /** The libpq connection string of a test database. */
    private static String libpq(TestDatabase database) throws SQLException {
        URI uri = URI.create(database.jdbcUrl().substring("jdbc:".length()));
        String user;
        try (Connection connection = database.dataSource().getConnection()) {
            user = connection.getMetaData().getUserName();
        }
        return "host=" + uri.getHost() + " port=" + uri.getPort() + " dbname=" + uri.getPath().substring(1) + " user=" + user
                + (database.password() == null ? "" : " password=" + database.password());
    }

    private Void record(Map<?, ?> payload, TaskContext context) {
        this.handled.put(context.jobId(), context.task() + " " + new java.util.TreeMap<>(payload));
        this.runs.add(context.jobId());
        return null;
    }

    /** A node that only enqueues: it declares the tasks, so that enqueue_job knows them. */
    private PgQueue node(TaskDefinition... tasks) {
        for (TaskDefinition task : tasks) {
            this.definitions.put(task.name(), task);
        }
        PgQueue queue = PgQueue.builder(this.databases.get(0).dataSource()).tasks(TaskRegistry.of(List.of(tasks)))
            .encryption(ENCRYPTION).migrateSchema(true).build();
        this.queues.add(queue);
        queue.open();
        return queue;
    }

    private PgQueue worker(String... tasks) {
        List<WorkerTask> workers = new ArrayList<>();
        for (String task : tasks) {
            TaskHandler<Map<?, ?>> handler = this::record;
            @SuppressWarnings("unchecked")
            Class<Map<?, ?>> type = (Class<Map<?, ?>>) (Class<?>) Map.class;
            workers.add(WorkerTask.of(this.definitions.get(task), handler, type, 2, Duration.ofSeconds(30), "default"));
        }
        PgQueue queue = PgQueue.builder(this.databases.get(0).dataSource())
            .tasks(TaskRegistry.of(List.copyOf(this.definitions.values())))
            .workers(TestWorkers.settings("worker-" + this.queues.size()).build(), workers).encryption(ENCRYPTION)
            .migrateSchema(true).build();
        this.queues.add(queue);
        queue.start();
        return queue;
    }

    private JdbcTemplate jdbc() {
        return new JdbcTemplate(this.databases.get(0).dataSource());
    }
}
