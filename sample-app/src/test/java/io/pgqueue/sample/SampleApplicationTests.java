package io.pgqueue.sample;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.pgqueue.QueueTask;
import io.pgqueue.autoconfigure.QueueTaskBindings;
import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.ContextConfiguration;
import org.springframework.test.web.servlet.client.RestTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample application over HTTP, with its queue on a real PostgreSQL: every endpoint's
 * background work runs to its end.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "sample.embedded-postgres.enabled=false", "sample.images.fail-first=2", "sample.images.failure-rate=0",
        "pgqueue.poll-interval=200ms", "sample.orders.follow-up-delay=1s" })
@ContextConfiguration(initializers = TestDatabaseInitializer.class)
@AutoConfigureRestTestClient
class SampleApplicationTests {

    private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {
    };

    @Autowired
    RestTestClient http;

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    QueueTaskBindings bindings;

    @LocalServerPort
    int port;

    /** Signed in as the sample's admin (SampleSecurity), who may read and write the queue. */
    @BeforeEach
    void signIn() {
        this.http = this.http.mutate().defaultHeaders(headers -> headers.setBasicAuth("admin", "admin-secret")).build();
    }

    @Test
    void theQueueIsSeenAndChangedOnlyByItsSignedInRoles() {
        RestTestClient anonymous = RestTestClient.bindToServer().baseUrl("http://127.0.0.1:" + this.port).build();
        RestTestClient operator = this.http.mutate()
            .defaultHeaders(headers -> headers.setBasicAuth("operator", "operator-secret")).build();

        anonymous.get().uri("/actuator/queues").exchange().expectStatus().isUnauthorized();
        anonymous.get().uri("/pgqueue/api/overview").exchange().expectStatus().isUnauthorized();
        anonymous.post().uri("/actuator/queues/copy-folder").contentType(MediaType.APPLICATION_JSON)
            .body(Map.of("action", "pause")).exchange().expectStatus().isUnauthorized();
        anonymous.get().uri("/actuator/health").exchange().expectStatus().isOk();
        operator.get().uri("/actuator/queues").exchange().expectStatus().isOk();
        operator.post().uri("/actuator/queues/copy-folder").contentType(MediaType.APPLICATION_JSON)
            .body(Map.of("action", "pause")).exchange().expectStatus().isForbidden();
        operator.get().uri("/pgqueue/api/overview").exchange().expectStatus().isOk().expectBody(Map.class)
            .value(overview -> assertThat(overview).as("the console's viewer: read-only, without job data")
                .containsEntry("readOnly", true).containsEntry("jobData", false));
        operator.post().uri("/pgqueue/api/rescue").header("X-PgQueue-Console", "1").exchange().expectStatus()
            .isForbidden();
        this.http.get().uri("/pgqueue/api/overview").exchange().expectStatus().isOk();
        assertThat(map(get("/actuator/queues").get("tasks")).get("copy-folder").toString())
            .as("nothing paused by the refused writes").contains("paused=false");
        // The SQS API answers with its own (signature) error, not the security chain's 401.
        anonymous.post().uri("/sqs/").contentType(MediaType.APPLICATION_FORM_URLENCODED).body("Action=ListQueues")
            .exchange().expectStatus().isForbidden().expectBody(String.class)
            .value(body -> assertThat(body).contains("MissingAuthenticationToken"));
    }

