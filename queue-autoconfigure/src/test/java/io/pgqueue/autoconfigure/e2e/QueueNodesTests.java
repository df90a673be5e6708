package io.pgqueue.autoconfigure.e2e;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.pgqueue.JobRequest;
import io.pgqueue.QueueClient;
import io.pgqueue.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Several application instances (nodes) on one database: shared work without double execution,
 * polling when notifications are off, and graceful shutdown with jobs in flight.
 */
@Order(1)
class QueueNodesTests {

    private TestDatabase database;

    private final List<ConfigurableApplicationContext> nodes = new ArrayList<>();

    @BeforeEach
    void createDatabase() {
        this.database = TestDatabase.create("pgqueue_nodes");
    }

    @AfterEach
    void stopNodes() {
        this.nodes.forEach(ConfigurableApplicationContext::close);
        this.database.close();
    }

    @Test
    void twoNodesShareTheWorkAndRunEachJobOnce() {
        // No prefetch: each node holds only the jobs it runs, so the node that hears the notification
        // cannot take the whole burst of no-op jobs in a few claims before the other one polls.
        ConfigurableApplicationContext a = node("node-a", "pgqueue.notifications.enabled=true",
                "pgqueue.pools.default.max-prefetch=0");
        // Node b never hears a notification: it finds work by polling.
        ConfigurableApplicationContext b = node("node-b", "pgqueue.notifications.enabled=false",
                "pgqueue.poll-interval=100ms", "pgqueue.pools.default.max-prefetch=0");
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            jobs.add(JobRequest.of("send-push", new E2eApplication.Push("user", "file-" + i)));
        }
        a.getBean(QueueClient.class).enqueueAll(jobs);

        await().atMost(Duration.ofSeconds(60)).until(() -> completed("send-push") == 1000);
        List<Object> onA = a.getBean(E2eApplication.Recorder.class).of("send-push");
        List<Object> onB = b.getBean(E2eApplication.Recorder.class).of("send-push");
        assertThat(onA).isNotEmpty();
        assertThat(onB).isNotEmpty();
        List<Object> all = new ArrayList<>(onA);
        all.addAll(onB);
        assertThat(all).hasSize(1000).doesNotHaveDuplicates();
        assertThat(jdbc().queryForList("SELECT DISTINCT split_part(lease_owner, '/', 1) FROM pgqueue.job_finished",
                String.class)).containsExactlyInAnyOrder("node-a", "node-b");
    }

    @Test
    void pollingAloneRunsJobsWhenNotificationsAreOff() {
        ConfigurableApplicationContext a = node("node-a", "pgqueue.notifications.enabled=false",
                "pgqueue.poll-interval=200ms");

        a.getBean(QueueClient.class).enqueue(E2eApplication.SendPush.class, new E2eApplication.Push("u", "polled"));

        await().atMost(Duration.ofSeconds(10)).until(() -> completed("send-push") == 1);
    }

    @Test
    void everyNodeHonoursAPauseWithinAPollInterval() {
        ConfigurableApplicationContext a = node("node-a", "pgqueue.poll-interval=200ms");
        ConfigurableApplicationContext b = node("node-b", "pgqueue.poll-interval=200ms");
        a.getBean(io.pgqueue.QueueAdmin.class).pause("send-push");
        // Both nodes read the pause within one poll interval.
        await().atMost(Duration.ofSeconds(5)).until(() -> paused(a) && paused(b));

        long id = b.getBean(QueueClient.class).enqueue(E2eApplication.SendPush.class,
                new E2eApplication.Push("u", "paused")).jobId();
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).until(() -> completed("send-push") == 0);

        a.getBean(io.pgqueue.QueueAdmin.class).resume("send-push");
        await().atMost(Duration.ofSeconds(10)).until(() -> completed("send-push") == 1);
        assertThat(a.getBean(QueueClient.class).find(id).orElseThrow().state()).isEqualTo(io.pgqueue.JobState.COMPLETED);
    }

    private static boolean paused(ConfigurableApplicationContext node) {
        return node.getBean(io.pgqueue.autoconfigure.QueueWorkerNode.class).pools().stream()
            .anyMatch(pool -> pool.tasks().containsKey("send-push") && pool.tasks().get("send-push").paused());
    }

    @Test
    void gracefulShutdownWithJobsInFlightLosesNothing() {
        ConfigurableApplicationContext a = node("node-a");
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            jobs.add(JobRequest.of("copy-file", i));
        }
        a.getBean(QueueClient.class).enqueueAll(jobs);
        await().atMost(Duration.ofSeconds(20)).until(() -> completed("copy-file") >= 4);
        E2eApplication.Recorder recorderOfA = a.getBean(E2eApplication.Recorder.class);

        a.close();

        // Running handlers finished, buffered jobs went back: nothing is claimed, nothing is lost.
        Map<String, Long> states = states();
        assertThat(states.getOrDefault("STARTING", 0L) + states.getOrDefault("RUNNING", 0L)).isZero();
        assertThat(states.getOrDefault("READY", 0L) + completed("copy-file")).isEqualTo(40);
        assertThat(jdbc().queryForObject("SELECT count(*) FROM pgqueue.node", Long.class)).isZero();
        List<Object> ranOnA = new ArrayList<>(recorderOfA.of("copy-file"));
        assertThat(ranOnA).hasSize((int) completed("copy-file"));

        ConfigurableApplicationContext b = node("node-b");
        await().atMost(Duration.ofSeconds(30)).until(() -> completed("copy-file") == 40);
        List<Object> all = new ArrayList<>(ranOnA);
        all.addAll(b.getBean(E2eApplication.Recorder.class).of("copy-file"));
        assertThat(all).hasSize(40).doesNotHaveDuplicates();
    }

    private ConfigurableApplicationContext node(String id, String... properties) {
        List<String> all = new ArrayList<>(this.database.springProperties());
        all.addAll(List.of("pgqueue.node-id=" + id, "spring.main.banner-mode=off"));
        all.addAll(List.of(properties));
        ConfigurableApplicationContext context = new SpringApplicationBuilder(E2eApplication.class).web(WebApplicationType.NONE)
            .properties(all.toArray(String[]::new))
            .run();
        this.nodes.add(context);
        return context;
    }

    private JdbcTemplate jdbc() {
        return new JdbcTemplate(this.database.dataSource());
    }

    private long completed(String task) {
        return jdbc().queryForObject("SELECT count(*) FROM pgqueue.job_finished WHERE task = ? AND state = 'COMPLETED'",
                Long.class, task);
    }

    private Map<String, Long> states() {
        Map<String, Long> states = new HashMap<>();
        jdbc().query("SELECT state, count(*) FROM pgqueue.job GROUP BY state",
                rs -> { states.put(rs.getString(1), rs.getLong(2)); });
        return states;
    }
}
