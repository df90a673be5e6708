package io.pgqueue.message;

import java.time.Duration;

import io.pgqueue.internal.message.MessageEngine;
import io.pgqueue.internal.store.MessageStore;
import io.pgqueue.testing.TestQueue;

/**
 * The message engine of a test class's queue database, counting every second and vacuuming every
 * ten, and the statement that empties its tables between tests.
 */
final class TestMessageEngines {

    private TestMessageEngines() {
    }

    /** @return an engine on the queue's database, started (long polls, sweeper, move tasks) */
    static MessageEngine start(TestQueue queue) {
        MessageEngine engine = new MessageEngine(queue.dataSource(), new MessageStore(queue.dataSource(), queue.config()),
                MessageQueueEvents.NONE, Duration.ofSeconds(1), Duration.ofSeconds(10));
        engine.start();
        return engine;
    }

    /** Removes every queue, message, group, deduplication id and move task. */
    static void clear(TestQueue queue) {
        queue.jdbc().execute("TRUNCATE pgqueue.message_queue, pgqueue.message, pgqueue.message_group, "
                + "pgqueue.message_dedup, pgqueue.message_move_task");
    }
}
