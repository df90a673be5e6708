package io.pgqueue.sample;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ContextConfiguration;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.SendMessageResponse;
import software.amazon.awssdk.services.sqs.model.SqsException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.awaitility.Awaitility.await;

/**
 * Access keys with permissions, queues declared in the configuration with quotas and grants, the
 * throttling the AWS SDK for Java v2 retries, and the endpoint's meters and request ids, through the
 * sample application's SQS API.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "sample.embedded-postgres.enabled=false", "pgqueue.sqs.enabled=true",
    "pgqueue.sqs.credentials[0].access-key-id=acl-admin", "pgqueue.sqs.credentials[0].secret-access-key=admin-secret",
    "pgqueue.sqs.credentials[1].access-key-id=acl-producer", "pgqueue.sqs.credentials[1].secret-access-key=producer-secret",
    "pgqueue.sqs.credentials[1].queues=acl-orders-*", "pgqueue.sqs.credentials[1].actions=SendMessage*,GetQueueUrl",
    "pgqueue.sqs.queues.acl-orders-in.attributes.VisibilityTimeout=40",
    "pgqueue.sqs.queues.acl-orders-in.dead-letter-queue=acl-orders-dlq",
    "pgqueue.sqs.queues.acl-orders-in.max-receive-count=4",
    "pgqueue.sqs.queues.acl-orders-dlq.tags.kind=dead-letters",
    "pgqueue.sqs.queues.acl-audit.permissions.acl-producer=ReceiveMessage,DeleteMessage",
    "pgqueue.sqs.queues.acl-throttled.quotas.write=2" })
@ContextConfiguration(initializers = TestDatabaseInitializer.class)
class SqsAccessControlTests {

    @LocalServerPort
    int port;

    @Autowired
    MeterRegistry meters;

    private final List<SqsClient> clients = new ArrayList<>();

    private SqsClient client(String key, String secret) {
        SqsClient client = JavaSqsClients.builder(this.port, key, secret)
            .overrideConfiguration(configuration -> configuration.retryStrategy(
                    AwsRetryStrategy.standardRetryStrategy().toBuilder().maxAttempts(10).build()))
            .build();
        this.clients.add(client);
        return client;
    }

    @AfterEach
    void close() {
        this.clients.forEach(SqsClient::close);
    }

    @Test
    void aKeyCallsOnlyItsActionsOnItsQueuesAndWhatADeclaredQueueGrantsIt() {
        SqsClient admin = client("acl-admin", "admin-secret");
        SqsClient producer = client("acl-producer", "producer-secret");
        String orders = producer.getQueueUrl(request -> request.queueName("acl-orders-in")).queueUrl();
        assertThat(admin.getQueueAttributes(request -> request.queueUrl(orders).attributeNames(QueueAttributeName.ALL))
            .attributesAsStrings()).containsEntry("VisibilityTimeout", "40")
            .hasEntrySatisfying("RedrivePolicy", policy -> assertThat(policy).contains("acl-orders-dlq", "4"));

        producer.sendMessage(request -> request.queueUrl(orders).messageBody("from the producer"));
        assertDenied(() -> producer.receiveMessage(request -> request.queueUrl(orders)),
                "The access key acl-producer may not call ReceiveMessage on the queue acl-orders-in.");
        assertDenied(() -> producer.listQueues(request -> request.queueNamePrefix("acl-")), "ListQueues");
        String audit = admin.getQueueUrl(request -> request.queueName("acl-audit")).queueUrl();
        assertDenied(() -> producer.sendMessage(request -> request.queueUrl(audit).messageBody("x")),
                "SendMessage on the queue acl-audit");
        admin.sendMessage(request -> request.queueUrl(audit).messageBody("audited"));
        List<Message> received = producer.receiveMessage(request -> request.queueUrl(audit).waitTimeSeconds(1))
            .messages();
        assertThat(received).extracting(Message::body).as("granted by the queue").containsExactly("audited");
        producer.deleteMessage(request -> request.queueUrl(audit).receiptHandle(received.get(0).receiptHandle()));

        assertThat(admin.receiveMessage(request -> request.queueUrl(orders).waitTimeSeconds(1)).messages())
            .extracting(Message::body).containsExactly("from the producer");
        assertThat(admin.listQueues(request -> request.queueNamePrefix("acl-")).queueUrls())
            .hasSize(4).anySatisfy(url -> assertThat(url).endsWith("/acl-orders-dlq"));
    }

    @Test
    void callsOverAQueuesQuotaAreThrottledAndTheSdkRetriesThem() {
        SqsClient admin = client("acl-admin", "admin-secret");
        String url = admin.getQueueUrl(request -> request.queueName("acl-throttled")).queueUrl();
        double throttledBefore = count("SendMessage", "RequestThrottled");
        long started = System.nanoTime();

        for (int i = 0; i < 8; i++) {
            String body = "message " + i;
            admin.sendMessage(request -> request.queueUrl(url).messageBody(body));
        }

        // Two calls a second with a burst of two: the last of eight goes three seconds after the first.
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThan(Duration.ofMillis(2900));
        assertThat(count("SendMessage", "RequestThrottled") - throttledBefore).as("calls throttled").isPositive();
        assertThat(admin.getQueueAttributes(request -> request.queueUrl(url)
            .attributeNames(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)).attributes()
            .get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)).as("every message sent once").isEqualTo("8");
        SqsClient impatient = JavaSqsClients.builder(this.port, "acl-admin", "admin-secret")
            .overrideConfiguration(configuration -> configuration.retryStrategy(
                    AwsRetryStrategy.standardRetryStrategy().toBuilder().maxAttempts(1).build()))
            .build();
        this.clients.add(impatient);
        assertThatThrownBy(() -> {
            for (int i = 0; i < 3; i++) {
                impatient.sendMessage(request -> request.queueUrl(url).messageBody("more"));
            }
        }).isInstanceOfSatisfying(SqsException.class, ex -> {
            assertThat(ex.awsErrorDetails().errorCode()).isEqualTo("RequestThrottled");
            assertThat(ex.isThrottlingException()).isTrue();
            assertThat(ex.awsErrorDetails().sdkHttpResponse().firstMatchingHeader("Retry-After")).hasValue("1");
        });
    }

    @Test
    void debiansBoto3RetriesThrottledCallsWithItsDefaultRetries() throws Exception {
        assumeTrue(new File("/usr/bin/python3").canExecute() && new ProcessBuilder("/usr/bin/python3", "-c", "import boto3")
            .start().waitFor() == 0, "/usr/bin/python3 has no boto3: apt-get install python3-boto3");
        double throttledBefore = count("SendMessage", "RequestThrottled");
        String script = """
                import boto3, sys
                sqs = boto3.client("sqs", endpoint_url=sys.argv[1], region_name="us-east-1",
                                   aws_access_key_id="acl-admin", aws_secret_access_key="admin-secret")
                url = sqs.get_queue_url(QueueName="acl-throttled")["QueueUrl"]
                for i in range(6):
                    sqs.send_message(QueueUrl=url, MessageBody="boto3 %d" % i)
                print("sent 6")
                """;
        Process python = new ProcessBuilder("/usr/bin/python3", "-c", script, "http://127.0.0.1:" + this.port + "/sqs")
            .redirectErrorStream(true).start();
        String output = new String(python.getInputStream().readAllBytes(), StandardCharsets.UTF_8);

        assertThat(python.waitFor()).as("boto3's exit code; its output:%n%s", output).isZero();
        assertThat(output).contains("sent 6");
        assertThat(count("SendMessage", "RequestThrottled") - throttledBefore).as("calls throttled and retried")
            .isPositive();
    }

    @Test
    void everyCallIsMeasuredAndLogsItsRequestId() {
        SqsClient admin = client("acl-admin", "admin-secret");
        String url = admin.createQueue(request -> request.queueName("acl-measured")).queueUrl();
        Logger servletLog = (Logger) LoggerFactory.getLogger("io.pgqueue.autoconfigure.sqs.SqsServlet");
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        Level level = servletLog.getLevel();
        servletLog.setLevel(Level.DEBUG);
        servletLog.addAppender(logged);
        try {
            SendMessageResponse sent = admin.sendMessage(request -> request.queueUrl(url).messageBody("x".repeat(300)));
            // The call is measured and logged once its answer is written: the client may read it first.
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(List.copyOf(logged.list))
                .anySatisfy(event -> {
                    assertThat(event.getFormattedMessage()).startsWith("SQS SendMessage answered OK in ");
                    assertThat(event.getMDCPropertyMap()).containsEntry("pgqueue.sqs.requestId",
                            sent.responseMetadata().requestId());
                }));
        }
        finally {
            servletLog.detachAppender(logged);
            servletLog.setLevel(level);
        }
        assertThat(this.meters.get("pgqueue.sqs.message.size").tag("queue", "acl-measured").summary().totalAmount())
            .isEqualTo(300);
        assertThat(count("SendMessage", "OK")).isPositive();
        assertThatThrownBy(() -> admin.getQueueUrl(request -> request.queueName("acl-no-such-queue")))
            .isInstanceOf(SqsException.class);
        await().atMost(Duration.ofSeconds(10)).until(() -> count("GetQueueUrl", "QueueDoesNotExist") == 1);
    }

    @Test
    void aReceiveThatWaitsIsCountedAsWaitingUntilItIsAnswered() throws Exception {
        SqsClient admin = client("acl-admin", "admin-secret");
        String url = admin.createQueue(request -> request.queueName("acl-long-poll")).queueUrl();
        CompletableFuture<List<Message>> waiting = CompletableFuture.supplyAsync(() -> admin.receiveMessage(
                request -> request.queueUrl(url).waitTimeSeconds(10)).messages());

        await().atMost(Duration.ofSeconds(5)).until(() -> this.meters.get("pgqueue.sqs.receives.waiting").gauge()
            .value() == 1);
        admin.sendMessage(request -> request.queueUrl(url).messageBody("wakes it"));

        assertThat(waiting.get(10, TimeUnit.SECONDS)).extracting(Message::body).containsExactly("wakes it");
        assertThat(this.meters.get("pgqueue.sqs.receives.waiting").gauge().value()).isZero();
    }

    private double count(String action, String code) {
        Timer timer = this.meters.find("pgqueue.sqs.requests").tag("action", action).tag("code", code).timer();
        return timer == null ? 0 : timer.count();
    }

    private static void assertDenied(Runnable call, String message) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(SqsException.class, ex -> {
            assertThat(ex.statusCode()).isEqualTo(403);
            assertThat(ex.awsErrorDetails().errorCode()).isEqualTo("AccessDenied");
        }).hasMessageContaining(message);
    }
}
