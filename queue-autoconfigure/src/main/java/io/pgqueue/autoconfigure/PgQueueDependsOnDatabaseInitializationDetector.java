package io.pgqueue.autoconfigure;

import java.util.Set;

import io.pgqueue.PgQueue;
import io.pgqueue.balance.PartitionBalancer;
import io.pgqueue.observe.QueueStatistics;
import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDependsOnDatabaseInitializationDetector;

/**
 * Tells Spring Boot that the queue, its statistics, its lifecycle and its workers use the database, so
 * they are created after every database initializer — the queue's own schema migration and the
 * application's Flyway or Liquibase — has run.
 */
class PgQueueDependsOnDatabaseInitializationDetector extends AbstractBeansOfTypeDependsOnDatabaseInitializationDetector {

    @Override
    protected Set<Class<?>> getDependsOnDatabaseInitializationBeanTypes() {
        return Set.of(PgQueue.class, QueueStatistics.class, QueueLifecycle.class, QueueWorkerNode.class, PartitionBalancer.class);
    }
}
