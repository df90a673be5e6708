package io.pgqueue.sample;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.pgqueue.PgQueue;
import io.pgqueue.QueueClient;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.sample.tasks.SendPushTask;
import io.pgqueue.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample's jar started as a dedicated worker node, without a web server, in a process of its
 * own: it stays up, runs a job enqueued from another process (this one), and stops cleanly on
 * SIGTERM.
 */
class WorkerOnlyNodeIT {

    private TestDatabase database;

    private Process node;

    private Path log;

    @BeforeEach
    void createDatabase() throws IOException {
        this.database = TestDatabase.create("pgqueue_worker_node");
        this.log = Files.createTempFile("worker-node", ".log");
    }

    @AfterEach
    void stop() throws Exception {
        if (this.node != null && this.node.isAlive()) {
            this.node.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        this.database.close();
        Files.deleteIfExists(this.log);
    }

    @Test
    void aWorkerOnlyNodeStaysUpRunsJobsAndStopsOnSigterm() throws Exception {
        this.node = start("--spring.main.web-application-type=none");
        await().atMost(Duration.ofSeconds(90)).until(() -> output().contains("Started SampleApplication"));

        // Daemon threads alone would let the JVM exit right after start-up.
        await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).until(this.node::isAlive);
        try (QueueClient client = PgQueue.builder(this.database.dataSource())
            .tasks(TaskRegistry.of(TaskDefinition.builder("send-push").build())).build().client()) {
            client.enqueue("send-push", new SendPushTask.Push("ann", "from another process"));
        }
        JdbcTemplate jdbc = new JdbcTemplate(this.database.dataSource());
        await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM notification WHERE message = 'from another process'", Long.class) == 1);

        this.node.destroy();

        assertThat(this.node.waitFor(60, TimeUnit.SECONDS)).as("stopped within 60 s of SIGTERM").isTrue();
        assertThat(output()).containsPattern("pgqueue node .* stopped").doesNotContain(" ERROR ");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM pgqueue.node", Long.class)).isZero();
    }

    private Process start(String... arguments) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new java.util.ArrayList<>(List.of(java, "-jar", jar(),
                "--spring.datasource.url=" + this.database.jdbcUrl(),
                "--spring.datasource.username=" + this.database.user(),
                "--spring.datasource.password=" + (this.database.password() == null ? "" : this.database.password()),
                "--pgqueue.poll-interval=200ms"));
        command.addAll(List.of(arguments));
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(this.log.toFile()).start();
    }

    private String output() throws IOException {
        return Files.readString(this.log);
    }

    private static String jar() {
        String jar = System.getProperty("sample.jar");
        assertThat(jar).as("system property sample.jar (set by the build)").isNotNull();
        assertThat(new File(jar)).exists();
        return jar;
    }
}
