package io.pgqueue.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;

/**
 * Sets a {@code @SpringBootTest} up for testing code that uses pgqueue:
 * <ul>
 * <li>a fresh database on a real PostgreSQL for the test context ({@link TestPostgres}: an
 * explicit JDBC URL, else Testcontainers, else an embedded PostgreSQL), set as
 * {@code spring.datasource.*} and dropped when the context closes, unless {@link #database()} is
 * {@code false};</li>
 * <li>no worker in the background ({@code pgqueue.workers.enabled=false}): jobs run when the test
 * drains them ({@link QueueTestMode#MANUAL}) or at each enqueue ({@link QueueTestMode#INLINE});</li>
 * <li>a {@link QueueTester} bean to assert on enqueued jobs, drain them and move the queue's time;
 * the queue is emptied and its time reset before each test.</li>
 * </ul>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration(QueueTestAutoConfiguration.class)
@ExtendWith(QueueTestExtension.class)
public @interface AutoConfigurePgQueueTest {

    /**
     * When enqueued jobs run.
     * @return the mode; {@link QueueTestMode#MANUAL} by default
     */
    QueueTestMode mode() default QueueTestMode.MANUAL;

    /**
     * Whether to give the test context a fresh database of its own.
     * @return {@code false} to keep the application's {@code spring.datasource.*}
     */
    boolean database() default true;
}
