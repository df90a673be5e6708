package io.pgqueue.autoconfigure.console;

import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

import io.pgqueue.EnqueueOptions;
import io.pgqueue.EnqueuedWorkflow;
import io.pgqueue.JobState;
import io.pgqueue.QueueAdmin;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import io.pgqueue.Workflow;
import io.pgqueue.message.MessageQueueAttributes;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.message.OutgoingMessage;
import io.pgqueue.message.ReceiveRequest;
import io.pgqueue.message.RedrivePolicy;
import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.ContextConfiguration;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The console over real HTTP without Spring Security, served with
 * pgqueue.console.allow-unauthenticated=true and opened with pgqueue.console.read-only=false:
 * its page and assets, the API's reads and actions, and its answers to bad requests.
 */
@SpringBootTest(classes = QueueConsoleHttpTests.ConsoleApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "pgqueue.console.allow-unauthenticated=true", "pgqueue.console.read-only=false",
                "pgqueue.console.allowed-hosts=Queue.Internal",
                "pgqueue.stats.interval=200ms", QueueConsoleHttpTests.WITHOUT_SECURITY })
@ContextConfiguration(initializers = TestDatabaseInitializer.class)
public class QueueConsoleHttpTests {

    /** The test class path has Spring Security (for the console's security tests): left out here. */
    public static final String WITHOUT_SECURITY = "spring.autoconfigure.exclude="
            + "org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration,"
            + "org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration,"
            + "org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration,"
            + "org.springframework.boot.security.autoconfigure.web.servlet.SecurityFilterAutoConfiguration,"
            + "org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration";

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class ConsoleApplication {

        @Bean
        Fails fails() {
            return new Fails();
        }
    }

    /** Fails every attempt of a payload "fail", completes any other. */
    @QueueTask(name = "fails", maxAttempts = 1)
    static class Fails implements TaskHandler<String> {

