package io.pgqueue.autoconfigure.console;

import java.net.http.HttpResponse;

import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Isolated;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.ContextConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Without Spring Security and without pgqueue.console.read-only=false, the console shows and
 * refuses every action, at a configured path.
 */
@SpringBootTest(classes = QueueConsoleReadOnlyTests.ReadOnlyApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "pgqueue.console.path=/ops/queue/", "pgqueue.workers.enabled=false",
                "pgqueue.console.allow-unauthenticated=true", QueueConsoleHttpTests.WITHOUT_SECURITY })
@ContextConfiguration(initializers = TestDatabaseInitializer.class)
@ExtendWith(OutputCaptureExtension.class)
@Isolated
class QueueConsoleReadOnlyTests {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(QueueConsoleHttpTests.Fails.class)
    static class ReadOnlyApplication {
    }

    @LocalServerPort
    int port;

    @Test
    void everyActionIsRefusedAndTheOverviewSaysSo() throws Exception {
        ConsoleClient browser = new ConsoleClient(this.port);
        assertThat(browser.get("/ops/queue/").statusCode()).isEqualTo(200);
        assertThat(browser.get("/pgqueue/").statusCode()).isEqualTo(404);
        assertThat(ConsoleClient.json(browser.get("/ops/queue/api/overview")).get("readOnly").asBoolean()).isTrue();

        for (String action : new String[] { "tasks/fails/pause", "tasks/fails/rerun-failed", "rescue", "jobs/1/cancel",
            "bulk?state=READY&action=cancel" }) {
            HttpResponse<String> refused = browser.act("/ops/queue/api/" + action);
            assertThat(refused.statusCode()).as(action).isEqualTo(403);
            assertThat(ConsoleClient.json(refused).get("detail").asString()).as(action)
                .startsWith("The console is read-only");
        }
        assertThat(ConsoleClient.json(browser.get("/ops/queue/api/overview")).get("tasks").toString())
            .doesNotContain("\"paused\":true");
    }

    @Test
    void theStartWarnsThatNothingProtectsIt(CapturedOutput output) {
        assertThat(output.getAll()).contains("The pgqueue console at /ops/queue/ has no Spring Security to protect it")
            .contains("it is read-only");
    }
}
