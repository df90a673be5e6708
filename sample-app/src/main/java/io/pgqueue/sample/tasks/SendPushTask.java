package io.pgqueue.sample.tasks;

import java.time.Duration;
import java.time.Instant;

import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import io.pgqueue.TaskSnoozedException;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Tells a user's devices that a file arrived. Fast and urgent: it should start within a second of
 * the upload, so it carries a 1 s delay tolerance and overtakes jobs with laxer deadlines. A user in
 * quiet hours gets it when they end: the job snoozes until then.
 */
@QueueTask(name = "send-push", concurrency = 8, delayTolerance = "1s", maxAttempts = 5)
public class SendPushTask implements TaskHandler<SendPushTask.Push> {

    /**
     * The push to send.
     * @param owner the user to notify
     * @param message the text
     */
    public record Push(String owner, String message) {
    }

    private final JdbcTemplate jdbc;

    public SendPushTask(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public void handle(Push push, TaskContext context) {
        // An owner in quiet hours gets the push when they end: not a failure, so the job snoozes
        // (no attempt spent, no backoff) instead of failing and retrying.
        Instant quietUntil = this.jdbc.query("SELECT until FROM quiet_hours WHERE owner = ? AND until > now()",
                rs -> rs.next() ? rs.getTimestamp(1).toInstant() : null, push.owner());
        if (quietUntil != null) {
            throw new TaskSnoozedException(Duration.between(Instant.now(), quietUntil).plusMillis(1));
        }
        // A real service would call a push gateway; the sample records what it would send.
        this.jdbc.update("INSERT INTO notification (owner, message) VALUES (?, ?)", push.owner(), push.message());
    }
}