        @Override
        public void handle(String payload, TaskContext context) {
            if (payload.equals("fail")) {
                throw new IllegalStateException("the remote side refused\nsecond line");
            }
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    QueueClient queue;

    @Autowired
    QueueAdmin admin;

    @Autowired
    MessageQueues messages;

    @Test
    void thePageAndItsAssetsComeFromTheJarWithTheirOwnNotFound() throws Exception {
        ConsoleClient browser = new ConsoleClient(this.port);
        HttpResponse<String> bare = browser.get("/pgqueue");
        assertThat(bare.statusCode()).isEqualTo(308);
        assertThat(bare.headers().firstValue("Location")).hasValue("/pgqueue/");

        HttpResponse<String> page = browser.get("/pgqueue/");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/html");
        assertThat(page.headers().firstValue("Content-Security-Policy").orElseThrow()).contains("default-src 'self'");
        assertThat(page.body()).contains("<title>pgqueue console</title>").contains("app.js");
        assertThat(browser.get("/pgqueue/app.js").statusCode()).isEqualTo(200);
        assertThat(browser.get("/pgqueue/app.css").statusCode()).isEqualTo(200);

        HttpResponse<String> missing = browser.get("/pgqueue/missing.js");
        assertThat(missing.statusCode()).isEqualTo(404);
        assertThat(missing.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(ConsoleClient.json(browser.get("/pgqueue/api/nothing")).get("detail").asString())
            .isEqualTo("No console API at GET /pgqueue/api/nothing");
    }

    @Test
    void aFailedJobIsListedShownWithItsStackAndRerun() throws Exception {
        ConsoleClient browser = new ConsoleClient(this.port);
        long id = this.queue.enqueue("fails", "fail").jobId();
        await().atMost(Duration.ofSeconds(20)).until(() -> this.admin.job(id).orElseThrow().state() == JobState.FAILED);

        JsonNode page = ConsoleClient.json(browser.get("/pgqueue/api/jobs?state=FAILED&task=fails&error=REFUSED"));
        assertThat(page.get("state").asString()).isEqualTo("FAILED");
        JsonNode listed = page.get("jobs").get(0);
        assertThat(listed.get("id").asLong()).isEqualTo(id);
        assertThat(listed.get("error").asString()).isEqualTo("java.lang.IllegalStateException: the remote side refused");
        assertThat(page.get("next").isNull()).isTrue();

        JsonNode job = ConsoleClient.json(browser.get("/pgqueue/api/jobs/" + id));
        assertThat(job.get("state").asString()).isEqualTo("FAILED");
        assertThat(job.get("payload").asString()).isEqualTo("\"fail\"");
        assertThat(job.get("lastError").asString()).contains("second line").contains("\tat ");
        assertThat(job.get("attempt").asInt()).isEqualTo(1);

        java.time.Instant failedAt = this.admin.job(id).orElseThrow().finishedAt();
        HttpResponse<String> rerun = browser.act("/pgqueue/api/jobs/" + id + "/rerun");
        assertThat(rerun.statusCode()).isEqualTo(200);
        assertThat(ConsoleClient.json(rerun).get("message").asString()).isEqualTo("Job " + id + " is queued again");
        // It runs again, with a fresh attempt budget, and fails again.
        await().atMost(Duration.ofSeconds(20)).until(() -> this.admin.job(id).orElseThrow().finishedAt() != null
                && this.admin.job(id).orElseThrow().finishedAt().isAfter(failedAt));
        assertThat(this.admin.job(id).orElseThrow().state()).isEqualTo(JobState.FAILED);

        HttpResponse<String> again = browser.act("/pgqueue/api/jobs/" + id + "/cancel");
        assertThat(again.statusCode()).as("a finished job cannot be cancelled").isEqualTo(409);
        assertThat(ConsoleClient.json(again).get("detail").asString()).isEqualTo("Job " + id + " has already finished");
    }

    @Test
    void jobsAreSearchedInTheirPayloadsAndTagsCountedAndActedOnInBulk() throws Exception {
        ConsoleClient browser = new ConsoleClient(this.port);
        String tag = "bulk-" + System.nanoTime();
        for (int i = 0; i < 12; i++) {
            this.queue.enqueue("fails", "later-" + (i % 3), EnqueueOptions.defaults().withTags(tag)
                .withDelay(Duration.ofHours(1)));
        }
        String filter = "state=SCHEDULED&tag=" + tag;

        JsonNode counted = ConsoleClient.json(browser.get("/pgqueue/api/jobs/count?" + filter));
        assertThat(counted.get("count").asLong()).isEqualTo(12);
        assertThat(counted.get("filter").asString()).isEqualTo("SCHEDULED jobs with tag " + tag);
        assertThat(counted.get("actions").toString()).isEqualTo("[\"cancel\",\"run-at\",\"priority\"]");
        JsonNode page = ConsoleClient.json(browser.get("/pgqueue/api/jobs?" + filter + "&limit=5"));
        assertThat(page.get("jobs").get(0).get("tags").get(0).asString()).isEqualTo(tag);
        String selected = page.get("jobs").get(0).get("id").asString() + "," + page.get("jobs").get(1).get("id").asString();

        HttpResponse<String> some = browser.act("/pgqueue/api/bulk?" + filter + "&ids=" + selected + "&action=priority&priority=9");
        assertThat(some.statusCode()).isEqualTo(200);
        long first = ConsoleClient.json(some).get("id").asLong();
        await().atMost(Duration.ofSeconds(20)).until(() -> ConsoleClient.json(browser.get("/pgqueue/api/actions/" + first))
            .get("state").asString().equals("DONE"));
        assertThat(ConsoleClient.json(browser.get("/pgqueue/api/actions/" + first)).get("acted").asLong()).isEqualTo(2);

        HttpResponse<String> all = browser.act("/pgqueue/api/bulk?" + filter + "&action=cancel");
        JsonNode started = ConsoleClient.json(all);
        assertThat(started.get("matched").asLong()).isEqualTo(12);
        await().atMost(Duration.ofSeconds(20)).until(() -> ConsoleClient.json(browser.get("/pgqueue/api/actions/"
                + started.get("id").asLong())).get("acted").asLong() == 12);
        assertThat(ConsoleClient.json(browser.get("/pgqueue/api/jobs/count?state=CANCELLED&tag=" + tag)).get("count").asLong())
            .isEqualTo(12);
        JsonNode trail = ConsoleClient.json(browser.get("/pgqueue/api/actions?limit=2")).get("actions");
        assertThat(trail.get(0).get("action").asString()).isEqualTo("cancel");
        assertThat(trail.get(0).get("target").asString()).isEqualTo("SCHEDULED jobs with tag " + tag);
        assertThat(trail.get(1).get("target").asString()).isEqualTo("SCHEDULED jobs among 2 selected with tag " + tag);

        for (String bad : new String[] { "state=FAILED&action=cancel", "state=READY&action=purge",
                "state=READY&action=run-at&at=tomorrow", "state=READY&action=priority&priority=high",
                "state=READY&action=cancel&match=customer.id=4", "state=READY&action=cancel&ids=1,x",
                "state=READY&action=cancel&tag=a%00b" }) {
            HttpResponse<String> refused = browser.act("/pgqueue/api/bulk?" + bad);
            assertThat(refused.statusCode()).as(bad).isEqualTo(400);
        }
        assertThat(ConsoleClient.json(browser.act("/pgqueue/api/bulk?state=FAILED&action=cancel")).get("detail").asString())
            .isEqualTo("A cancel action applies to " + io.pgqueue.BulkAction.cancel().groups() + " jobs, not FAILED");
        assertThat(ConsoleClient.json(browser.get("/pgqueue/api/actions?limit=1")).get("actions").get(0).get("id").asLong())
            .as("nothing recorded").isEqualTo(started.get("id").asLong());
        assertThat(browser.get("/pgqueue/api/actions/987654").statusCode()).isEqualTo(404);
    }

    @Test
    void theHistoryOfWhatTheWorkersDidOutlivesThePageAndComesPerMinuteOrPerHour() throws Exception {
        ConsoleClient browser = new ConsoleClient(this.port);
        long id = this.queue.enqueue("fails", "history-" + System.nanoTime()).jobId();
        await().atMost(Duration.ofSeconds(20)).until(() -> this.admin.job(id).orElseThrow().state() == JobState.COMPLETED);
        // Worker nodes add their figures every 10 s.
        await().atMost(Duration.ofSeconds(30)).until(() -> ConsoleClient.json(browser.get("/pgqueue/api/history?window=1h"
                + "&task=fails")).get("points").size() > 0);
        JsonNode hour = ConsoleClient.json(browser.get("/pgqueue/api/history?window=1h&task=fails"));
        assertThat(hour.get("stepSeconds").asInt()).isEqualTo(60);
        assertThat(hour.get("tasks").toString()).contains("\"fails\"");
        assertThat(hour.get("points").get(0).get("completed").asLong()).isPositive();
        JsonNode week = ConsoleClient.json(browser.get("/pgqueue/api/history?window=7d"));
        assertThat(week.get("stepSeconds").asInt()).isEqualTo(3600);
        assertThat(week.get("points").get(0).get("ran").asLong()).isPositive();
        assertThat(ConsoleClient.json(browser.get("/pgqueue/api/overview")).get("history").get("points").size())
            .as("the overview's hour reads the same history").isPositive();
        HttpResponse<String> bad = browser.get("/pgqueue/api/history?window=2h");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(ConsoleClient.json(bad).get("detail").asString()).isEqualTo("Unknown history window '2h'; use 1h, 24h or 7d");
    }

    @Test
    void aWorkflowIsShownWithWhatEachStepComesAfterItsStatesAndTimes() throws Exception {
        ConsoleClient browser = new ConsoleClient(this.port);
        EnqueuedWorkflow flow = this.queue.workflow("report")
            .add("collect", "fails", "fine")
            .add("render", "fails", "fine", Workflow.after("collect"))
            .add("send", "fails", "fine", Workflow.after("collect", "render"))
            .enqueue();
        await().atMost(Duration.ofSeconds(30)).until(() -> this.admin.workflow(flow.id()).orElseThrow().state()
            .equals("COMPLETED"));

        JsonNode listed = ConsoleClient.json(browser.get("/pgqueue/api/workflows"));
        assertThat(listed.get("workflows").toString()).contains("\"id\":" + flow.id());
        JsonNode shown = ConsoleClient.json(browser.get("/pgqueue/api/workflows/" + flow.id()));
        assertThat(shown.get("name").asString()).isEqualTo("report");
        assertThat(shown.get("completed").asInt()).isEqualTo(3);
        JsonNode send = shown.get("steps").get(2);
        assertThat(send.get("step").asString()).isEqualTo("send");
        assertThat(send.get("after").toString()).isEqualTo("[\"collect\",\"render\"]");
        assertThat(send.get("state").asString()).isEqualTo("COMPLETED");
        assertThat(send.get("startedAt").isNull()).isFalse();
        assertThat(send.get("finishedAt").isNull()).isFalse();
        assertThat(browser.get("/pgqueue/api/workflows/987654321").statusCode()).isEqualTo(404);
        assertThat(browser.get("/pgqueue/api/workflows/x").statusCode()).isEqualTo(400);
    }

    @Test
    void messageQueuesAreListedWithTheirCountsAndTheirMessagesPeekedWithoutReceivingThem() throws Exception {
        ConsoleClient browser = new ConsoleClient(this.port);
        String dead = "dead-" + System.nanoTime();
        String orders = "orders-" + System.nanoTime();
        this.messages.createQueue(dead, MessageQueueAttributes.defaults(), Map.of());
        this.messages.createQueue(orders, MessageQueueAttributes.defaults().withRedrivePolicy(new RedrivePolicy(dead, 3)),
                Map.of());
        this.messages.send(orders, OutgoingMessage.of("{\"order\": 1}"));
        this.messages.send(orders, OutgoingMessage.of("{\"order\": 2}"));
        this.messages.receive(orders, ReceiveRequest.of(1).withWaitTime(Duration.ZERO));

        JsonNode all = ConsoleClient.json(browser.get("/pgqueue/api/queues"));
        JsonNode listed = null;
        for (JsonNode queue : all.get("queues")) {
            if (queue.get("name").asString().equals(orders)) {
                listed = queue;
            }
        }
        assertThat(listed).isNotNull();
        assertThat(listed.get("deadLetterQueue").asString()).isEqualTo(dead);
        assertThat(listed.get("visible").asLong() + listed.get("inFlight").asLong()).isEqualTo(2);
        JsonNode shown = ConsoleClient.json(browser.get("/pgqueue/api/queues/" + orders));
        assertThat(shown.get("messages")).hasSize(2);
        assertThat(shown.get("messages").get(0).get("state").asString()).isEqualTo("in flight");
        assertThat(shown.get("messages").get(1).get("body").asString()).isEqualTo("{\"order\": 2}");
        assertThat(ConsoleClient.json(browser.get("/pgqueue/api/queues/" + dead)).get("deadLetterSources").toString())
            .isEqualTo("[\"" + orders + "\"]");
        assertThat(this.messages.receive(orders, ReceiveRequest.of(10).withWaitTime(Duration.ZERO)))
            .as("the peek received nothing").hasSize(1);
        assertThat(browser.get("/pgqueue/api/queues/no-such-queue").statusCode()).isEqualTo(404);
        // Every node adds its message counts every 10 s: 2 sent and 2 received (one each time) over 5 minutes.
        await().atMost(Duration.ofSeconds(30)).until(() -> ConsoleClient.json(browser.get("/pgqueue/api/queues/" + orders))
            .get("receivedPerMinute").asDouble() >= 0.4);
        JsonNode rates = ConsoleClient.json(browser.get("/pgqueue/api/queues/" + orders));
        assertThat(rates.get("sentPerMinute").asDouble()).isEqualTo(0.4);
        assertThat(rates.get("receivedPerMinute").asDouble()).isEqualTo(0.4);

        this.messages.send(dead, OutgoingMessage.of("dead letter"));
        HttpResponse<String> redriven = browser.act("/pgqueue/api/queues/" + dead + "/redrive?to=" + orders);
        assertThat(redriven.statusCode()).as(redriven.body()).isEqualTo(200);
        assertThat(ConsoleClient.json(redriven).get("message").asString()).isEqualTo("Moved 1 message from " + dead
                + " to " + orders);
        assertThat(this.messages.counts(dead).visible()).isZero();
        assertThat(ConsoleClient.json(browser.get("/pgqueue/api/actions?limit=1")).get("actions").get(0).get("action")
            .asString()).isEqualTo("redrive");
        assertThat(browser.act("/pgqueue/api/queues/" + dead + "/redrive").statusCode()).as("no target").isEqualTo(400);
        assertThat(browser.act("/pgqueue/api/queues/no-such-queue/redrive?to=" + orders).statusCode()).isEqualTo(404);
    }

    @Test
    void aJobActionIsNotFoundForAnUnknownJobAndAConflictForAJobInTheWrongState() throws Exception {
        ConsoleClient browser = new ConsoleClient(this.port);
        for (String action : new String[] { "rerun", "cancel" }) {
            HttpResponse<String> unknown = browser.act("/pgqueue/api/jobs/987654321/" + action);
            assertThat(unknown.statusCode()).as(action).isEqualTo(404);
            assertThat(ConsoleClient.json(unknown).get("detail").asString()).isEqualTo("No job has id 987654321");
        }
        long id = this.queue.enqueue("fails", "fine").jobId();
        await().atMost(Duration.ofSeconds(20)).until(() -> this.admin.job(id).orElseThrow().state() == JobState.COMPLETED);

        HttpResponse<String> rerun = browser.act("/pgqueue/api/jobs/" + id + "/rerun");
        assertThat(rerun.statusCode()).as("only a FAILED job can be re-run").isEqualTo(409);
        assertThat(rerun.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        JsonNode problem = ConsoleClient.json(rerun);
        assertThat(problem.get("status").asInt()).isEqualTo(409);
        assertThat(problem.get("title").asString()).isEqualTo("Conflict");
        assertThat(problem.get("detail").asString()).isEqualTo("Job " + id + " is COMPLETED; only FAILED jobs can be re-run");
        assertThat(browser.act("/pgqueue/api/jobs/abc/rerun").statusCode()).isEqualTo(400);
        assertThat(this.admin.job(id).orElseThrow().state()).isEqualTo(JobState.COMPLETED);
    }

    @Test
    void pausingATaskShowsInTheOverview() throws Exception {
        ConsoleClient browser = new ConsoleClient(this.port);
        HttpResponse<String> paused = browser.act("/pgqueue/api/tasks/fails/pause");
        assertThat(paused.statusCode()).isEqualTo(200);
        assertThat(ConsoleClient.json(paused).get("message").asString()).isEqualTo("Paused fails");
        try {
            JsonNode overview = ConsoleClient.json(browser.get("/pgqueue/api/overview"));
            assertThat(overview.get("readOnly").asBoolean()).isFalse();
            JsonNode task = null;
            for (JsonNode each : overview.get("tasks")) {
                if (each.get("name").asString().equals("fails")) {
                    task = each;
                }
            }
            assertThat(task).isNotNull();
            assertThat(task.get("paused").asBoolean()).isTrue();
            assertThat(task.has("deadlineMisses")).isTrue();
            assertThat(overview.get("nodes").get(0).get("pools").get("default").get("tasks").toString()).contains("fails");
            assertThat(overview.get("pools").get(0).get("name").asString()).isEqualTo("default");
            assertThat(overview.get("history").get("stepSeconds").asInt()).isEqualTo(60);
        }
        finally {
            browser.act("/pgqueue/api/tasks/fails/resume");
        }
    }

    @Test
    void anotherSitesNamePointedAtTheConsoleIsRefusedAndItsActionsOnlyComeFromItsOwnPage() throws Exception {
        assertThat(raw("GET /pgqueue/api/overview", "Host: localhost:" + this.port)).startsWith("HTTP/1.1 200");
        assertThat(raw("GET /pgqueue/api/overview", "Host: 127.0.0.1:" + this.port)).startsWith("HTTP/1.1 200");
        assertThat(raw("GET /pgqueue/api/overview", "Host: [::1]:" + this.port)).startsWith("HTTP/1.1 200");
        assertThat(raw("GET /pgqueue/api/overview", "Host: queue.internal:" + this.port))
            .as("a name in pgqueue.console.allowed-hosts").startsWith("HTTP/1.1 200");

        String rebound = raw("GET /pgqueue/api/jobs?state=FAILED", "Host: attacker.example:" + this.port);
        assertThat(rebound).startsWith("HTTP/1.1 403").contains("not for 'attacker.example:" + this.port + "'")
            .doesNotContain("\"jobs\"");
        assertThat(raw("GET /pgqueue/", "Host: attacker.example")).startsWith("HTTP/1.1 403");
        assertThat(raw("POST /pgqueue/api/tasks/fails/pause", "Host: attacker.example:" + this.port,
                "X-PgQueue-Console: 1", "Content-Length: 0")).startsWith("HTTP/1.1 403");
        assertThat(raw("POST /pgqueue/api/tasks/fails/pause", "Host: 127.0.0.1:" + this.port,
                "Origin: http://attacker.example", "X-PgQueue-Console: 1", "Content-Length: 0"))
            .startsWith("HTTP/1.1 403").contains("not from 'http://attacker.example'");
        assertThat(ConsoleClient.json(new ConsoleClient(this.port).get("/pgqueue/api/overview")).get("tasks").toString())
            .doesNotContain("\"paused\":true");
    }

    /** One request over a socket of its own, with the Host header a browser would send for the name it used. */
    private String raw(String requestLine, String... headers) throws Exception {
        try (java.net.Socket socket = new Socket("127.0.0.1", this.port)) {
            String request = requestLine + " HTTP/1.1\r\n" + String.join("\r\n", headers)
                    + "\r\nConnection: close\r\n\r\n";
            socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void badRequestsAreAnsweredWithWhatIsWrongAndChangeNothing() throws Exception {
        ConsoleClient browser = new ConsoleClient(this.port);
        Map<String, String> problems = Map.of(
                "/pgqueue/api/jobs?state=done", "Unknown group of jobs 'done'",
                "/pgqueue/api/jobs?state=READY&after=x", "'x' is not a page position of READY jobs",
                "/pgqueue/api/jobs?from=yesterday", "from 'yesterday' is not an instant",
                "/pgqueue/api/jobs?limit=0", "A page holds 1 to 500 jobs, not 0",
                "/pgqueue/api/jobs/abc", "'abc' is not a job id",
                "/pgqueue/api/jobs?state=READY&task=a%00b", "task must not contain the character U+0000",
                "/pgqueue/api/jobs?error=%00", "error must not contain the character U+0000",
                "/pgqueue/api/jobs?from=%2B999999999-12-31T23:59:59Z",
                "from '+999999999-12-31T23:59:59Z' is out of range: years 1 to 9999");
        for (Map.Entry<String, String> problem : problems.entrySet()) {
            HttpResponse<String> response = browser.get(problem.getKey());
            assertThat(response.statusCode()).as(problem.getKey()).isEqualTo(400);
            assertThat(ConsoleClient.json(response).get("detail").asString()).as(problem.getKey())
                .startsWith(problem.getValue()).doesNotContainIgnoringCase("select");
        }
        assertThat(browser.get("/pgqueue/api/jobs/987654321").statusCode()).isEqualTo(404);
        assertThat(browser.act("/pgqueue/api/tasks/unknown/pause").statusCode()).isEqualTo(404);
        assertThat(browser.act("/pgqueue/api/tasks/fails/explode").statusCode()).isEqualTo(400);
        // U+0000 in an action's path: a client error, never the database's.
        assertThat(browser.act("/pgqueue/api/tasks/fa%00ils/pause").statusCode()).isEqualTo(400);
        assertThat(browser.act("/pgqueue/api/tasks/fails/pa%00use").statusCode()).isEqualTo(400);
        assertThat(browser.act("/pgqueue/api/jobs/1%00/cancel").statusCode()).isEqualTo(400);
        assertThat(browser.act("/pgqueue/api/jobs/1/can%00cel").statusCode()).isEqualTo(400);

        HttpResponse<String> forged = browser.postBare("/pgqueue/api/tasks/fails/pause");
        assertThat(forged.statusCode()).as("an action without the console's header").isEqualTo(403);
        assertThat(this.admin.knownTasks()).contains("fails");
        assertThat(ConsoleClient.json(browser.get("/pgqueue/api/overview")).get("tasks").toString())
            .doesNotContain("\"paused\":true");
    }
}