    @Test
    void aScanRequestAwaitsItsJobsResultAndTheEndpointShowsIt() {
        long clean = ((Number) post("/files", Map.of("owner", "eve", "folder", "inbox", "name", "notes.txt",
                "sizeBytes", 10)).get("fileId")).longValue();
        long infected = ((Number) post("/files", Map.of("owner", "eve", "folder", "inbox", "name", "setup.exe",
                "sizeBytes", 10)).get("fileId")).longValue();

        Map<String, Object> verdict = post("/files/" + clean + "/scan", null);
        assertThat(verdict).containsEntry("clean", true);
        assertThat(post("/files/" + infected + "/scan", null)).containsEntry("clean", false);

        long jobId = ((Number) verdict.get("jobId")).longValue();
        assertThat(post("/files/" + clean + "/scan", null)).as("scanned once per ten minutes: the same scan answers")
            .containsEntry("jobId", verdict.get("jobId")).containsEntry("clean", true);
        Map<String, Object> job = get("/actuator/queues/scan-file/" + jobId);
        assertThat(job).containsEntry("state", "COMPLETED").containsEntry("result", "{\"clean\": true}")
            .containsEntry("payload", "{\"fileId\": " + clean + "}");
        this.http.get().uri("/actuator/queues/send-push/" + jobId).exchange().expectStatus().isNotFound();
        this.http.get().uri("/pgqueue/api/jobs/" + jobId).exchange().expectStatus().isOk().expectBody(JSON)
            .value(body -> assertThat(body).containsEntry("result", "{\"clean\": true}"));
    }

    @Test
    void aPushToAUserInQuietHoursSnoozesUntilTheyEndWithoutSpendingAnAttempt() {
        post("/users/quinn/quiet?duration=PT2S", null);
        long push = jobOf(map(post("/files", Map.of("owner", "quinn", "folder", "inbox", "name", "a.txt",
                "sizeBytes", 1)).get("jobs")), "push");

        await().atMost(Duration.ofSeconds(5)).until(() -> "READY".equals(jobState(push))
                && this.jdbc.queryForObject("SELECT count(*) FROM pgqueue.job WHERE id = ? AND schedule_time > now()",
                        Long.class, push) == 1);
        assertThat(this.jdbc.queryForObject("SELECT count(*) FROM notification WHERE owner = 'quinn'", Long.class))
            .isZero();
        await().atMost(Duration.ofSeconds(20)).until(() -> "COMPLETED".equals(jobState(push)));
        assertThat(job(push).get("attempt")).as("the snoozes spent no attempt").isEqualTo(1);
        assertThat(this.jdbc.queryForObject("SELECT count(*) FROM notification WHERE owner = 'quinn'", Long.class))
            .isEqualTo(1);
    }

    @Test
    void theRequestIdOfAnUploadTravelsWithItsJobs() {
        Map<String, Object> created = this.http.post().uri("/files").contentType(MediaType.APPLICATION_JSON)
            .header("X-Request-Id", "req-upload-1")
            .body(Map.of("owner", "rita", "folder", "inbox", "name", "r.txt", "sizeBytes", 1)).exchange()
            .expectStatus().isCreated().expectHeader().valueEquals("X-Request-Id", "req-upload-1")
            .expectBody(JSON).returnResult().getResponseBody();
        long push = jobOf(map(created.get("jobs")), "push");

        await().atMost(Duration.ofSeconds(20)).until(() -> "COMPLETED".equals(jobState(push)));
        assertThat(this.jdbc.queryForObject("SELECT headers->>'mdc.requestId' FROM pgqueue.job_finished WHERE id = ?",
                String.class, push)).isEqualTo("req-upload-1");
        assertThat(this.jdbc.queryForObject("SELECT headers->>'pgqueue.principal' FROM pgqueue.job_finished WHERE id = ?",
                String.class, push)).as("the job runs as the signed-in user").isEqualTo("admin");
        this.http.get().uri("/jobs/" + push).header("X-Request-Id", "bad id with spaces").exchange()
            .expectHeader().value("X-Request-Id", id -> assertThat(id).isNotEqualTo("bad id with spaces").hasSize(36));
    }

    @Test
    void aFoldersFilesAreIndexedInChunks() {
        post("/folders/library/seed?owner=ivy&count=300", null);

        assertThat(post("/folders/library/index?owner=ivy", null)).containsEntry("jobs", 300);

        await().atMost(Duration.ofSeconds(30)).until(() -> this.jdbc.queryForObject(
                "SELECT count(*) FROM file WHERE owner = 'ivy' AND folder = 'library' AND indexed_at IS NOT NULL", Long.class) == 300);
        assertThat(this.jdbc.queryForObject("SELECT max(index_chunk) FROM file WHERE owner = 'ivy'", Integer.class))
            .as("the files went to the handler in chunks").isBetween(2, 20);
    }

