package io.pgqueue.sample.tasks;

import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Counts each user's uploads. Its jobs come from the {@link FileUploaded} event the upload
 * publishes (no enqueue call): the job commits with the upload, or not at all. Every 100th upload
 * fires a trigger that enqueues a push from SQL (db/migration/V5__upload_stats.sql).
 */
@QueueTask(name = "count-upload", events = CountUploadTask.FileUploaded.class, concurrency = 2)
public class CountUploadTask implements TaskHandler<CountUploadTask.FileUploaded> {

    /**
     * An upload happened.
     * @param fileId the file
     * @param owner its owner
     */
    public record FileUploaded(long fileId, String owner) {
    }

    private final JdbcTemplate jdbc;

    public CountUploadTask(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public void handle(FileUploaded event, TaskContext context) {
        this.jdbc.update("INSERT INTO upload_stats (owner, uploads) VALUES (?, 1) "
                + "ON CONFLICT (owner) DO UPDATE SET uploads = upload_stats.uploads + 1", event.owner());
    }
}
