package io.pgqueue.sample.tasks;

import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Brings a user's devices up to date. Every change enqueues a sync with the user as dedup key:
 * changes that arrive while no sync runs merge into the waiting one, and changes that arrive while
 * one runs schedule exactly one more run afterwards (RERUN), so the last change is never missed
 * and a burst of changes costs two runs, not hundreds. What changed is the user's business: the
 * payloads are encrypted at rest (pgqueue.encryption in application.yml); the owner, the dedup key,
 * stays readable.
 */
@QueueTask(name = "sync-devices", dedupKey = "owner", dedupPolicy = QueueTask.DedupMode.RERUN, concurrency = 4,
        encrypted = true)
public class SyncDevicesTask implements TaskHandler<SyncDevicesTask.Sync> {

    /**
     * A sync request.
     * @param owner the user
     * @param change the change that triggered it
     */
    public record Sync(String owner, String change) {
    }

    private final JdbcTemplate jdbc;

    public SyncDevicesTask(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public void handle(Sync sync, TaskContext context) throws InterruptedException {
        // Syncing takes a while: long enough for changes to pile up behind it.
        Thread.sleep(500);
        this.jdbc.update("INSERT INTO device_sync (owner, runs, last_seen, synced_at) VALUES (?, 1, ?, now()) "
                + "ON CONFLICT (owner) DO UPDATE SET runs = device_sync.runs + 1, last_seen = excluded.last_seen, "
                + "synced_at = now()", sync.owner(), sync.change());
    }
}
