package io.pgqueue.autoconfigure.console;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import io.pgqueue.EnqueueOptions;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.test.context.ContextConfiguration;
import tools.jackson.databind.JsonNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With Spring Security and the application's default security: the console needs its role, its
 * actions need the CSRF token from the cookie, and the rest of the application stays protected by
 * the application's own chain.
 */
@SpringBootTest(classes = QueueConsoleSecurityTests.SecuredApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "pgqueue.workers.enabled=false", "pgqueue.console.role=OPS",
                "pgqueue.redacted-fields=password,cardNumber", "pgqueue.encryption.keys.k1=MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
                "pgqueue.encryption.reader-role=CARDS", "pgqueue.tasks.card-charge.encrypted=true" })
@ContextConfiguration(initializers = TestDatabaseInitializer.class)
class QueueConsoleSecurityTests {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({ QueueConsoleHttpTests.Fails.class, Signups.class })
    static class SecuredApplication {

        @Bean
        InMemoryUserDetailsManager users() {
            return new InMemoryUserDetailsManager(User.withUsername("operator").password("{noop}secret").roles("OPS").build(),
                    User.withUsername("cashier").password("{noop}secret").roles("OPS", "CARDS").build(),
                    User.withUsername("viewer").password("{noop}secret").roles("USER").build(),
                    User.withUsername("watcher").password("{noop}secret").roles("QUEUE_VIEWER").build());
        }
    }

    record Signup(String user, String password, Map<String, String> card) {
    }

    @QueueTask(name = "signup")
    static class Signups implements TaskHandler<Signup> {

        @Override
        public void handle(Signup payload, TaskContext context) {
        }
    }

    @Autowired
    QueueClient queue;

    @Test
    void viewersReadWithoutJobDataOrActionsAndRedactedFieldsAreHiddenFromEveryone() throws Exception {
        long id = this.queue.enqueue("signup", new Signup("ann", "hunter2", Map.of("cardNumber", "4111", "brand", "visa")),
                EnqueueOptions.defaults().withDelay(Duration.ofHours(1))).jobId();
        ConsoleClient watcher = new ConsoleClient(this.port).as("watcher", "secret");
        JsonNode overview = ConsoleClient.json(watcher.get("/pgqueue/api/overview"));
        assertThat(overview.get("readOnly").asBoolean()).as("a viewer does not act").isTrue();
        assertThat(overview.get("jobData").asBoolean()).isFalse();
        JsonNode seen = ConsoleClient.json(watcher.get("/pgqueue/api/jobs/" + id));
        assertThat(seen.get("payload").asString()).isEqualTo("\"hidden: job data needs the console's admin role\"");
        assertThat(seen.get("task").asString()).isEqualTo("signup");
        assertThat(ConsoleClient.json(watcher.get("/pgqueue/api/jobs?state=SCHEDULED&task=signup")).get("jobs").get(0)
            .get("id").asLong()).isEqualTo(id);
        HttpResponse<String> probe = watcher.get("/pgqueue/api/jobs?state=SCHEDULED&match=payload.user%3Dann");
        assertThat(probe.statusCode()).isEqualTo(403);
        assertThat(ConsoleClient.json(probe).get("detail").asString()).contains("needs the role OPS");
        assertThat(watcher.get("/pgqueue/api/jobs/count?state=SCHEDULED&error=boom").statusCode()).isEqualTo(403);
        assertThat(watcher.act("/pgqueue/api/bulk?state=SCHEDULED&action=cancel").statusCode()).isEqualTo(403);
        assertThat(watcher.act("/pgqueue/api/jobs/" + id + "/cancel").statusCode()).isEqualTo(403);

        ConsoleClient operator = new ConsoleClient(this.port).as("operator", "secret");
        String payload = ConsoleClient.json(operator.get("/pgqueue/api/jobs/" + id)).get("payload").asString();
        assertThat(payload).contains("\"user\":\"ann\"", "\"password\":\"[redacted]\"", "\"cardNumber\":\"[redacted]\"",
                "\"brand\":\"visa\"").doesNotContain("hunter2", "4111");
        HttpResponse<String> redacted = operator.get("/pgqueue/api/jobs?state=SCHEDULED&match=payload.password%3Dhunter2");
        assertThat(redacted.statusCode()).isEqualTo(400);
        assertThat(ConsoleClient.json(redacted).get("detail").asString()).contains("payload.password is redacted");
        assertThat(ConsoleClient.json(operator.get("/pgqueue/api/jobs?state=SCHEDULED&match=payload.user%3Dann"))
            .get("jobs").get(0).get("id").asLong()).isEqualTo(id);
        assertThat(this.queue.find(id).orElseThrow().state().name()).isEqualTo("READY");
    }