    @Test
    void anUploadNotifiesRendersAThumbnailAfterRetriesAndSyncs() {
        Map<String, Object> created = post("/files", Map.of("owner", "ann", "folder", "inbox", "name", "cat.jpg",
                "sizeBytes", 2048));

        Map<String, Object> jobs = map(created.get("jobs"));
        Map<String, Object> workflow = map(created.get("workflow"));
        long thumbnail = ((Number) map(workflow.get("jobs")).get("thumbnail")).longValue();
        await().atMost(Duration.ofSeconds(20)).until(() -> "COMPLETED".equals(jobState(jobOf(jobs, "push"))));
        await().atMost(Duration.ofSeconds(30)).until(() -> "COMPLETED".equals(workflowState(workflow)));
        assertThat(job(thumbnail).get("attempt")).isEqualTo(3);
        Map<String, Object> shownThumbnail = get("/actuator/queues/generate-thumbnail/" + thumbnail);
        assertThat((List<?>) shownThumbnail.get("attempts")).extracting(each -> map(each).get("outcome"))
            .containsExactly("RETRY", "RETRY", "COMPLETED");
        assertThat(map(((List<?>) shownThumbnail.get("attempts")).get(0)).get("log").toString())
            .contains("Rendering cat.jpg (file ");
        this.http.get().uri("/pgqueue/api/jobs/" + thumbnail).exchange().expectStatus().isOk().expectBody(JSON)
            .value(body -> assertThat((List<?>) body.get("attempts")).hasSize(3));
        long fileId = ((Number) created.get("fileId")).longValue();
        assertThat(this.jdbc.queryForObject("SELECT thumbnail FROM file WHERE id = ?", String.class, fileId))
            .isEqualTo("thumb-cat.jpg.webp");
        assertThat(this.jdbc.queryForObject("SELECT published_at IS NOT NULL FROM file WHERE id = ?", Boolean.class,
                fileId)).as("published after the thumbnail and the scan").isTrue();
        Map<String, Object> shown = this.http.get().uri("/actuator/queues/workflows/" + workflow.get("id")).exchange()
            .expectBody(JSON).returnResult().getResponseBody();
        assertThat(shown).containsEntry("name", "upload").containsEntry("completed", 3);
        assertThat((List<?>) shown.get("jobs")).extracting(each -> map(each).get("step"), each -> map(each).get("state"))
            .containsExactly(org.assertj.core.groups.Tuple.tuple("thumbnail", "COMPLETED"),
                    org.assertj.core.groups.Tuple.tuple("scan", "COMPLETED"),
                    org.assertj.core.groups.Tuple.tuple("publish", "COMPLETED"));
        assertThat(this.jdbc.queryForObject("SELECT count(*) FROM notification WHERE owner = 'ann'", Long.class))
            .isEqualTo(1);
    }

    @Test
    void aFolderCopyReportsProgressUntilDone() {
        this.http.post().uri("/folders/photos/seed?owner=bob&count=2000").exchange().expectStatus().isCreated();

        long job = ((Number) post("/folders/photos/copy?owner=bob&to=backup", null).get("jobId")).longValue();

        await().atMost(Duration.ofSeconds(30)).until(() -> "COMPLETED".equals(jobState(job)));
        assertThat(job(job).get("progress")).isEqualTo("2000 of 2000 files copied");
        assertThat(this.jdbc.queryForObject("SELECT count(*) FROM file WHERE owner = 'bob' AND folder = 'backup'",
                Long.class)).isEqualTo(2000);
    }

