package io.pgqueue.test;

import io.pgqueue.EnqueueOutcome;
import io.pgqueue.PgQueue;
import io.pgqueue.autoconfigure.PgQueueCustomizer;
import io.pgqueue.autoconfigure.QueueAutoConfiguration;
import io.pgqueue.autoconfigure.QueueTaskBindings;
import io.pgqueue.observe.QueueEvents;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import tools.jackson.databind.json.JsonMapper;

/**
 * The beans of {@link AutoConfigurePgQueueTest}: the queue's test clock, the {@link QueueTester},
 * and in {@link QueueTestMode#INLINE} the listener that runs jobs at each enqueue.
 */
@AutoConfiguration(after = QueueAutoConfiguration.class)
public class QueueTestAutoConfiguration {

    /** The property {@link AutoConfigurePgQueueTest#mode()} sets. */
    static final String MODE_PROPERTY = "pgqueue.test.mode";

    /** The property naming the database {@link AutoConfigurePgQueueTest} created for the context. */
    static final String DATABASE_PROPERTY = "pgqueue.test.database";

    @Bean
    QueueTestClock queueTestClock() {
        return new QueueTestClock();
    }

    @Bean
    PgQueueCustomizer queueTestClockCustomizer(QueueTestClock clock) {
        return builder -> builder.clock(clock);
    }

    @Bean
    @ConditionalOnBean(PgQueue.class)
    QueueTester queueTester(PgQueue queue, QueueTaskBindings bindings, ObjectProvider<JsonMapper> mapper,
            QueueTestClock clock, Environment environment) {
        return new QueueTester(queue, bindings, mapper.getIfAvailable(() -> JsonMapper.builder().build()), clock,
                environment.getProperty(MODE_PROPERTY, QueueTestMode.class, QueueTestMode.MANUAL),
                environment.getProperty(DATABASE_PROPERTY));
    }

    @Bean
    @ConditionalOnProperty(name = MODE_PROPERTY, havingValue = "INLINE")
    QueueEvents queueTestInlineRunner(ObjectProvider<QueueTester> tester) {
        return new QueueEvents() {
            @Override
            public void enqueued(String task, EnqueueOutcome outcome) {
                // Called after the enqueue's transaction committed, on the enqueuing thread.
                tester.getObject().drainInline();
            }
        };
    }
}
