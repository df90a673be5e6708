package io.pgqueue.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.beans.factory.annotation.Qualifier;

/**
 * Makes a {@link javax.sql.DataSource} bean a shard of the queue: another PostgreSQL database that
 * holds some of its partitions, as an alternative to a URL under {@code pgqueue.shards}. Declare it
 * with {@code @Bean(defaultCandidate = false)} so that it is not injected where the application
 * expects its own DataSource, and Spring Boot still auto-configures that one:
 * <pre class="code">
 * &#64;Bean(defaultCandidate = false)
 * &#64;QueueShard("b")
 * DataSource shardB() { ... }
 * </pre>
 * The queue migrates the shard's schema and uses the DataSource as it is; the application owns and
 * closes it.
 */
@Target({ ElementType.FIELD, ElementType.METHOD, ElementType.PARAMETER, ElementType.TYPE, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Qualifier
public @interface QueueShard {

    /**
     * @return the shard's name, kept for good: lower-case letters, digits, '-' and '_', at most 40,
     * other than {@code main} (the queue's own DataSource)
     */
    String value();
}
