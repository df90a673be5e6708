package io.pgqueue.test;

import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.test.context.junit.jupiter.SpringExtension;

/**
 * Empties the queue and resets its clock before each test of an {@link AutoConfigurePgQueueTest}
 * class, so that tests sharing a cached context do not see each other's jobs (nothing, when the
 * context has no queue: {@code pgqueue.enabled=false}).
 */
public class QueueTestExtension implements BeforeEachCallback {

    @Override
    public void beforeEach(ExtensionContext context) {
        SpringExtension.getApplicationContext(context).getBeanProvider(QueueTester.class).ifAvailable(QueueTester::reset);
    }
}
