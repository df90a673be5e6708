package io.pgqueue.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.pgqueue.JobPage;
import io.pgqueue.JobQuery;
import io.pgqueue.QueueAdmin;
import io.pgqueue.message.MessageQueueAttributes;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.message.OutgoingMessage;
import io.pgqueue.message.PeekedMessage;
import io.pgqueue.message.ReceiveRequest;
import io.pgqueue.message.RedrivePolicy;
import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The web console of the running sample application in a real browser (headless Chromium driven
 * by Selenium): a failed thumbnail is seen, re-run and seen complete, a task is paused and seen
 * paused. Each page's screenshot is written to {@code target/console-screenshots/}. Skipped, with
 * the reason, where Debian's {@code chromium} and {@code chromium-driver} are not installed.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "sample.embedded-postgres.enabled=false", "sample.images.fail-first=1", "sample.images.failure-rate=0",
        "pgqueue.tasks.generate-thumbnail.max-attempts=1",
        "pgqueue.poll-interval=200ms", "pgqueue.stats.interval=500ms" })
@ContextConfiguration(initializers = TestDatabaseInitializer.class)
@AutoConfigureRestTestClient
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleBrowserTests {

    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");

    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");

    private static final Path SCREENSHOTS = Path.of("target", "console-screenshots");

    private static WebDriver browser;

    @LocalServerPort
    int port;

    @Autowired
    RestTestClient http;

    @Autowired
    QueueAdmin admin;

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    MessageQueues messages;

    @BeforeAll
    static void startBrowser() throws IOException {
        Assumptions.assumeTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
                "No browser to drive: install Debian's chromium and chromium-driver (/usr/bin/chromium, "
                        + "/usr/bin/chromedriver), as .ci/run does, to run the console's browser test");
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--window-size=1400,1000");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile())
            .usingAnyFreePort().build();
        browser = new ChromeDriver(service, options);
        Files.createDirectories(SCREENSHOTS);
    }

    @AfterAll
    static void stopBrowser() {
        if (browser != null) {
            browser.quit();
        }
    }

    /** Signs in on the sample's sign-in page as its admin, whose session the console accepts (SampleSecurity). */
    @BeforeEach
    void signIn() {
        browser.get("http://127.0.0.1:" + this.port + "/login");
        waitFor(By.name("username")).sendKeys("admin");
        browser.findElement(By.name("password")).sendKeys("admin-secret");
        browser.findElement(By.cssSelector("button[type='submit']")).click();
        wait(Duration.ofSeconds(10)).until(driver -> driver.getCurrentUrl().contains("/pgqueue/"));
    }

    @Test
    void aFailedJobIsSeenRerunAndSeenComplete() throws IOException {
        upload("cat.jpg");
        await().atMost(Duration.ofSeconds(30)).until(() -> failedThumbnails().size() == 1);
        long id = failedThumbnails().get(0).id();

        open("#/overview");
        WebElement thumbnails = waitFor(By.cssSelector("tr[data-task='generate-thumbnail']"));
        wait(Duration.ofSeconds(10)).until(driver -> thumbnails.findElement(By.cssSelector("[data-field='failed']"))
            .getText().trim().equals("1"));
        waitFor(By.cssSelector("svg[data-test='history-chart']"));

        browser.findElement(By.cssSelector("a[data-test='nav-jobs']")).click();
        open("#/jobs?state=FAILED&task=generate-thumbnail");
        WebElement row = waitFor(By.cssSelector("tr[data-job-id='" + id + "']"));
        assertThat(row.findElement(By.cssSelector("[data-field='state']")).getText()).isEqualTo("FAILED");
        assertThat(row.getText()).contains("image service timed out");
        assertThat(row.findElement(By.cssSelector("[data-field='tags']")).getText()).as("the task's tag").isEqualTo("media");
        screenshot("jobs");

        row.findElement(By.cssSelector("a[data-test='job-link']")).click();
        WebElement detail = waitFor(By.cssSelector("[data-test='job-detail']"));
        assertThat(detail.findElement(By.cssSelector("[data-field='state']")).getText()).isEqualTo("FAILED");
        assertThat(detail.findElement(By.cssSelector("pre[data-field='lastError']")).getText())
            .contains("java.lang.IllegalStateException: image service timed out").contains("at io.pgqueue.sample");
        assertThat(detail.findElement(By.cssSelector("pre[data-field='payload']")).getText()).contains("\"fileId\"");
        // The thumbnail task keeps a history: its one attempt, with the line its handler logged.
        WebElement attempt = detail.findElement(By.cssSelector("[data-test='attempt-table'] tr[data-attempt='1']"));
        assertThat(attempt.getText()).contains("FAILED").contains("image service timed out");
        assertThat(attempt.findElement(By.cssSelector("pre[data-field='log']")).getText()).contains("INFO Rendering ");
        screenshot("job-failed");

        detail.findElement(By.cssSelector("button[data-action='rerun']")).click();
        WebElement confirm = waitFor(By.cssSelector("dialog[data-test='confirm']"));
        wait(Duration.ofSeconds(5)).until(ExpectedConditions.visibilityOf(confirm));
        screenshot("confirm");
        confirm.findElement(By.cssSelector("[data-test='confirm-ok']")).click();

        wait(Duration.ofSeconds(30)).until(driver -> driver.findElement(
                By.cssSelector("[data-test='job-detail'] [data-field='state']")).getText().equals("COMPLETED"));
        wait(Duration.ofSeconds(5)).until(driver -> driver.findElements(
                By.cssSelector("[data-test='attempt-table'] tbody tr")).size() == 2);
        assertThat(browser.findElement(By.cssSelector("[data-test='message']")).getText())
            .contains("Job " + id + " is queued again");
        screenshot("job-completed");
        assertThat(this.admin.job(id).orElseThrow().state().name()).isEqualTo("COMPLETED");

        open("#/jobs?state=COMPLETED&task=send-push&tag=owner:ann");
        wait(Duration.ofSeconds(20)).until(driver -> !driver.findElements(By.cssSelector("[data-test='job-table'] "
                + "[data-field='tags']")).isEmpty() || reloaded(driver));
        assertThat(browser.findElement(By.cssSelector("[data-test='job-table'] [data-field='tags']")).getText())
            .as("the upload's push, tagged with its owner").isEqualTo("owner:ann");

        // The overview once its chart has its first minute (a few seconds after the start).
        open("#/overview");
        wait(Duration.ofSeconds(20)).until(driver -> !driver.findElement(By.cssSelector("svg[data-test='history-chart']"))
            .getText().contains("No history yet"));
        screenshot("overview");

        // The upload's workflow: thumbnail and scan, then publish after both.
        browser.findElement(By.cssSelector("a[data-test='nav-workflows']")).click();
        waitFor(By.cssSelector("[data-test='workflow-table'] a[data-test='workflow-link']")).click();
        WebElement graph = waitFor(By.cssSelector("svg[data-test='workflow-graph']"));
        assertThat(graph.findElements(By.cssSelector("a[data-step]"))).hasSize(3);
        assertThat(browser.findElement(By.cssSelector("[data-test='step-table'] tr[data-step='publish']")).getText())
            .contains("thumbnail, scan");
        screenshot("workflow");

        // The history the queue keeps: a day of minutes, with the failed and the completed thumbnail.
        open("#/history?window=24h&task=generate-thumbnail");
        wait(Duration.ofSeconds(30)).until(driver -> driver.findElement(By.cssSelector("[data-test='history-totals']"))
            .getText().matches("[1-9][0-9]* completed, [1-9][0-9]* failed, .*") || reloaded(driver));
        waitFor(By.cssSelector("svg[data-test='history-run'] rect.bar-completed"));
        screenshot("history");
    }

    @Test
    void aPausedTaskIsSeenPausedAndResumed() throws IOException {
        open("#/overview");
        WebElement push = waitFor(By.cssSelector("tr[data-task='send-push']"));
        assertThat(push.findElement(By.cssSelector("[data-field='paused']")).getText()).isEqualTo("running");
        push.findElement(By.cssSelector("button[data-action='pause']")).click();
        waitFor(By.cssSelector("dialog[data-test='confirm'] [data-test='confirm-ok']")).click();

        wait(Duration.ofSeconds(10)).until(driver -> driver.findElement(
                By.cssSelector("tr[data-task='send-push'] [data-field='paused']")).getText().equals("paused"));
        assertThat(this.admin.knownTasks()).contains("send-push");
        screenshot("paused");

        browser.findElement(By.cssSelector("tr[data-task='send-push'] button[data-action='resume']")).click();
        waitFor(By.cssSelector("dialog[data-test='confirm'] [data-test='confirm-ok']")).click();
        wait(Duration.ofSeconds(10)).until(driver -> driver.findElement(
                By.cssSelector("tr[data-task='send-push'] [data-field='paused']")).getText().equals("running"));
    }

    /**
     * A million scheduled jobs, a tenth of them tagged: a search inside their payloads finds one,
     * and a bulk cancel of every tagged one states its count first and shows its progress to the end.
     */
    @Test
    @Order(Integer.MAX_VALUE)
    void aSearchOverAMillionJobsAndABulkCancelOfAHundredThousandShowTheirCountAndProgress() throws IOException {
        this.jdbc.update("""
                INSERT INTO pgqueue.job (task, payload, headers, schedule_time, max_attempts)
                SELECT 'send-push', jsonb_build_object('customer', n, 'text', 'Your order ' || n || ' shipped'),
                       CASE WHEN n % 10 = 0 THEN '{"pgqueue.tags": "campaign-7"}'::jsonb ELSE '{}'::jsonb END,
                       now() + interval '1 year', 3
                FROM generate_series(1, 1000000) AS n
                """);
        this.jdbc.execute("ANALYZE pgqueue.job");

        open("#/jobs?state=SCHEDULED&match=payload.customer%3D424242");
        WebElement found = wait(Duration.ofSeconds(60)).until(ExpectedConditions.visibilityOfElementLocated(
                By.cssSelector("[data-test='job-table'] tbody tr")));
        assertThat(browser.findElements(By.cssSelector("[data-test='job-table'] tbody tr"))).hasSize(1);
        assertThat(browser.findElement(By.cssSelector("[data-test='filter-match'] ")).getAttribute("value"))
            .isEqualTo("payload.customer=424242");
        long match = Long.parseLong(found.getAttribute("data-job-id"));
        assertThat(this.admin.job(match).orElseThrow().payload()).contains("\"customer\": 424242");
        screenshot("search");

        open("#/jobs?state=SCHEDULED&tag=campaign-7");
        WebElement tagged = waitFor(By.cssSelector("[data-test='job-table'] tbody tr"));
        assertThat(tagged.findElement(By.cssSelector("[data-field='tags']")).getText()).isEqualTo("campaign-7");
        waitFor(By.cssSelector("[data-test='bulk-bar'] [data-test='bulk-all']")).click();
        WebElement confirm = waitFor(By.cssSelector("dialog[data-test='confirm']"));
        assertThat(browser.findElement(By.id("confirm-text")).getText())
            .startsWith("Cancel 100,000 SCHEDULED jobs (SCHEDULED jobs with tag campaign-7)?");
        screenshot("bulk-confirm");
        confirm.findElement(By.cssSelector("[data-test='confirm-ok']")).click();

        WebElement progress = waitFor(By.cssSelector("[data-test='action-progress']"));
        assertThat(progress.getText()).contains("of 100,000 matching jobs handled");
        screenshot("bulk-progress");
        wait(Duration.ofSeconds(180)).until(driver -> driver.findElement(By.cssSelector("[data-test='action-progress']"))
            .getText().startsWith("100,000 of 100,000 matching jobs handled: 100,000 changed, 0 skipped"));
        assertThat(browser.findElement(By.cssSelector("[data-test='action-page'] [data-field='actor']")).getText())
            .isEqualTo("admin");
        screenshot("bulk-done");
        assertThat(this.jdbc.queryForObject("SELECT count(*) FROM pgqueue.job_finished WHERE state = 'CANCELLED' "
                + "AND headers ->> 'pgqueue.tags' = 'campaign-7'", Long.class)).isEqualTo(100_000);
        assertThat(this.jdbc.queryForObject("SELECT count(*) FROM pgqueue.job WHERE task = 'send-push'", Long.class))
            .isEqualTo(900_000);

        browser.findElement(By.cssSelector("a[data-test='nav-actions']")).click();
        WebElement row = waitFor(By.cssSelector("[data-test='action-table'] tbody tr"));
        assertThat(row.getText()).contains("admin").contains("cancel").contains("DONE").contains("100,000");
        screenshot("actions");
        this.jdbc.update("DELETE FROM pgqueue.job WHERE task = 'send-push' AND schedule_time > now() + interval '300 days'");
        this.jdbc.update("DELETE FROM pgqueue.job_finished WHERE headers ->> 'pgqueue.tags' = 'campaign-7'");
        this.jdbc.execute("VACUUM ANALYZE pgqueue.job");
        this.jdbc.execute("VACUUM ANALYZE pgqueue.job_finished");
    }

    /** Reloads the page (a list filled after it was read shows on the next read) and says it did not find it yet. */
    private static boolean reloaded(WebDriver driver) {
        driver.navigate().refresh();
        return false;
    }

    @Test
    void messageQueuesAreSeenWithTheirCountsDeadLetterQueueAndMessages() throws IOException {
        this.messages.createQueue("orders-dead", MessageQueueAttributes.defaults(), Map.of());
        this.messages.createQueue("orders", MessageQueueAttributes.defaults()
            .withRedrivePolicy(new RedrivePolicy("orders-dead", 5)), Map.of());
        this.messages.send("orders", OutgoingMessage.of("{\"order\": 1041, \"total\": 18.5}"));
        this.messages.send("orders", OutgoingMessage.of("{\"order\": 1042, \"total\": 7}"));
        this.messages.receive("orders", ReceiveRequest.of(1).withWaitTime(Duration.ZERO));

        open("#/queues");
        WebElement row = waitFor(By.cssSelector("[data-test='queue-table'] tr[data-queue='orders']"));
        assertThat(row.getText()).contains("orders-dead");
        screenshot("queues");
        row.findElement(By.cssSelector("a[data-test='queue-link']")).click();
        waitFor(By.cssSelector("[data-test='message-table']"));
        assertThat(browser.findElements(By.cssSelector("[data-test='message-table'] tbody tr"))).hasSize(2);
        assertThat(browser.findElement(By.cssSelector("[data-test='message-table'] tbody tr [data-field='state']")).getText())
            .isEqualTo("in flight");
        assertThat(browser.findElement(By.cssSelector("[data-test='message-table']")).getText()).contains("\"order\": 1042");
        // What was done with the queue, per minute: every node adds its counts every 10 s.
        waitFor(By.cssSelector("[data-test='queue-window-1h']")).click();
        wait(Duration.ofSeconds(40)).until(driver -> driver.getCurrentUrl().endsWith("?window=1h")
                && driver.findElement(By.cssSelector("[data-test='queue-history-totals']")).getText()
                    .startsWith("2 sent, 1 received, 0 deleted") || reloaded(driver));
        assertThat(browser.findElements(By.cssSelector("[data-test='queue-history-chart'] .bar-sent"))).isNotEmpty();
        screenshot("queue");
        assertThat(this.messages.counts("orders").visible()).as("peeking received nothing").isOne();

        // A dead letter goes back to its source from the dead-letter queue's page.
        this.messages.send("orders-dead", OutgoingMessage.of("{\"order\": 1040}"));
        open("#/queues/orders-dead");
        waitFor(By.cssSelector("[data-test='redrive-form'] [data-test='redrive']")).click();
        waitFor(By.cssSelector("dialog[data-test='confirm'] [data-test='confirm-ok']")).click();
        wait(Duration.ofSeconds(10)).until(driver -> driver.findElement(By.cssSelector("[data-test='message']")).getText()
            .equals("Moved 1 message from orders-dead to orders"));
        assertThat(this.messages.counts("orders-dead").visible()).isZero();
        assertThat(this.messages.peek("orders", 10)).extracting(PeekedMessage::body).contains("{\"order\": 1040}");
    }

    @Test
    void aDurableOrderFlowShowsItsStepsAndWhatItWaitsFor() throws IOException {
        Map<?, ?> placed = this.http.post().uri("/orders").contentType(MediaType.APPLICATION_JSON)
            .body(Map.of("owner", "ann", "amountCents", 4200)).exchange().expectStatus().isCreated()
            .returnResult(Map.class).getResponseBody();
        long orderId = ((Number) placed.get("orderId")).longValue();
        long jobId = ((Number) placed.get("jobId")).longValue();

        open("#/jobs/" + jobId);
        WebElement waiting = wait(Duration.ofSeconds(20)).until(driver -> {
            List<WebElement> rows = driver.findElements(By.cssSelector("[data-test='step-table'] tr[data-step='signal:shipped']"));
            return !rows.isEmpty() && rows.get(0).getText().contains("waiting until") ? rows.get(0) : null;
        });
        assertThat(waiting.getText()).contains("SIGNAL");
        assertThat(browser.findElement(By.cssSelector("[data-test='step-table'] tr[data-step='charge']")).getText())
            .contains("STEP");
        screenshot("job-steps-waiting");

        this.http.post().uri("/orders/" + orderId + "/shipped").contentType(MediaType.APPLICATION_JSON)
            .body(Map.of("carrier", "ups")).exchange().expectStatus().isOk();
        WebElement sleeping = wait(Duration.ofSeconds(20)).until(driver -> {
            List<WebElement> rows = driver.findElements(By.cssSelector("[data-test='step-table'] tr[data-step='before-follow-up']"));
            return !rows.isEmpty() ? rows.get(0) : null;
        });
        assertThat(sleeping.getText()).contains("SLEEP").contains("until");
        assertThat(browser.findElement(By.cssSelector("[data-test='step-table'] tr[data-step='signal:shipped']")).getText())
            .contains("RECEIVED").contains("\"ups\"");
        screenshot("job-steps-sleeping");
    }

    private List<JobPage.Job> failedThumbnails() {
        return this.admin.jobs(JobQuery.of(JobQuery.Group.FAILED).withTask("generate-thumbnail")).jobs();
    }

    private void upload(String name) {
        this.http.post().uri("/files").contentType(MediaType.APPLICATION_JSON)
            .body(Map.of("owner", "ann", "folder", "inbox", "name", name, "sizeBytes", 2048))
            .exchange().expectStatus().is2xxSuccessful();
    }

    private void open(String route) {
        browser.get("http://127.0.0.1:" + this.port + "/pgqueue/" + route);
    }

    private static WebElement waitFor(By selector) {
        return wait(Duration.ofSeconds(15)).until(ExpectedConditions.visibilityOfElementLocated(selector));
    }

    private static WebDriverWait wait(Duration timeout) {
        return new WebDriverWait(browser, timeout);
    }

    private static void screenshot(String name) throws IOException {
        byte[] png = ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES);
        Files.write(SCREENSHOTS.resolve("console-" + name + ".png"), png);
    }
}
