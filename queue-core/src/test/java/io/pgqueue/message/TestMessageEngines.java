package io.pgqueue.message;

import java.time.Duration;

import io.pgqueue.internal.message.MessageEngine;
import io.pgqueue.internal.store.MessageStore;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A test class's queue database with its message engine ({@code @RegisterExtension static final
 * TestMessageEngines engine = new TestMessageEngines(TestQueue.perClass());}): the database and the
 * engine (counting every second, vacuuming every ten) started before the first test, every queue,
 * message, group, deduplication id and move task removed before each, both stopped after the last.
 */
final class TestMessageEngines implements BeforeAllCallback, BeforeEachCallback, AfterAllCallback {

    private final TestQueue queue;

    private MessageEngine messages;

    TestMessageEngines(TestQueue queue) {
        this.queue = queue;
    }

    /** @return the queue database */
    TestQueue queue() {
        return this.queue;
    }

    /** @return the started engine */
    MessageEngine messages() {
        return this.messages;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        this.queue.beforeAll(context);
        this.messages = new MessageEngine(this.queue.dataSource(), new MessageStore(this.queue.dataSource(),
                this.queue.config()), MessageQueueEvents.NONE, Duration.ofSeconds(1), Duration.ofSeconds(10));
        this.messages.start();
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        this.queue.beforeEach(context);
        this.queue.jdbc().execute("TRUNCATE pgqueue.message_queue, pgqueue.message, pgqueue.message_group, "
                + "pgqueue.message_dedup, pgqueue.message_move_task, pgqueue.message_moving");
    }

    @Override
    public void afterAll(ExtensionContext context) {
        this.messages.stop();
        this.queue.afterAll(context);
    }
}
