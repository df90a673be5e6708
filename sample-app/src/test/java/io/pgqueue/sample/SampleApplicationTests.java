package io.pgqueue.sample;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.resttestclient.autoconfigure.AutoConfigureRestTestClient;
import org.springframework.boot.test.context.SpringBootTest;
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
        "pgqueue.poll-interval=200ms" })
@ContextConfiguration(initializers = TestDatabaseInitializer.class)
@AutoConfigureRestTestClient
class SampleApplicationTests {

    private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {
    };

    @Autowired
    RestTestClient http;

    @Autowired
    JdbcTemplate jdbc;

    @Test
    void anUploadNotifiesRendersAThumbnailAfterRetriesAndSyncs() {
        Map<String, Object> created = post("/files", Map.of("owner", "ann", "folder", "inbox", "name", "cat.jpg",
                "sizeBytes", 2048));

        Map<String, Object> jobs = map(created.get("jobs"));
        await().atMost(Duration.ofSeconds(20)).until(() -> "COMPLETED".equals(jobState(jobOf(jobs, "push"))));
        await().atMost(Duration.ofSeconds(30)).until(() -> "COMPLETED".equals(jobState(jobOf(jobs, "thumbnail"))));
        assertThat(job(jobOf(jobs, "thumbnail")).get("attempt")).isEqualTo(3);
        assertThat(this.jdbc.queryForObject("SELECT thumbnail FROM file WHERE id = ?", String.class,
                ((Number) created.get("fileId")).longValue())).isEqualTo("thumb-cat.jpg.webp");
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
        for (int i = 1; i <= 20; i++) {
            this.http.post().uri("/users/dan/changes?change=c" + i).exchange().expectStatus().isAccepted();
        }

        await().atMost(Duration.ofSeconds(30)).until(() -> "c20".equals(this.jdbc.query(
                "SELECT last_seen FROM device_sync WHERE owner = 'dan'", rs -> rs.next() ? rs.getString(1) : null)));
        assertThat(this.jdbc.queryForObject("SELECT runs FROM device_sync WHERE owner = 'dan'", Integer.class))
            .isBetween(1, 3);
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
    void actuatorEndpointsAreExposed() {
        this.http.get().uri("/actuator/health").exchange().expectStatus().isOk();
        this.http.get().uri("/actuator/prometheus").exchange().expectStatus().isOk();
        this.http.get().uri("/jobs/123456789").exchange().expectStatus().isEqualTo(HttpStatus.NOT_FOUND);
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
