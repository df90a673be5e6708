package io.pgqueue.message;

import java.time.Instant;
import java.util.Map;

/**
 * A message queue as stored.
 *
 * @param id the queue's internal id
 * @param name the queue's name; FIFO queues' names end in {@code .fifo}
 * @param fifo whether it is a FIFO queue
 * @param attributes its settings
 * @param tags its tags
 * @param createdAt when it was created
 * @param updatedAt when its settings last changed
 */
public record MessageQueueInfo(long id, String name, boolean fifo, MessageQueueAttributes attributes,
        Map<String, String> tags, Instant createdAt, Instant updatedAt) {
}
