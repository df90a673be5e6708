package io.pgqueue.sample.web;

import java.util.Map;

import io.pgqueue.CancelResult;
import io.pgqueue.JobSnapshot;
import io.pgqueue.QueueClient;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

/**
 * Looks at and cancels jobs, and shows what the background work produced.
 */
@RestController
public class JobController {

    private final QueueClient queue;

    private final JdbcTemplate jdbc;

    public JobController(QueueClient queue, JdbcTemplate jdbc) {
        this.queue = queue;
        this.jdbc = jdbc;
    }

    /** A job, active or finished: state, attempts, progress, last error. */
    @GetMapping("/jobs/{id}")
    public ResponseEntity<JobSnapshot> job(@PathVariable long id) {
        return ResponseEntity.of(this.queue.find(id));
    }

    /** Cancels a job: at once if it waits, at its next heartbeat if it runs. */
    @DeleteMapping("/jobs/{id}")
    public Map<String, CancelResult> cancel(@PathVariable long id) {
        return Map.of("result", this.queue.cancel(id));
    }

    /** What the background work did for a user. */
    @GetMapping("/users/{owner}/activity")
    public Map<String, Object> activity(@PathVariable String owner) {
        return Map.of(
                "notifications", this.jdbc.queryForList("SELECT message, sent_at FROM notification WHERE owner = ? "
                        + "ORDER BY id DESC LIMIT 20", owner),
                "files", this.jdbc.queryForList("SELECT folder, count(*) AS files, count(thumbnail) AS thumbnails "
                        + "FROM file WHERE owner = ? GROUP BY folder ORDER BY folder", owner),
                "memories", this.jdbc.queryForList("SELECT id, title, published_at FROM memory WHERE owner = ?", owner),
                "deviceSync", this.jdbc.queryForList("SELECT runs, last_seen, synced_at FROM device_sync WHERE owner = ?",
                        owner));
    }
}
