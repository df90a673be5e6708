package io.pgqueue.autoconfigure;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

import io.pgqueue.EnqueueOptions;
import io.pgqueue.QueueClient;
import io.pgqueue.message.MessageQueueAttributes;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.message.OutgoingMessage;
import io.pgqueue.message.PeekedMessage;
import io.pgqueue.message.RedrivePolicy;
import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.security.autoconfigure.actuate.web.servlet.EndpointRequest;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.test.context.ContextConfiguration;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Actuator security example of docs/monitoring.md, as written: operators read the queues
 * endpoint, only the admin role writes, and the admin's writes work over HTTP Basic.
 */
@SpringBootTest(classes = QueueEndpointSecurityTests.SecuredApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "pgqueue.workers.enabled=false", "pgqueue.console.enabled=false",
                "management.endpoints.web.exposure.include=health,queues",
                "management.endpoint.queues.access=unrestricted",
                "pgqueue.encryption.keys.k1=MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=", "pgqueue.encryption.reader-role=QUEUE_ADMIN",
                "pgqueue.tasks.card-charge.encrypted=true" })
@ContextConfiguration(initializers = TestDatabaseInitializer.class)
class QueueEndpointSecurityTests {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(TestHandlers.SendPush.class)
    static class SecuredApplication {

        /** docs/monitoring.md, "Protect the write operations", word for word. */
        @Bean
        SecurityFilterChain actuator(HttpSecurity http) throws Exception {
            return http
                .securityMatcher(EndpointRequest.toAnyEndpoint())
                .authorizeHttpRequests(requests -> requests
                    .requestMatchers(EndpointRequest.to("health")).permitAll()
                    .requestMatchers(HttpMethod.GET, "/actuator/queues/**").hasRole("OPERATOR")
                    .requestMatchers(HttpMethod.POST, "/actuator/queues/**").hasRole("QUEUE_ADMIN")
                    .anyRequest().hasRole("OPERATOR"))
                .httpBasic(Customizer.withDefaults())
                // Its callers are scripts and tools with HTTP Basic, not a browser session: no CSRF token,
                // which would otherwise refuse every write, the admin's too.
                .csrf(csrf -> csrf.disable())
                .build();
        }

        @Bean
        InMemoryUserDetailsManager users() {
            return new InMemoryUserDetailsManager(
                    User.withUsername("operator").password("{noop}secret").roles("OPERATOR").build(),
                    User.withUsername("admin").password("{noop}secret").roles("OPERATOR", "QUEUE_ADMIN").build());
        }
    }

    private static final HttpClient http = HttpClient.newHttpClient();

    private static final JsonMapper JSON = JsonMapper.builder().build();

    @LocalServerPort
    int port;

    @Autowired
    QueueClient queue;

    @Autowired
    MessageQueues messages;

    @Test
    void operatorsReadAndOnlyTheAdminRoleWrites() throws Exception {
        assertThat(send("GET", "/actuator/queues", null, null).statusCode()).isEqualTo(401);
        assertThat(send("GET", "/actuator/queues", "operator", null).statusCode()).isEqualTo(200);
        assertThat(send("GET", "/actuator/health", null, null).statusCode()).isEqualTo(200);

        String pause = "{\"action\":\"pause\"}";
        assertThat(send("POST", "/actuator/queues/send-push", "operator", pause).statusCode()).isEqualTo(403);
        HttpResponse<String> paused = send("POST", "/actuator/queues/send-push", "admin", pause);
        assertThat(paused.statusCode()).as(paused.body()).isEqualTo(200);
        assertThat(paused.body()).contains("\"changed\":true");
        assertThat(send("POST", "/actuator/queues/send-push", "admin", "{\"action\":\"resume\"}").statusCode()).isEqualTo(200);
    }

    @Test
    void anEncryptedPayloadIsShownDecryptedOnlyToTheReaderRole() throws Exception {
        long id = this.queue.enqueue("card-charge", java.util.Map.of("card", "4111-1111", "amount", 12),
                EnqueueOptions.defaults().withDelay(Duration.ofHours(1))).jobId();

        HttpResponse<String> admin = send("GET", "/actuator/queues/card-charge/" + id, "admin", null);
        assertThat(admin.statusCode()).as(admin.body()).isEqualTo(200);
        assertThat(JSON.readTree(admin.body()).get("payload").asString()).contains("4111-1111");
        HttpResponse<String> operator = send("GET", "/actuator/queues/card-charge/" + id, "operator", null);
        assertThat(operator.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(operator.body()).get("payload").asString())
            .isEqualTo("\"encrypted with the key 'k1': shown to the role QUEUE_ADMIN\"");
        assertThat(send("GET", "/actuator/queues/card-charge/" + (id + 1000), "admin", null).statusCode()).isEqualTo(404);
        assertThat(send("GET", "/actuator/queues/jobs/SCHEDULED?task=card-charge", "operator", null).body()).contains(
                "\"id\":" + id);
    }