    @Test
    void aMemoryIsPublishedWhenItsTimeComes() {
        Map<String, Object> created = post("/memories", Map.of("owner", "cid", "title", "Summer 2019", "publishIn", "PT1S"));
        long job = ((Number) map(created.get("job")).get("jobId")).longValue();
        assertThat(jobState(job)).isEqualTo("READY");

        await().atMost(Duration.ofSeconds(20)).until(() -> "COMPLETED".equals(jobState(job)));
        assertThat(this.jdbc.queryForObject("SELECT published_at IS NOT NULL FROM memory WHERE owner = 'cid'",
                Boolean.class)).isTrue();
        await().atMost(Duration.ofSeconds(20)).until(() -> this.jdbc.queryForObject(
                "SELECT count(*) FROM notification WHERE owner = 'cid'", Long.class) == 1);
    }

    @Test
    void aBurstOfChangesSyncsTwiceAndEndsWithTheLastChange() {
        // Unsigned, so the burst is not slowed by checking a password per request.
        RestTestClient anonymous = RestTestClient.bindToServer().baseUrl("http://127.0.0.1:" + this.port).build();
        for (int i = 1; i <= 20; i++) {
            anonymous.post().uri("/users/dan/changes?change=c" + i).exchange().expectStatus().isAccepted();
        }

        await().atMost(Duration.ofSeconds(30)).until(() -> "c20".equals(this.jdbc.query(
                "SELECT last_seen FROM device_sync WHERE owner = 'dan'", rs -> rs.next() ? rs.getString(1) : null)));
        assertThat(this.jdbc.queryForObject("SELECT runs FROM device_sync WHERE owner = 'dan'", Integer.class))
            .isBetween(1, 3);
        // What changed is stored encrypted (no field of the payload in clear; the ciphertext is base64,
        // which holds no quote); the admin reads it through the endpoint.
        List<Map<String, Object>> stored = this.jdbc.queryForList("SELECT id, payload::text AS payload FROM pgqueue.job "
                + "WHERE dedup_key = 'dan' UNION ALL SELECT id, payload::text FROM pgqueue.job_finished WHERE dedup_key = 'dan'");
        assertThat(stored).isNotEmpty().allSatisfy(row -> assertThat((String) row.get("payload"))
            .startsWith("{\"pgqueue.encrypted\"").doesNotContain("\"owner\"").doesNotContain("\"change\""));
        assertThat(get("/actuator/queues/sync-devices/" + stored.get(0).get("id")).get("payload").toString())
            .contains("\"owner\":\"dan\"");
    }

    @Test
    void anUploadIsCountedFromItsEventAndEveryHundredthSendsAPushEnqueuedFromSql() {
        this.jdbc.update("INSERT INTO upload_stats (owner, uploads) VALUES ('gil', 98)");
        post("/files", Map.of("owner", "gil", "folder", "inbox", "name", "a.txt", "sizeBytes", 1));
        await().atMost(Duration.ofSeconds(20)).until(() -> this.jdbc.queryForObject(
                "SELECT uploads FROM upload_stats WHERE owner = 'gil'", Integer.class) == 99);
        assertThat(notifications("gil")).doesNotContain("You uploaded 100 files");

        post("/files", Map.of("owner", "gil", "folder", "inbox", "name", "b.txt", "sizeBytes", 1));
        await().atMost(Duration.ofSeconds(20)).until(() -> notifications("gil").contains("You uploaded 100 files"));
        assertThat(this.jdbc.queryForObject("SELECT count(*) FROM pgqueue.job_finished WHERE task = 'send-push' "
                + "AND dedup_key = 'milestone-gil-100'", Long.class)).isOne();
    }

    private List<String> notifications(String owner) {
        return this.jdbc.queryForList("SELECT message FROM notification WHERE owner = ?", String.class, owner);
    }

    @Test
    void badInputIsABadRequestAndWritesNothing() {
        this.http.post().uri("/memories").contentType(MediaType.APPLICATION_JSON)
            .body(Map.of("owner", "eve", "title", "x", "publishIn", "tomorrow"))
            .exchange()
            .expectStatus().isBadRequest();
        assertThat(this.jdbc.queryForObject("SELECT count(*) FROM memory WHERE owner = 'eve'", Long.class)).isZero();
    }

