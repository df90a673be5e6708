package io.pgqueue.autoconfigure;

import java.util.Set;

import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDatabaseInitializerDetector;
import org.springframework.core.Ordered;

/**
 * Tells Spring Boot that {@link QueueSchemaInitializer} initializes the database, so it runs after
 * the application's own Flyway and before beans that depend on database initialization.
 */
class QueueSchemaInitializerDetector extends AbstractBeansOfTypeDatabaseInitializerDetector {

    @Override
    protected Set<Class<?>> getDatabaseInitializerBeanTypes() {
        return Set.of(QueueSchemaInitializer.class);
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE - 100;
    }
}
