package io.pgqueue.autoconfigure;

import io.pgqueue.PgQueue;

/**
 * Callback to customize the auto-configured {@link PgQueue} before it is built, after the
 * {@code pgqueue.*} properties were applied. Customizers run in their
 * {@link org.springframework.core.annotation.Order order}.
 */
@FunctionalInterface
public interface PgQueueCustomizer {

    /**
     * Customizes the builder.
     * @param builder the builder, with the properties applied
     */
    void customize(PgQueue.Builder builder);
}