    @Test
    void queuesEndpointOverHttp() {
        Map<String, Object> created = post("/files", Map.of("owner", "fay", "folder", "inbox", "name", "dog.jpg",
                "sizeBytes", 10));
        long push = jobOf(map(created.get("jobs")), "push");
        await().atMost(Duration.ofSeconds(20)).until(() -> "COMPLETED".equals(jobState(push)));

        Map<String, Object> queues = get("/actuator/queues");
        assertThat(map(queues.get("tasks"))).containsKeys("send-push", "copy-folder", "generate-thumbnail", "sync-devices",
                "publish-memory");
        assertThat(map(map(map(queues.get("tasks")).get("send-push")).get("settings"))).containsEntry("concurrency", 8)
            .containsEntry("delayTolerance", "PT1S");
        assertThat(map(map(map(queues.get("tasks")).get("copy-folder")).get("limits"))).containsEntry("groups", "FAIR")
            .containsEntry("groupConcurrency", 1);
        assertThat(map(map(map(queues.get("tasks")).get("generate-thumbnail")).get("limits")))
            .containsEntry("globalConcurrency", 8);
        assertThat((List<?>) queues.get("schedules")).singleElement().satisfies(schedule -> {
            assertThat(map(schedule)).containsEntry("name", "empty-trash").containsEntry("cron", "0 0 3 * * *")
                .containsEntry("configured", true);
            assertThat(Instant.parse((String) map(schedule).get("nextFire")).atZone(ZoneId.of("Europe/Amsterdam")).getHour())
                .isEqualTo(3);
        });
        assertThat(map(queues.get("pools"))).containsKeys("default", "slow");
        // Each node's pools as JSON: its tasks and the most jobs it holds per pool.
        assertThat((List<?>) queues.get("nodes")).singleElement().satisfies(node -> {
            assertThat(map(node)).containsKeys("id", "host", "startedAt", "lastHeartbeat");
            assertThat(map(map(map(node).get("pools")).get("slow"))).containsKeys("tasks", "capacity");
        });
        assertThat(get("/actuator/queues/send-push")).containsKeys("counts", "recentFailures", "stuckLeases");

        Map<String, Object> paused = this.http.post().uri("/actuator/queues/copy-folder")
            .contentType(MediaType.APPLICATION_JSON).body(Map.of("action", "pause"))
            .exchange().expectStatus().isOk().expectBody(JSON).returnResult().getResponseBody();
        assertThat(paused).containsEntry("changed", true);
        this.http.post().uri("/actuator/queues/copy-folder").contentType(MediaType.APPLICATION_JSON)
            .body(Map.of("action", "resume")).exchange().expectStatus().isOk();
        assertThat(rejected("/actuator/queues/no-such-task", Map.of("action", "pause"), HttpStatus.NOT_FOUND))
            .contains("Unknown task 'no-such-task'", "known tasks are", "send-push");
        assertThat(rejected("/actuator/queues/copy-folder", Map.of("action", "pasue"), HttpStatus.BAD_REQUEST))
            .contains("Unknown action 'pasue'", "pause, resume, rerun-failed, rescue, schedule or unschedule");
        assertThat(rejected("/actuator/queues/copy-folder", Map.of(), HttpStatus.BAD_REQUEST)).contains("Missing 'action'");
        assertThat(rejected("/actuator/queues/send-push/" + push, Map.of("action", "rerun"), HttpStatus.CONFLICT))
            .contains("Job " + push + " is COMPLETED; only FAILED jobs can be re-run");
        assertThat(rejected("/actuator/queues/send-push/" + push, Map.of("action", "cancel"), HttpStatus.CONFLICT))
            .contains("Job " + push + " has already finished");
        assertThat(rejected("/actuator/queues/send-push/abc", Map.of("action", "cancel"), HttpStatus.BAD_REQUEST))
            .contains("Job id 'abc' is not a number");
        assertThat(rejected("/actuator/queues/send-push/" + push, Map.of("action", "explode"), HttpStatus.BAD_REQUEST))
            .contains("Unknown action 'explode' for a job; use rerun or cancel");
        Map<String, Object> notFound = this.http.get().uri("/actuator/queues/no-such-task").exchange()
            .expectStatus().isNotFound().expectBody(JSON).returnResult().getResponseBody();
        assertThat(notFound).containsEntry("status", 404).extractingByKey("message").asString()
            .contains("Unknown task 'no-such-task'");
    }

