package io.pgqueue.sample.tasks;

import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Renders a thumbnail through an image service that often times out: failed attempts are retried
 * with exponential backoff, a file that no longer exists fails at once (terminal exception). Each
 * attempt is kept with the job, with what the handler logged ({@code history}): the console's job
 * page and {@code GET /actuator/queues/generate-thumbnail/{id}} show them.
 */
@QueueTask(name = "generate-thumbnail", concurrency = 4, history = true, tags = "media", terminal = GenerateThumbnailTask.FileGoneException.class,
        retry = @QueueTask.Backoff(kind = QueueTask.Backoff.Kind.EXPONENTIAL, delay = "200ms", multiplier = 2,
                maxDelay = "10s", jitter = 0.3))
public class GenerateThumbnailTask implements TaskHandler<GenerateThumbnailTask.Thumbnail> {

    /**
     * The file to render.
     * @param fileId the file
     */
    public record Thumbnail(long fileId) {
    }

    /** The file was deleted before its thumbnail could be made: retrying cannot help. */
    public static class FileGoneException extends RuntimeException {

        private static final long serialVersionUID = 1L;

        FileGoneException(long fileId) {
            super("File " + fileId + " no longer exists");
        }
    }

    private final JdbcTemplate jdbc;

    private final FlakyImageService images;

    public GenerateThumbnailTask(JdbcTemplate jdbc, FlakyImageService images) {
        this.jdbc = jdbc;
        this.images = images;
    }

    @Override
    public void handle(Thumbnail thumbnail, TaskContext context) {
        String name = this.jdbc.query("SELECT name FROM file WHERE id = ?", rs -> rs.next() ? rs.getString(1) : null,
                thumbnail.fileId());
        if (name == null) {
            throw new FileGoneException(thumbnail.fileId());
        }
        context.logger().info("Rendering {} (file {})", name, thumbnail.fileId());
        String rendered = this.images.render(name);
        this.jdbc.update("UPDATE file SET thumbnail = ? WHERE id = ?", rendered, thumbnail.fileId());
    }
}