    @Test
    void scriptsReadAMessageQueueAndRedriveItsDeadLettersAsTheSignedInUser() throws Exception {
        this.messages.createQueue("endpoint-dead", MessageQueueAttributes.defaults(), java.util.Map.of());
        this.messages.createQueue("endpoint-work", MessageQueueAttributes.defaults()
            .withRedrivePolicy(new RedrivePolicy("endpoint-dead", 3)), java.util.Map.of());
        this.messages.send("endpoint-dead", OutgoingMessage.of("{\"order\": 7}"));
        this.messages.send("endpoint-dead", OutgoingMessage.of("{\"order\": 8}"));

        HttpResponse<String> read = send("GET", "/actuator/queues/message-queues/endpoint-dead?limit=5&window=1h", "operator", null);
        assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
        JsonNode queue = JSON.readTree(read.body());
        assertThat(queue.get("visible").asLong()).isEqualTo(2);
        assertThat(queue.get("deadLetterSources").get(0).asString()).isEqualTo("endpoint-work");
        assertThat(queue.get("messages").get(0).get("body").asString()).isEqualTo("{\"order\": 7}");
        assertThat(queue.get("history").get("stepSeconds").asLong()).isEqualTo(60);
        assertThat(send("GET", "/actuator/queues/message-queues/nowhere", "operator", null).statusCode()).isEqualTo(404);
        assertThat(send("GET", "/actuator/queues/message-queues/endpoint-dead?window=2d", "operator", null).statusCode())
            .isEqualTo(400);

        String redrive = "{\"action\":\"redrive\",\"to\":\"endpoint-work\",\"max\":\"1\"}";
        assertThat(send("POST", "/actuator/queues/message-queues/endpoint-dead", "operator", redrive).statusCode())
            .isEqualTo(403);
        HttpResponse<String> moved = send("POST", "/actuator/queues/message-queues/endpoint-dead", "admin", redrive);
        assertThat(moved.statusCode()).as(moved.body()).isEqualTo(200);
        assertThat(JSON.readTree(moved.body()).get("moved").asInt()).isOne();
        assertThat(this.messages.peek("endpoint-work", 10)).extracting(PeekedMessage::body).containsExactly("{\"order\": 7}");
        assertThat(send("POST", "/actuator/queues/message-queues/endpoint-dead", "admin",
                "{\"action\":\"redrive\",\"to\":\"nowhere\"}").statusCode()).isEqualTo(404);
        assertThat(send("POST", "/actuator/queues/message-queues/endpoint-dead", "admin",
                "{\"action\":\"purge\"}").statusCode()).isEqualTo(400);
        JsonNode trail = JSON.readTree(send("GET", "/actuator/queues/actions/latest?limit=1", "operator", null).body());
        assertThat(trail.get("actions").get(0).get("action").asString()).isEqualTo("redrive");
        assertThat(trail.get("actions").get(0).get("actor").asString()).isEqualTo("admin");
    }

    @Test
    void theDoctorReportsEachCheckOfEveryShard() throws Exception {
        HttpResponse<String> doctor = send("GET", "/actuator/queues/doctor", "operator", null);
        assertThat(doctor.statusCode()).as(doctor.body()).isEqualTo(200);
        JsonNode report = JSON.readTree(doctor.body());
        assertThat(report.get("status").asString()).isIn("OK", "WARN", "FAIL");
        assertThat(report.get("checks").get(0).get("check").asString()).isEqualTo("schema");
        assertThat(report.get("checks").get(0).get("status").asString()).isEqualTo("OK");
        assertThat(report.get("checks").get(1).get("check").asString()).isEqualTo("indexes");
        assertThat(send("GET", "/actuator/queues/doctor", null, null).statusCode()).isEqualTo(401);
    }

    @Test
    void aSchedulesPayloadIsJsonWrittenInAStringAndAnObjectIsRefusedSayingSo() throws Exception {
        HttpResponse<String> asObject = send("POST", "/actuator/queues/send-push", "admin",
                "{\"action\":\"schedule\",\"name\":\"hourly\",\"cron\":\"@hourly\",\"payload\":{\"owner\":\"ann\"}}");
        assertThat(asObject.statusCode()).isEqualTo(400);
        assertThat(asObject.body()).contains("Every field of a queues endpoint request body is a string",
                "\"path\":\"/actuator/queues/send-push\"");

        HttpResponse<String> asString = send("POST", "/actuator/queues/send-push", "admin",
                "{\"action\":\"schedule\",\"name\":\"hourly\",\"cron\":\"@hourly\",\"payload\":\"{\\\"owner\\\":\\\"ann\\\"}\"}");
        assertThat(asString.statusCode()).as(asString.body()).isEqualTo(200);
        assertThat(asString.body()).contains("\"payload\":\"{\\\"owner\\\": \\\"ann\\\"}\"");
        assertThat(send("POST", "/actuator/queues/send-push", "admin",
                "{\"action\":\"unschedule\",\"name\":\"hourly\"}").statusCode()).isEqualTo(200);
    }

