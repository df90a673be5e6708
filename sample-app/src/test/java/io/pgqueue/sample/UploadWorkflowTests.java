package io.pgqueue.sample;

import java.time.Duration;
import java.util.Map;

import io.pgqueue.JobState;
import io.pgqueue.sample.tasks.GenerateThumbnailTask;
import io.pgqueue.sample.tasks.ScanFileTask;
import io.pgqueue.sample.web.FileController;
import io.pgqueue.test.AutoConfigurePgQueueTest;
import io.pgqueue.test.QueueTester;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The upload workflow and the nightly schedule with pgqueue's test kit: the jobs run when the test
 * drains them, on its thread, and the queue's time moves without sleeping.
 */
@SpringBootTest(properties = { "sample.embedded-postgres.enabled=false", "sample.images.fail-first=1",
        "sample.images.failure-rate=0" })
@AutoConfigurePgQueueTest
class UploadWorkflowTests {

    @Autowired
    FileController files;

    @Autowired
    QueueTester queue;

    @Autowired
    JdbcTemplate jdbc;

    @Test
    void anUploadIsPublishedAfterItsThumbnailAndItsScan() {
        Map<String, Object> created = this.files.upload(new FileController.Upload("ann", "inbox", "cat.jpg", 2048));
        long fileId = ((Number) created.get("fileId")).longValue();

        this.queue.assertEnqueued("generate-thumbnail", new GenerateThumbnailTask.Thumbnail(fileId));
        this.queue.assertEnqueued("scan-file", ScanFileTask.Scan.class, scan -> scan.fileId() == fileId);
        assertThat(this.queue.assertEnqueued("publish-file").state()).as("waits for both").isEqualTo(JobState.WAITING);

        // The image service fails once: the thumbnail is retried after its backoff.
        assertThat(this.queue.drain().retried()).isEqualTo(1);
        assertThat(this.queue.assertEnqueued("publish-file").state()).isEqualTo(JobState.WAITING);
        this.queue.advance(Duration.ofSeconds(1));
        this.queue.drain();

        this.queue.refuteEnqueued("publish-file");
        assertThat(this.jdbc.queryForObject("SELECT thumbnail || ' ' || scan_verdict || ' ' || (published_at IS NOT NULL) "
                + "FROM file WHERE id = ?", String.class, fileId)).isEqualTo("thumb-cat.jpg.webp clean true");
    }

    @Test
    void theTrashIsEmptiedAtNight() {
        this.jdbc.update("INSERT INTO file (owner, folder, name, size_bytes, uploaded_at) "
                + "VALUES ('bob', 'trash', 'old.jpg', 1, now() - interval '40 days')");
        this.queue.refuteEnqueued("empty-trash");

        // 25 hours: a night's slot is passed even across a daylight saving change in Amsterdam.
        assertThat(this.queue.advance(Duration.ofHours(25))).hasSize(1);
        this.queue.drain("empty-trash");

        assertThat(this.jdbc.queryForObject("SELECT count(*) FROM file WHERE folder = 'trash'", Long.class)).isZero();
    }
}