    @Test
    void anEncryptedPayloadIsShownDecryptedOnlyToTheReaderRoleAndStillRedacted() throws Exception {
        long id = this.queue.enqueue("card-charge", Map.of("cardNumber", "4111", "amount", 12, "user", "ann"),
                EnqueueOptions.defaults().withDelay(Duration.ofHours(1))).jobId();

        JsonNode cashier = ConsoleClient.json(new ConsoleClient(this.port).as("cashier", "secret").get("/pgqueue/api/jobs/" + id));
        assertThat(cashier.get("payload").asString()).contains("\"user\":\"ann\"", "\"amount\":12",
                "\"cardNumber\":\"[redacted]\"").doesNotContain("4111");
        JsonNode operator = ConsoleClient.json(new ConsoleClient(this.port).as("operator", "secret").get("/pgqueue/api/jobs/" + id));
        assertThat(operator.get("payload").asString()).isEqualTo("\"encrypted with the key 'k1': shown to the role CARDS\"");
        JsonNode watcher = ConsoleClient.json(new ConsoleClient(this.port).as("watcher", "secret").get("/pgqueue/api/jobs/" + id));
        assertThat(watcher.get("payload").asString()).isEqualTo("\"hidden: job data needs the console's admin role\"");
        assertThat(ConsoleClient.json(new ConsoleClient(this.port).as("cashier", "secret")
            .get("/pgqueue/api/jobs?state=SCHEDULED&match=payload.user%3Dann&task=card-charge")).get("jobs"))
            .as("an encrypted payload matches no search").isEmpty();
    }

    @LocalServerPort
    int port;

    @Test
    void theConsoleNeedsItsRole() throws Exception {
        assertThat(new ConsoleClient(this.port).get("/pgqueue/api/overview").statusCode()).isEqualTo(401);
        assertThat(new ConsoleClient(this.port).get("/pgqueue/").statusCode()).isEqualTo(401);
        assertThat(new ConsoleClient(this.port).as("viewer", "secret").get("/pgqueue/api/overview").statusCode())
            .isEqualTo(403);

        HttpResponse<String> overview = new ConsoleClient(this.port).as("operator", "secret").get("/pgqueue/api/overview");
        assertThat(overview.statusCode()).isEqualTo(200);
        assertThat(ConsoleClient.json(overview).get("user").asString()).isEqualTo("operator");
        assertThat(ConsoleClient.json(overview).get("readOnly").asBoolean()).as("protected, it acts").isFalse();
    }

    @Test
    void actionsNeedTheCsrfTokenOfTheCookie() throws Exception {
        ConsoleClient operator = new ConsoleClient(this.port).as("operator", "secret");
        // Refused before authentication reads the credentials: 401, and nothing changed.
        assertThat(operator.postBare("/pgqueue/api/tasks/fails/pause").statusCode()).as("no token yet").isEqualTo(401);
        assertThat(paused(operator)).isFalse();

        assertThat(operator.get("/pgqueue/api/overview").statusCode()).isEqualTo(200);
        assertThat(operator.csrfToken()).as("the cookie the page reads").isNotBlank();
        assertThat(operator.act("/pgqueue/api/tasks/fails/pause").statusCode()).isEqualTo(200);
        assertThat(paused(operator)).isTrue();
        assertThat(operator.act("/pgqueue/api/tasks/fails/resume").statusCode()).isEqualTo(200);

        ConsoleClient viewer = new ConsoleClient(this.port).as("viewer", "secret");
        viewer.get("/pgqueue/api/overview");
        assertThat(viewer.act("/pgqueue/api/tasks/fails/pause").statusCode()).isEqualTo(403);
        assertThat(viewer.act("/pgqueue/api/bulk?state=FAILED&action=delete").statusCode()).isEqualTo(403);
        assertThat(paused(operator)).isFalse();

        // The audit trail names the signed-in user.
        tools.jackson.databind.JsonNode trail = ConsoleClient.json(operator.get("/pgqueue/api/actions")).get("actions");
        assertThat(trail.get(0).get("action").asString()).isEqualTo("resume");
        assertThat(trail.get(0).get("actor").asString()).isEqualTo("operator");
        assertThat(trail.get(1).get("action").asString()).isEqualTo("pause");
        assertThat(trail).hasSize(2);
    }

    private static boolean paused(ConsoleClient operator) throws Exception {
        for (tools.jackson.databind.JsonNode task : ConsoleClient.json(operator.get("/pgqueue/api/overview")).get("tasks")) {
            if (task.get("name").asString().equals("fails")) {
                return task.get("paused").asBoolean();
            }
        }
        throw new AssertionError("the overview lists no task 'fails'");
    }

    @Test
    void theRestOfTheApplicationKeepsItsOwnSecurity() throws Exception {
        assertThat(new ConsoleClient(this.port).get("/actuator/queues").statusCode()).isEqualTo(401);
        assertThat(new ConsoleClient(this.port).get("/anything").statusCode()).isEqualTo(401);
        assertThat(new ConsoleClient(this.port).as("viewer", "secret").get("/actuator/health").statusCode())
            .as("the application's chain lets any signed-in user in").isEqualTo(200);
    }
}