    @Test
    void scriptsSearchJobsAndActOnEveryMatchRecordedAsTheSignedInUser() throws Exception {
        String tag = "endpoint-" + System.nanoTime();
        for (int i = 0; i < 6; i++) {
            this.queue.enqueue("send-push", new TestHandlers.Push(i < 2 ? "ann" : "bob", "hello " + i),
                    EnqueueOptions.defaults().withTags(tag).withDelay(Duration.ofHours(1)));
        }
        HttpResponse<String> found = send("GET", "/actuator/queues/jobs/SCHEDULED?tag=" + tag
                + "&match=payload.user%3Dann&count=true", "operator", null);
        assertThat(found.statusCode()).as(found.body()).isEqualTo(200);
        JsonNode page = JSON.readTree(found.body());
        assertThat(page.get("count").asLong()).isEqualTo(2);
        assertThat(page.get("jobs")).hasSize(2);
        assertThat(page.get("jobs").get(0).get("tags").get(0).asString()).isEqualTo(tag);
        assertThat(page.get("filter").asString()).isEqualTo("SCHEDULED jobs with payload.user=ann; tag " + tag);

        String bulk = "{\"action\":\"priority\",\"priority\":\"9\",\"tag\":\"" + tag + "\"}";
        assertThat(send("POST", "/actuator/queues/jobs/SCHEDULED", "operator", bulk).statusCode()).isEqualTo(403);
        HttpResponse<String> started = send("POST", "/actuator/queues/jobs/SCHEDULED", "admin", bulk);
        assertThat(started.statusCode()).as(started.body()).isEqualTo(200);
        long id = JSON.readTree(started.body()).get("id").asLong();
        assertThat(JSON.readTree(started.body()).get("matched").asLong()).isEqualTo(6);
        await().atMost(Duration.ofSeconds(20)).until(() -> JSON.readTree(send("GET", "/actuator/queues/actions/" + id,
                "operator", null).body()).get("state").asString().equals("DONE"));
        JsonNode done = JSON.readTree(send("GET", "/actuator/queues/actions/" + id, "operator", null).body());
        assertThat(done.get("acted").asLong()).isEqualTo(6);
        assertThat(done.get("actor").asString()).isEqualTo("admin");

        HttpResponse<String> cancelled = send("POST", "/actuator/queues/jobs/SCHEDULED", "admin",
                "{\"action\":\"cancel\",\"tag\":\"" + tag + "\",\"match\":\"payload.user=bob\\npayload.file=hello 5\"}");
        assertThat(JSON.readTree(cancelled.body()).get("matched").asLong()).as(cancelled.body()).isOne();

        HttpResponse<String> wrongGroup = send("POST", "/actuator/queues/jobs/SCHEDULED", "admin",
                "{\"action\":\"delete\",\"tag\":\"" + tag + "\"}");
        assertThat(wrongGroup.statusCode()).isEqualTo(400);
        assertThat(wrongGroup.body()).contains("not SCHEDULED");
        assertThat(send("GET", "/actuator/queues/jobs/SCHEDULED?match=owner", "operator", null).statusCode()).isEqualTo(400);
        assertThat(send("GET", "/actuator/queues/jobs/NOWHERE", "operator", null).statusCode()).isEqualTo(400);
        assertThat(send("GET", "/actuator/queues/actions/987654321", "operator", null).statusCode()).isEqualTo(404);
        JsonNode trail = JSON.readTree(send("GET", "/actuator/queues/actions/latest?limit=5", "operator", null).body());
        assertThat(trail.get("actions").get(0).get("action").asString()).isEqualTo("cancel");
        assertThat(trail.get("actions").get(0).get("actor").asString()).isEqualTo("admin");
        assertThat(trail.get("actions").get(1).get("id").asLong()).isEqualTo(id);

        HttpResponse<String> history = send("GET", "/actuator/queues/history/24h?task=send-push", "operator", null);
        assertThat(history.statusCode()).as(history.body()).isEqualTo(200);
        assertThat(JSON.readTree(history.body()).get("stepSeconds").asInt()).isEqualTo(60);
        assertThat(send("GET", "/actuator/queues/history/2h", "operator", null).statusCode()).isEqualTo(400);
    }

    private HttpResponse<String> send(String method, String path, String user, String json) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path));
        if (user != null) {
            request.header("Authorization", "Basic " + Base64.getEncoder()
                .encodeToString((user + ":secret").getBytes(StandardCharsets.UTF_8)));
        }
        if (json != null) {
            request.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(json));
        }
        else {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
}
