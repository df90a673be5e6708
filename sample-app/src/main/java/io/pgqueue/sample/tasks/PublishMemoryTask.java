package io.pgqueue.sample.tasks;

import io.pgqueue.QueueClient;
import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;

/**
 * Publishes a "memory" (a collection of old photos) at the time it was scheduled for, and tells
 * the owner — enqueueing the push in the same transaction that publishes the memory.
 */
@QueueTask(name = "publish-memory")
public class PublishMemoryTask implements TaskHandler<PublishMemoryTask.Publish> {

    /**
     * The memory to publish.
     * @param memoryId the memory
     */
    public record Publish(long memoryId) {
    }

    private final JdbcTemplate jdbc;

    private final QueueClient queue;

    public PublishMemoryTask(JdbcTemplate jdbc, QueueClient queue) {
        this.jdbc = jdbc;
        this.queue = queue;
    }

    @Override
    @Transactional
    public void handle(Publish publish, TaskContext context) {
        String owner = this.jdbc.queryForObject("UPDATE memory SET published_at = coalesce(published_at, now()) "
                + "WHERE id = ? RETURNING owner", String.class, publish.memoryId());
        this.queue.enqueue(SendPushTask.class, new SendPushTask.Push(owner, "A new memory is waiting for you"));
    }
}
