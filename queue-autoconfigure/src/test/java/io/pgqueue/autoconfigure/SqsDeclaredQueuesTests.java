package io.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.Map;

import io.pgqueue.autoconfigure.sqs.QueueSqsAutoConfiguration;
import io.pgqueue.message.MessageQueueException;
import io.pgqueue.message.MessageQueueInfo;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.message.OutgoingMessage;
import io.pgqueue.message.RedrivePolicy;
import io.pgqueue.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Queues declared under {@code pgqueue.sqs.queues}: created at the first start-up, brought to
 * changed declarations at the next one with their messages kept, and a bad declaration, permission
 * or quota stops the start-up before anything is written. The start-ups share one database.
 */
class SqsDeclaredQueuesTests {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.perClass();

    private static final WebApplicationContextRunner RUNNER = new WebApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JacksonAutoConfiguration.class,
                QueueAutoConfiguration.class, QueueSqsAutoConfiguration.class))
        .withPropertyValues("pgqueue.workers.enabled=false", "pgqueue.flyway.enabled=true");

    private static WebApplicationContextRunner runner() {
        return RUNNER.withPropertyValues(db.springProperties().toArray(String[]::new));
    }

    @Test
    void declaredQueuesAreCreatedAndLaterUpdatedKeepingTheirMessages() {
        WebApplicationContextRunner declared = runner().withPropertyValues("pgqueue.sqs.enabled=true",
                "pgqueue.sqs.allow-anonymous=true",
                "pgqueue.sqs.queues.declared-orders.attributes.VisibilityTimeout=45",
                "pgqueue.sqs.queues.declared-orders.dead-letter-queue=declared-orders-dlq",
                "pgqueue.sqs.queues.declared-orders.max-receive-count=3",
                "pgqueue.sqs.queues.declared-orders.tags.team=billing",
                "pgqueue.sqs.queues.declared-orders-dlq.attributes.MessageRetentionPeriod=1209600",
                "pgqueue.sqs.queues[declared-events.fifo].attributes.ContentBasedDeduplication=true");
        declared.run(context -> {
            assertThat(context).hasNotFailed();
            MessageQueues queues = context.getBean(MessageQueues.class);
            MessageQueueInfo orders = queues.getQueue("declared-orders");
            assertThat(orders.attributes().visibilityTimeout()).isEqualTo(Duration.ofSeconds(45));
            assertThat(orders.attributes().redrivePolicy()).isEqualTo(new RedrivePolicy("declared-orders-dlq", 3));
            assertThat(orders.tags()).containsEntry("team", "billing");
            assertThat(queues.getQueue("declared-orders-dlq").attributes().retention()).isEqualTo(Duration.ofDays(14));
            assertThat(queues.getQueue("declared-events.fifo").fifo()).isTrue();
            queues.send("declared-orders", new OutgoingMessage("kept", Map.of(), null, null, null));
        });
        declared.withPropertyValues("pgqueue.sqs.queues.declared-orders.attributes.VisibilityTimeout=60",
                "pgqueue.sqs.queues.declared-orders.max-receive-count=5").run(context -> {
                    assertThat(context).hasNotFailed();
                    MessageQueues queues = context.getBean(MessageQueues.class);
                    MessageQueueInfo orders = queues.getQueue("declared-orders");
                    assertThat(orders.attributes().visibilityTimeout()).isEqualTo(Duration.ofSeconds(60));
                    assertThat(orders.attributes().redrivePolicy().maxReceiveCount()).isEqualTo(5);
                    assertThat(queues.counts("declared-orders").visible()).as("its message stays").isOne();
                });
    }

    @Test
    void aBadDeclarationOrPermissionOrQuotaStopsTheStartUpAndWritesNothing() {
        WebApplicationContextRunner sqs = runner().withPropertyValues("pgqueue.sqs.enabled=true",
                "pgqueue.sqs.credentials[0].access-key-id=app", "pgqueue.sqs.credentials[0].secret-access-key=secret",
                "pgqueue.sqs.queues.first-good.attributes.DelaySeconds=5");
        assertFailure(sqs.withPropertyValues("pgqueue.sqs.queues.second-bad.attributes.VisibilityTimeout=99999"),
                "pgqueue.sqs.queues.second-bad is not a valid queue: VisibilityTimeout", "Correct pgqueue.sqs.queues.second-bad");
        assertFailure(sqs.withPropertyValues("pgqueue.sqs.queues.second-bad.attributes.Colour=blue"),
                "pgqueue.sqs.queues.second-bad is not a valid queue: Unknown Attribute Colour", "Correct");
        assertFailure(sqs.withPropertyValues("pgqueue.sqs.queues.second-bad.dead-letter-queue=nowhere",
                "pgqueue.sqs.queues.second-bad.max-receive-count=3"), "names the dead-letter queue nowhere, which is "
                        + "neither declared nor existing", "Declare nowhere under pgqueue.sqs.queues");
        assertFailure(sqs.withPropertyValues("pgqueue.sqs.queues.second-bad.dead-letter-queue=first-good"),
                "sets only one of dead-letter-queue and max-receive-count", "Set both");
        assertFailure(sqs.withPropertyValues("pgqueue.sqs.queues[bad!name].tags.a=b"),
                "pgqueue.sqs.queues.bad!name is not a valid queue: Can only include alphanumeric", "Correct");
        assertFailure(sqs.withPropertyValues("pgqueue.sqs.quotas.write=0"), "pgqueue.sqs.quotas.write is 0.0: a quota is "
                + "calls per second above 0", "Set pgqueue.sqs.quotas.write to a rate above 0");
        assertFailure(sqs.withPropertyValues("pgqueue.sqs.queues.first-good.quotas.read=-1"),
                "pgqueue.sqs.queues.first-good.quotas.read is -1.0", "above 0");
        assertFailure(sqs.withPropertyValues("pgqueue.sqs.credentials[0].actions=SendMessage,Fly*"),
                "pgqueue.sqs.credentials[0].actions names 'Fly*', which is no SQS action the endpoint serves",
                "the endpoint serves CancelMessageMoveTask, ChangeMessageVisibility");
        assertFailure(sqs.withPropertyValues("pgqueue.sqs.queues.first-good.permissions.stranger=SendMessage"),
                "pgqueue.sqs.queues.first-good.permissions grants actions to access key 'stranger', which is not "
                        + "configured", "pgqueue.sqs.credentials");
        runner().run(context -> assertThatThrownBy(() -> context.getBean(MessageQueues.class).getQueue("first-good"))
            .as("no queue created by a start-up that failed").isInstanceOf(MessageQueueException.class));
    }


    private static void assertFailure(WebApplicationContextRunner runner, String description, String action) {
        QueueSqsAutoConfigurationTests.assertFailure(runner, description, action);
    }
}
