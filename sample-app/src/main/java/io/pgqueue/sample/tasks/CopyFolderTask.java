package io.pgqueue.sample.tasks;

import java.util.List;

import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Copies a folder of possibly thousands of files, in chunks, reporting progress and stopping when
 * cancelled. Slow: it runs in its own pool so it never holds up pushes, with a long timeout; the
 * lease keeper renews its lease while it runs. Grouped by owner: one owner's hundred copies take
 * turns with everyone else's, and at most one copy per owner runs at a time across all nodes.
 */
@QueueTask(name = "copy-folder", pool = "slow", concurrency = 2, timeout = "30m", maxAttempts = 3, groupKey = "owner",
        groupConcurrency = 1)
public class CopyFolderTask implements TaskHandler<CopyFolderTask.Copy> {

    private static final int CHUNK = 500;

    /**
     * What to copy.
     * @param owner the files' owner
     * @param from the source folder
     * @param to the target folder
     */
    public record Copy(String owner, String from, String to) {
    }

    private final JdbcTemplate jdbc;

    public CopyFolderTask(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public void handle(Copy copy, TaskContext context) {
        // Idempotent: a retry after a crash starts over on a clean target folder.
        this.jdbc.update("DELETE FROM file WHERE owner = ? AND folder = ?", copy.owner(), copy.to());
        List<Long> ids = this.jdbc.queryForList("SELECT id FROM file WHERE owner = ? AND folder = ? ORDER BY id",
                Long.class, copy.owner(), copy.from());
        for (int from = 0; from < ids.size(); from += CHUNK) {
            context.throwIfCancellationRequested();
            List<Long> chunk = ids.subList(from, Math.min(ids.size(), from + CHUNK));
            this.jdbc.update("INSERT INTO file (owner, folder, name, size_bytes) SELECT owner, ?, name, size_bytes "
                    + "FROM file WHERE id = ANY(?)", copy.to(), chunk.toArray(Long[]::new));
            context.progress((from + chunk.size()) + " of " + ids.size() + " files copied");
        }
    }
}