    @Test
    void queuesEndpointShowsEachTasksRealSettingsByTheirDocumentedNames() {
        Map<String, Object> tasks = map(get("/actuator/queues").get("tasks"));
        assertThat(map(map(tasks.get("send-push")).get("settings"))).containsExactlyInAnyOrderEntriesOf(Map.of(
                "handler", "sendPushTask", "pool", "default", "concurrency", 8, "timeout", "PT30M", "maxAttempts", 5,
                "priority", 0, "delayTolerance", "PT1S", "dedupPolicy", "KEEP_EXISTING", "history", false));
        for (Object task : tasks.values()) {
            Map<String, Object> settings = map(map(task).get("settings"));
            assertThat(QueueTask.DedupMode.valueOf((String) settings.get("dedupPolicy"))).isNotNull();
        }
        assertThat(map(map(tasks.get("sync-devices")).get("settings"))).containsEntry("dedupPolicy", "RERUN");
        assertThat(map(map(tasks.get("generate-thumbnail")).get("settings"))).containsEntry("history", true);
    }

    /** Posts a write the endpoint must reject with the status, and returns the reason it gives. */
    private String rejected(String uri, Map<String, Object> body, HttpStatus status) {
        Map<String, Object> answer = this.http.post().uri(uri).contentType(MediaType.APPLICATION_JSON).body(body)
            .exchange().expectStatus().isEqualTo(status).expectBody(JSON).returnResult().getResponseBody();
        assertThat(answer).containsEntry("status", status.value()).containsEntry("error", status.getReasonPhrase());
        return (String) answer.get("message");
    }

    @Test
    void theIdeHintListsExactlyTheApplicationsTasks() throws Exception {
        String hints = Files.readString(Path.of("src/main/resources/META-INF/additional-spring-configuration-metadata.json"));
        assertThat(hints).contains("\"name\": \"pgqueue.tasks.keys\"");
        Matcher values = Pattern.compile("\"value\": \"([a-z-]+)\"").matcher(hints);
        List<String> hinted = values.results().map(result -> result.group(1)).sorted().toList();
        assertThat(hinted).isEqualTo(this.bindings.all().keySet().stream().sorted().toList());
    }

    @Test
    void queueHealthAndPrometheusNames() throws Exception {
        await().atMost(Duration.ofSeconds(20)).until(() -> "UP".equals(get("/actuator/health/queue").get("status")));
        long id = ((Number) post("/users/gus/changes?change=c1", null).get("jobId")).longValue();
        await().atMost(Duration.ofSeconds(20)).until(() -> "COMPLETED".equals(jobState(id)));

        String prometheus = this.http.get().uri("/actuator/prometheus").exchange().expectStatus().isOk()
            .expectBody(String.class).returnResult().getResponseBody();
        assertThat(prometheus).contains("pgqueue_jobs{", "pgqueue_jobs_lag_seconds{", "pgqueue_jobs_stuck{",
                "pgqueue_pool_capacity{", "pgqueue_pool_busy{", "pgqueue_pool_hung{", "pgqueue_pool_buffered{", "pgqueue_pool_prefetch{",
                "pgqueue_jobs_enqueued_total{", "pgqueue_jobs_claimed_total{", "pgqueue_jobs_completed_total{",
                "pgqueue_job_execution_seconds_count{", "pgqueue_job_queue_wait_seconds_count{",
                "pgqueue_job_start_latency_seconds{", "pgqueue_claim_batch_count{", "pgqueue_claim_latency_seconds_count{");
        this.http.get().uri("/jobs/123456789").exchange().expectStatus().isEqualTo(HttpStatus.NOT_FOUND);

        // Every metric the Grafana dashboard in docs/ queries is one the application publishes.
        String dashboard = Files.readString(Path.of("../docs/grafana/pgqueue-dashboard.json"));
        Matcher names = Pattern.compile("pgqueue_[a-z_]+").matcher(dashboard);
        int checked = 0;
        while (names.find()) {
            assertThat(prometheus).as("dashboard metric %s", names.group()).contains(names.group());
            checked++;
        }
        assertThat(checked).isGreaterThan(20);
    }

