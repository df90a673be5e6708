package io.pgqueue.sample;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ContextConfiguration;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.CreateQueueResponse;
import software.amazon.awssdk.services.sqs.model.EmptyBatchRequestException;
import software.amazon.awssdk.services.sqs.model.InvalidMessageContentsException;
import software.amazon.awssdk.services.sqs.model.ListQueuesResponse;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageAttributeValue;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueDoesNotExistException;
import software.amazon.awssdk.services.sqs.model.QueueNameExistsException;
import software.amazon.awssdk.services.sqs.model.ResourceNotFoundException;
import software.amazon.awssdk.services.sqs.model.SqsException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * The sample application's SQS API driven by the AWS SDK for Java v2 (from Maven Central, JSON
 * protocol, Signature V4): the calls an application makes and the contract points where a
 * homegrown SQS tends to differ from AWS.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "sample.embedded-postgres.enabled=false", "pgqueue.sqs.enabled=true" })
@ContextConfiguration(initializers = TestDatabaseInitializer.class)
class JavaSdkSqsTests {

    @LocalServerPort
    int port;

    @Value("${pgqueue.sqs.credentials[0].access-key-id}")
    String accessKey;

    @Value("${pgqueue.sqs.credentials[0].secret-access-key}")
    String secretKey;

    private SqsClient sqs;

    @BeforeEach
    void connect() {
        this.sqs = JavaSqsClients.builder(this.port, this.accessKey, this.secretKey).build();
    }

    @AfterEach
    void close() {
        this.sqs.close();
    }

