package io.pgqueue.autoconfigure;

import java.time.Duration;

import javax.sql.DataSource;

import io.pgqueue.QueueClient;
import io.pgqueue.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A queue on a database of its own ({@code @QueueDataSource}) beside the application's primary
 * DataSource: the tables, the jobs and the workers are there only, and enqueues join transactions on
 * that DataSource only.
 */
class QueueDataSourceTests {

    private TestDatabase application;

    private TestDatabase queue;

    @BeforeEach
    void createDatabases() {
        this.application = TestDatabase.create("pgqueue_app");
        this.queue = TestDatabase.create("pgqueue_own");
    }

    @AfterEach
    void dropDatabases() {
        this.application.close();
        this.queue.close();
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoDatabases {

        static TestDatabase application;

        static TestDatabase queue;

        @Bean
        @Primary
        DataSource applicationDataSource() {
            return application.dataSource();
        }

        @Bean
        @QueueDataSource
        DataSource queueDataSource() {
            return queue.dataSource();
        }
    }

    @Test
    void theQueueLivesInItsOwnDatabaseAndJoinsOnlyItsTransactions() {
        TwoDatabases.application = this.application;
        TwoDatabases.queue = this.queue;
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JacksonAutoConfiguration.class,
                    QueueAutoConfiguration.class))
            .withUserConfiguration(TwoDatabases.class)
            .withBean(TestHandlers.SendPush.class)
            .run(context -> {
                assertThat(context).hasNotFailed();
                JdbcTemplate applicationJdbc = new JdbcTemplate(this.application.dataSource());
                JdbcTemplate queueJdbc = new JdbcTemplate(this.queue.dataSource());
                assertThat(applicationJdbc.queryForObject("SELECT to_regclass('pgqueue.job') IS NULL", Boolean.class))
                    .as("no queue table in the application's database").isTrue();

                QueueClient client = context.getBean(QueueClient.class);
                long ran = client.enqueue("send-push", new TestHandlers.Push("ann", "hi")).jobId();
                await().atMost(Duration.ofSeconds(20)).until(() -> "COMPLETED".equals(queueJdbc.query(
                        "SELECT state FROM pgqueue.job_finished WHERE id = ?", rs -> rs.next() ? rs.getString(1) : null, ran)));

                // Rolled back on the queue's DataSource: the enqueue went with it.
                TransactionTemplate onQueue = new TransactionTemplate(new DataSourceTransactionManager(this.queue.dataSource()));
                onQueue.executeWithoutResult(status -> {
                    client.enqueue("send-push", new TestHandlers.Push("bob", "rolled back"));
                    status.setRollbackOnly();
                });
                // Rolled back on the application's DataSource: another database's transaction, not joined.
                TransactionTemplate onApplication = new TransactionTemplate(
                        new DataSourceTransactionManager(this.application.dataSource()));
                onApplication.executeWithoutResult(status -> {
                    client.enqueue("send-push", new TestHandlers.Push("cy", "kept"));
                    status.setRollbackOnly();
                });
                await().atMost(Duration.ofSeconds(20)).until(() -> queueJdbc.queryForObject(
                        "SELECT count(*) FROM pgqueue.job_finished", Long.class) == 2);
                assertThat(queueJdbc.queryForList("SELECT payload->>'user' FROM pgqueue.job_finished ORDER BY id",
                        String.class)).containsExactly("ann", "cy");
            });
    }
}
