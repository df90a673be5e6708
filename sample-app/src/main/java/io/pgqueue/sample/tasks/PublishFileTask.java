package io.pgqueue.sample.tasks;

import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import io.pgqueue.TerminalTaskException;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The last step of the upload workflow: runs once the thumbnail was rendered and the scan ended,
 * and publishes the file if the scan (its recorded result) found it clean.
 */
@QueueTask(name = "publish-file", concurrency = 2)
public class PublishFileTask implements TaskHandler<PublishFileTask.Publish> {

    /**
     * The file to publish.
     * @param fileId the file
     */
    public record Publish(long fileId) {
    }

    private final JdbcTemplate jdbc;

    public PublishFileTask(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public void handle(Publish publish, TaskContext context) {
        boolean clean = context.dependencyResult("scan", ScanFileTask.Verdict.class)
            .map(ScanFileTask.Verdict::clean)
            .orElse(false);
        if (!clean) {
            throw new TerminalTaskException("File " + publish.fileId() + " did not pass the virus scan");
        }
        this.jdbc.update("UPDATE file SET published_at = now() WHERE id = ?", publish.fileId());
    }
}