    @Test
    void sendsReceivesWithAttributesAndDeletes() {
        String url = this.sqs.createQueue(request -> request.queueName("java-sdk-orders")
            .attributes(Map.of(QueueAttributeName.VISIBILITY_TIMEOUT, "5"))).queueUrl();

        this.sqs.sendMessage(request -> request.queueUrl(url).messageBody("order 1").messageAttributes(Map.of(
                "priority", MessageAttributeValue.builder().dataType("Number").stringValue("7").build(),
                "source", MessageAttributeValue.builder().dataType("String").stringValue("web").build())));
        List<Message> received = this.sqs.receiveMessage(request -> request.queueUrl(url).waitTimeSeconds(2)
            .messageAttributeNames("All").maxNumberOfMessages(10)).messages();

        assertThat(received).singleElement().satisfies(message -> {
            assertThat(message.body()).isEqualTo("order 1");
            assertThat(message.messageAttributes().get("priority").stringValue()).isEqualTo("7");
            assertThat(message.messageAttributes().get("source").stringValue()).isEqualTo("web");
        });
        this.sqs.deleteMessage(request -> request.queueUrl(url).receiptHandle(received.get(0).receiptHandle()));
        assertThat(this.sqs.getQueueAttributes(request -> request.queueUrl(url)
            .attributeNames(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)).attributes()
            .get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)).isEqualTo("0");
    }

    @Test
    void createQueueIsIdempotentKeepsItsTagsAndRefusesOnlyADifferentGivenAttribute() {
        CreateQueueResponse created = this.sqs.createQueue(request -> request.queueName("java-sdk-tagged")
            .tags(Map.of("team", "billing")));
        this.sqs.setQueueAttributes(request -> request.queueUrl(created.queueUrl())
            .attributes(Map.of(QueueAttributeName.DELAY_SECONDS, "3")));

        // A second service asks for the queue by name only: the URL, whatever the queue's attributes.
        assertThat(this.sqs.createQueue(request -> request.queueName("java-sdk-tagged")).queueUrl())
            .isEqualTo(created.queueUrl());
        assertThat(this.sqs.listQueueTags(request -> request.queueUrl(created.queueUrl())).tags())
            .containsEntry("team", "billing");
        assertThatThrownBy(() -> this.sqs.createQueue(request -> request.queueName("java-sdk-tagged")
            .attributes(Map.of(QueueAttributeName.DELAY_SECONDS, "4")))).isInstanceOf(QueueNameExistsException.class);
    }

    @Test
    void errorsArriveAsTheSdksExceptionTypes() {
        String url = this.sqs.createQueue(request -> request.queueName("java-sdk-errors")).queueUrl();

        assertThatThrownBy(() -> this.sqs.getQueueUrl(request -> request.queueName("java-sdk-no-such-queue")))
            .isInstanceOf(QueueDoesNotExistException.class);
        assertThatThrownBy(() -> this.sqs.sendMessageBatch(request -> request.queueUrl(url).entries(List.of())))
            .isInstanceOf(EmptyBatchRequestException.class);
        assertThatThrownBy(() -> this.sqs.sendMessage(request -> request.queueUrl(url).messageBody("bad \u0008 body")))
            .isInstanceOf(InvalidMessageContentsException.class);
        assertThatThrownBy(() -> this.sqs.sendMessage(request -> request.queueUrl(url).messageBody("x").messageAttributes(
                Map.of("n", MessageAttributeValue.builder().dataType("Number").stringValue("abc").build()))))
            .isInstanceOfSatisfying(SqsException.class, ex -> assertThat(ex.statusCode()).isEqualTo(400));
        assertThatThrownBy(() -> this.sqs.createQueue(request -> request.queueName("java-sdk-named.fifo")))
            .isInstanceOfSatisfying(SqsException.class, ex -> assertThat(ex.statusCode()).isEqualTo(400));
    }

    @Test
    void aFifoQueueKeepsTheOrderOfAGroupAndDropsADuplicate() {
        String url = this.sqs.createQueue(request -> request.queueName("java-sdk-steps.fifo")
            .attributes(Map.of(QueueAttributeName.FIFO_QUEUE, "true"))).queueUrl();
        for (int i = 1; i <= 3; i++) {
            String body = "step " + i;
            this.sqs.sendMessage(request -> request.queueUrl(url).messageBody(body).messageGroupId("order-7")
                .messageDeduplicationId(body.replace(' ', '-')));
        }
        this.sqs.sendMessage(request -> request.queueUrl(url).messageBody("step 1 again").messageGroupId("order-7")
            .messageDeduplicationId("step-1"));

        List<Message> received = this.sqs.receiveMessage(request -> request.queueUrl(url).maxNumberOfMessages(10)
            .waitTimeSeconds(1)).messages();

        assertThat(received).extracting(Message::body).containsExactly("step 1", "step 2", "step 3");
    }

    @Test
    void aStandardQueueKeepsTheMessageGroupItWasSentWithIntoItsDeadLetterQueue() {
        String deadLetters = this.sqs.createQueue(request -> request.queueName("java-sdk-tenants-dlq")).queueUrl();
        String arn = this.sqs.getQueueAttributes(request -> request.queueUrl(deadLetters)
            .attributeNames(QueueAttributeName.QUEUE_ARN)).attributes().get(QueueAttributeName.QUEUE_ARN);
        String url = this.sqs.createQueue(request -> request.queueName("java-sdk-tenants").attributes(Map.of(
                QueueAttributeName.REDRIVE_POLICY, "{\"deadLetterTargetArn\":\"" + arn + "\",\"maxReceiveCount\":1}")))
            .queueUrl();
        this.sqs.sendMessage(request -> request.queueUrl(url).messageBody("of tenant a").messageGroupId("tenant-a"));
        this.sqs.sendMessage(request -> request.queueUrl(url).messageBody("of no tenant"));

        List<Message> received = this.sqs.receiveMessage(request -> request.queueUrl(url).maxNumberOfMessages(10)
            .messageSystemAttributeNames(MessageSystemAttributeName.ALL).visibilityTimeout(0)).messages();

        assertThat(received).hasSize(2).allSatisfy(message -> assertThat(message.attributes()
            .get(MessageSystemAttributeName.MESSAGE_GROUP_ID)).isEqualTo(message.body().equals("of tenant a")
                    ? "tenant-a" : null));
        assertThat(this.sqs.receiveMessage(request -> request.queueUrl(url).maxNumberOfMessages(10)).messages())
            .as("received once already: both move to the dead-letter queue").isEmpty();
        assertThat(this.sqs.receiveMessage(request -> request.queueUrl(deadLetters).maxNumberOfMessages(10)
                .messageSystemAttributeNames(MessageSystemAttributeName.MESSAGE_GROUP_ID)).messages())
            .extracting(Message::body, message -> message.attributes().get(MessageSystemAttributeName.MESSAGE_GROUP_ID))
            .containsExactlyInAnyOrder(tuple("of tenant a", "tenant-a"),
                    tuple("of no tenant", null));
    }

    @Test
    void listQueuesPagesWithoutATokenAfterAFullLastPage() {
        for (int i = 0; i < 4; i++) {
            String name = "java-sdk-page-" + i;
            this.sqs.createQueue(request -> request.queueName(name));
        }

        ListQueuesResponse first = this.sqs.listQueues(request -> request.queueNamePrefix("java-sdk-page-").maxResults(2));
        ListQueuesResponse second = this.sqs.listQueues(request -> request.queueNamePrefix("java-sdk-page-").maxResults(2)
            .nextToken(first.nextToken()));

        assertThat(first.queueUrls()).hasSize(2);
        assertThat(first.nextToken()).isNotNull();
        assertThat(second.queueUrls()).hasSize(2).doesNotContainAnyElementsOf(first.queueUrls());
        assertThat(second.nextToken()).as("the last page was full, and there is no more").isNull();
    }

    @Test
    void aMoveTaskReturnsDeadLettersToTheirSourceAtItsRateAndIsListedAndRefusedAsSqsDoes() {
        String deadLetters = this.sqs.createQueue(request -> request.queueName("java-sdk-moves-dlq")).queueUrl();
        String deadArn = arn(deadLetters);
        String source = this.sqs.createQueue(request -> request.queueName("java-sdk-moves").attributes(Map.of(
                QueueAttributeName.REDRIVE_POLICY, "{\"deadLetterTargetArn\":\"" + deadArn + "\",\"maxReceiveCount\":1}")))
            .queueUrl();
        for (int i = 0; i < 6; i++) {
            String body = "failing " + i;
            this.sqs.sendMessage(request -> request.queueUrl(source).messageBody(body));
        }
        // Each message's second receive moves it to the dead-letter queue.
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            this.sqs.receiveMessage(request -> request.queueUrl(source).maxNumberOfMessages(10).visibilityTimeout(0));
            return count(deadLetters) == 6;
        });

        String handle = this.sqs.startMessageMoveTask(request -> request.sourceArn(deadArn)
            .maxNumberOfMessagesPerSecond(2)).taskHandle();

        assertThat(this.sqs.listMessageMoveTasks(request -> request.sourceArn(deadArn)).results())
            .singleElement().satisfies(task -> {
                assertThat(task.taskHandle()).isEqualTo(handle);
                assertThat(task.status()).isEqualTo("RUNNING");
                assertThat(task.maxNumberOfMessagesPerSecond()).isEqualTo(2);
                assertThat(task.approximateNumberOfMessagesToMove()).isEqualTo(6);
            });
        assertThatThrownBy(() -> this.sqs.startMessageMoveTask(request -> request.sourceArn(deadArn)))
            .isInstanceOf(software.amazon.awssdk.services.sqs.model.UnsupportedOperationException.class);
        await().atMost(Duration.ofSeconds(30)).until(() -> this.sqs.listMessageMoveTasks(request -> request
            .sourceArn(deadArn)).results().get(0).status().equals("COMPLETED"));
        assertThat(this.sqs.listMessageMoveTasks(request -> request.sourceArn(deadArn)).results().get(0))
            .satisfies(task -> {
                assertThat(task.approximateNumberOfMessagesMoved()).isEqualTo(6);
                assertThat(task.taskHandle()).as("only a running task shows its handle").isNull();
                assertThat(task.sourceArn()).isEqualTo(deadArn);
            });
        assertThat(count(source)).as("back in the queue they came from").isEqualTo(6);
        assertThatThrownBy(() -> this.sqs.cancelMessageMoveTask(request -> request.taskHandle(handle)))
            .isInstanceOf(software.amazon.awssdk.services.sqs.model.UnsupportedOperationException.class);
        assertThatThrownBy(() -> this.sqs.startMessageMoveTask(request -> request.sourceArn(deadArn.replace(
                "java-sdk-moves-dlq", "java-sdk-no-such-dlq")))).isInstanceOf(ResourceNotFoundException.class);
        assertThatThrownBy(() -> this.sqs.cancelMessageMoveTask(request -> request.taskHandle("no-such-task")))
            .isInstanceOf(ResourceNotFoundException.class);
    }

    @Test
    void theSamplesDeclaredQueuesExistAndItsProducerKeyOnlySendsToThem() {
        String events = this.sqs.getQueueUrl(request -> request.queueName("audit-events")).queueUrl();
        assertThat(this.sqs.getQueueAttributes(request -> request.queueUrl(events).attributeNames(QueueAttributeName.ALL))
            .attributesAsStrings()).containsEntry("VisibilityTimeout", "60")
            .hasEntrySatisfying("RedrivePolicy", policy -> assertThat(policy).contains("audit-events-dlq"));
        try (SqsClient producer = JavaSqsClients.builder(this.port, "sample-producer", "producer-secret").build()) {
            producer.sendMessage(request -> request.queueUrl(events).messageBody("from the producer"));
            assertThatThrownBy(() -> producer.receiveMessage(request -> request.queueUrl(events)))
                .isInstanceOfSatisfying(SqsException.class, ex -> assertThat(ex.awsErrorDetails().errorCode())
                    .isEqualTo("AccessDenied"));
        }
        assertThat(this.sqs.receiveMessage(request -> request.queueUrl(events).waitTimeSeconds(1)).messages())
            .extracting(Message::body).containsExactly("from the producer");
    }

    private String arn(String url) {
        return this.sqs.getQueueAttributes(request -> request.queueUrl(url).attributeNames(QueueAttributeName.QUEUE_ARN))
            .attributes().get(QueueAttributeName.QUEUE_ARN);
    }

    private int count(String url) {
        return Integer.parseInt(this.sqs.getQueueAttributes(request -> request.queueUrl(url)
            .attributeNames(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)).attributes()
            .get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES));
    }
}
