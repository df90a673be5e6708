package io.pgqueue.autoconfigure.e2e;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import io.pgqueue.autoconfigure.QueueConfigurationFailureTests;
import io.pgqueue.testing.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Application events that become jobs: published in a transaction, the job commits or rolls back
 * with it, and a committed job runs on whichever node is up, after the publisher is gone.
 */
class QueueEventJobsTests {

    record OrderPlaced(long order, String customer) {
    }

    record OrderCancelled(long order) {
    }

    /** Records what it handled. */
    static final class Receipts {

        final List<Object> handled = new CopyOnWriteArrayList<>();
    }

    @QueueTask(name = "send-receipt", events = OrderPlaced.class)
    static class SendReceipt implements TaskHandler<OrderPlaced> {

        private final Receipts receipts;

        SendReceipt(Receipts receipts) {
            this.receipts = receipts;
        }

        @Override
        public void handle(OrderPlaced payload, TaskContext context) {
            this.receipts.handled.add(payload);
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import(SendReceipt.class)
    static class EventsApplication {

        @Bean
        Receipts receipts() {
            return new Receipts();
        }
    }

    private TestDatabase database;

    private final List<ConfigurableApplicationContext> nodes = new ArrayList<>();

    @BeforeEach
    void createDatabase() {
        this.database = TestDatabase.create("pgqueue_events");
    }

    @AfterEach
    void stopNodes() {
        this.nodes.forEach(ConfigurableApplicationContext::close);
        this.database.close();
    }

    @Test
    void anEventPublishedInATransactionBecomesAJobThatCommitsOrRollsBackWithItAndRunsAfterThePublisherIsGone() {
        ConfigurableApplicationContext publisher = node("pgqueue.workers.enabled=false");
        JdbcTemplate jdbc = publisher.getBean(JdbcTemplate.class);
        jdbc.execute("CREATE TABLE orders (id bigint PRIMARY KEY)");
        TransactionTemplate transactions = publisher.getBean(TransactionTemplate.class);
        ApplicationEventPublisher events = publisher;

        transactions.executeWithoutResult(status -> {
            jdbc.update("INSERT INTO orders VALUES (1)");
            events.publishEvent(new OrderPlaced(1, "ann"));
        });
        assertThatThrownBy(() -> transactions.executeWithoutResult(status -> {
            jdbc.update("INSERT INTO orders VALUES (2)");
            events.publishEvent(new OrderPlaced(2, "bob"));
            throw new IllegalStateException("payment declined");
        })).hasMessage("payment declined");
        events.publishEvent(new OrderCancelled(1));
        events.publishEvent("a string nobody turns into a job");
        assertThat(jdbc.queryForList("SELECT payload->>'customer' FROM pgqueue.job WHERE task = 'send-receipt'",
                String.class)).as("the committed order's job only").containsExactly("ann");
        publisher.close();

        ConfigurableApplicationContext worker = node("pgqueue.poll-interval=200ms");
        Receipts receipts = worker.getBean(Receipts.class);
        await().atMost(Duration.ofSeconds(20)).until(() -> !receipts.handled.isEmpty());
        assertThat(receipts.handled).containsExactly(new OrderPlaced(1, "ann"));
        assertThat(new JdbcTemplate(this.database.dataSource()).queryForObject(
                "SELECT count(*) FROM pgqueue.job_finished WHERE task = 'send-receipt' AND state = 'COMPLETED'",
                Long.class)).isOne();
    }

    @QueueTask(name = "wrong-type", events = OrderCancelled.class)
    static class WrongType implements TaskHandler<OrderPlaced> {

        @Override
        public void handle(OrderPlaced payload, TaskContext context) {
        }
    }

    @Test
    void anEventTypeThePayloadTypeCannotHoldStopsTheStartUp() {
        assertThatThrownBy(() -> new SpringApplicationBuilder(EventsApplication.class, WrongType.class)
            .web(WebApplicationType.NONE).properties(properties("pgqueue.workers.enabled=false")).run())
            .satisfies(failure -> QueueConfigurationFailureTests.assertAnalysis(failure,
                    "turns events of type " + OrderCancelled.class.getName() + " into jobs, but its payload type "
                            + OrderPlaced.class.getName() + " cannot hold them",
                    "List in @QueueTask(events = ...) only types the handler's payload type can hold"));
    }

    private ConfigurableApplicationContext node(String... properties) {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(EventsApplication.class)
            .web(WebApplicationType.NONE).properties(properties(properties)).run();
        this.nodes.add(context);
        return context;
    }

    private String[] properties(String... properties) {
        List<String> all = new ArrayList<>(this.database.springProperties());
        all.add("spring.main.banner-mode=off");
        all.addAll(List.of(properties));
        return all.toArray(String[]::new);
    }
}
