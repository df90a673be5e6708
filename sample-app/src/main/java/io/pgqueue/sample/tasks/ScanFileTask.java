package io.pgqueue.sample.tasks;

import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Scans an upload for viruses (here: a file named like {@code *.exe} counts as infected) and
 * records the verdict as the job's result, which the publication step of the upload workflow reads.
 */
@QueueTask(name = "scan-file", concurrency = 4)
public class ScanFileTask implements TaskHandler<ScanFileTask.Scan> {

    /**
     * The file to scan.
     * @param fileId the file
     */
    public record Scan(long fileId) {
    }

    /**
     * A scan's verdict.
     * @param clean whether the file is clean
     */
    public record Verdict(boolean clean) {
    }

    private final JdbcTemplate jdbc;

    public ScanFileTask(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public void handle(Scan scan, TaskContext context) {
        String name = this.jdbc.query("SELECT name FROM file WHERE id = ?", rs -> rs.next() ? rs.getString(1) : null,
                scan.fileId());
        boolean clean = name != null && !name.endsWith(".exe");
        this.jdbc.update("UPDATE file SET scan_verdict = ? WHERE id = ?", clean ? "clean" : "infected", scan.fileId());
        context.recordResult(new Verdict(clean));
    }
}