    private Map<String, Object> get(String uri) {
        return this.http.get().uri(uri).exchange().expectStatus().isOk().expectBody(JSON).returnResult().getResponseBody();
    }

    private Map<String, Object> post(String uri, Object body) {
        var request = this.http.post().uri(uri);
        if (body != null) {
            request.contentType(MediaType.APPLICATION_JSON).body(body);
        }
        return request.exchange().expectStatus().is2xxSuccessful().expectBody(JSON).returnResult().getResponseBody();
    }

    private Map<String, Object> job(long id) {
        return this.http.get().uri("/jobs/" + id).exchange().expectBody(JSON).returnResult().getResponseBody();
    }

    private String workflowState(Map<String, Object> workflow) {
        return (String) this.http.get().uri("/actuator/queues/workflows/" + workflow.get("id")).exchange()
            .expectBody(JSON).returnResult().getResponseBody().get("state");
    }

    @Test
    void anOrderIsChargedWaitsForItsShipmentSleepsAndIsFollowedUp() {
        Map<String, Object> placed = post("/orders", Map.of("owner", "dora", "amountCents", 1999));
        long orderId = ((Number) placed.get("orderId")).longValue();
        long jobId = ((Number) placed.get("jobId")).longValue();
        await().atMost(Duration.ofSeconds(20)).until(() -> stepNames(jobId).contains("signal:shipped"));
        assertThat(jobState(jobId)).as("waiting for the shipment, held by no one").isEqualTo("READY");

        assertThat(post("/orders/" + orderId + "/shipped", Map.of("carrier", "ups"))).containsEntry("signal", "WOKEN");

        await().atMost(Duration.ofSeconds(20)).until(() -> "COMPLETED".equals(jobState(jobId)));
        assertThat(stepNames(jobId)).containsExactly("charge", "signal:shipped", "mark-shipped", "before-follow-up",
                "follow-up");
        Map<String, Object> order = get("/orders/" + orderId);
        assertThat(order).containsEntry("carrier", "ups");
        assertThat(order.get("followed_up_at")).isNotNull();
        assertThat(this.jdbc.queryForObject("SELECT count(*) FROM payment WHERE order_id = ?", Long.class, orderId))
            .isOne();
    }

    /** The names of a job's durable steps, as the queues endpoint shows them. */
    private List<Object> stepNames(long jobId) {
        Object steps = get("/actuator/queues/order-flow/" + jobId).get("steps");
        return steps == null ? List.of() : ((List<?>) steps).stream().map(step -> map(step).get("name")).toList();
    }

    @Test
    void anInfectedUploadIsNotPublished() {
        Map<String, Object> created = post("/files", Map.of("owner", "eve", "folder", "inbox", "name", "virus.exe",
                "sizeBytes", 100));

        Map<String, Object> workflow = map(created.get("workflow"));
        await().atMost(Duration.ofSeconds(30)).until(() -> "FAILED".equals(workflowState(workflow)));
        assertThat(this.jdbc.queryForObject("SELECT scan_verdict || ' ' || (published_at IS NULL) FROM file WHERE id = ?",
                String.class, ((Number) created.get("fileId")).longValue())).isEqualTo("infected true");
    }

    private String jobState(long id) {
        return (String) job(id).get("state");
    }

    private static long jobOf(Map<String, Object> jobs, String name) {
        return ((Number) map(jobs.get(name)).get("jobId")).longValue();
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value) {
        return (Map<String, Object>) value;
    }

}
