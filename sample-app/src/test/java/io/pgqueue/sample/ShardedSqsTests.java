package io.pgqueue.sample;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import javax.sql.DataSource;

import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.test.context.ContextConfiguration;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequestEntry;
import software.amazon.awssdk.services.sqs.model.Message;
import software.amazon.awssdk.services.sqs.model.MessageSystemAttributeName;
import software.amazon.awssdk.services.sqs.model.QueueAttributeName;
import software.amazon.awssdk.services.sqs.model.SendMessageBatchRequestEntry;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample application on three shards (its database and two more), its message queues driven
 * by the AWS SDK for Java v2: messages spread over the shards, and every call finds them.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "sample.embedded-postgres.enabled=false", "pgqueue.sqs.enabled=true" })
@ContextConfiguration(initializers = TestDatabaseInitializer.ThreeShards.class)
class ShardedSqsTests {

    @LocalServerPort
    int port;

    @Value("${pgqueue.sqs.credentials[0].access-key-id}")
    String accessKey;

    @Value("${pgqueue.sqs.credentials[0].secret-access-key}")
    String secretKey;

    @Autowired
    DataSource main;

    @Value("${pgqueue.shards.shard-1.url}")
    String shard1;

    @Value("${pgqueue.shards.shard-2.url}")
    String shard2;

    @Value("${pgqueue.shards.shard-1.username:}")
    String user;

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
    void theAuditQueuesMessagesSpreadOverTheThreeShardsAndAreReceivedAndDeletedFromEach() {
        String url = this.sqs.getQueueUrl(request -> request.queueName("audit-events")).queueUrl();
        // Single sends each go to a shard picked at random; a batch's messages go to one together.
        for (int i = 0; i < 50; i++) {
            int single = i;
            this.sqs.sendMessage(request -> request.queueUrl(url).messageBody("audit " + single));
        }
        for (int b = 0; b < 5; b++) {
            int batch = b;
            this.sqs.sendMessageBatch(request -> request.queueUrl(url).entries(IntStream.range(0, 10)
                .mapToObj(i -> SendMessageBatchRequestEntry.builder().id("e" + i).messageBody("audit " + batch + "/" + i)
                    .build()).toList()));
        }
        Map<String, Long> perShard = counts();
        assertThat(perShard.values()).as("messages per shard %s", perShard).allMatch(count -> count > 0);
        assertThat(perShard.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(100);
        assertThat(this.sqs.getQueueAttributes(request -> request.queueUrl(url)
            .attributeNames(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)).attributes()
            .get(QueueAttributeName.APPROXIMATE_NUMBER_OF_MESSAGES)).isEqualTo("100");

        List<String> bodies = new ArrayList<>();
        while (bodies.size() < 100) {
            List<Message> received = this.sqs.receiveMessage(request -> request.queueUrl(url).maxNumberOfMessages(10)
                .waitTimeSeconds(1)).messages();
            assertThat(received).isNotEmpty();
            received.forEach(message -> bodies.add(message.body()));
            assertThat(this.sqs.deleteMessageBatch(request -> request.queueUrl(url).entries(received.stream()
                .map(message -> DeleteMessageBatchRequestEntry.builder().id(message.messageId())
                    .receiptHandle(message.receiptHandle()).build()).toList())).failed()).isEmpty();
        }
        assertThat(bodies).doesNotHaveDuplicates().hasSize(100);
        assertThat(counts().values()).allMatch(count -> count == 0);
    }

    @Test
    void aFifoQueueDeduplicatesPerGroupAndKeepsEachGroupsOrder() {
        String url = this.sqs.createQueue(request -> request.queueName("sharded-steps.fifo")
            .attributes(Map.of(QueueAttributeName.FIFO_QUEUE, "true"))).queueUrl();
        assertThat(this.sqs.getQueueAttributes(request -> request.queueUrl(url)
            .attributeNames(QueueAttributeName.ALL)).attributesAsStrings())
            .containsEntry("DeduplicationScope", "messageGroup").containsEntry("FifoThroughputLimit", "perMessageGroupId");
        List<String> groups = List.of("tenant-a", "tenant-b", "tenant-c", "tenant-d");
        for (int i = 0; i < 5; i++) {
            for (String group : groups) {
                int step = i;
                this.sqs.sendMessage(request -> request.queueUrl(url).messageBody(group + " step " + step)
                    .messageGroupId(group).messageDeduplicationId("step-" + step));
            }
        }
        Map<String, List<String>> received = new LinkedHashMap<>();
        int count = 0;
        while (count < 20) {
            List<Message> batch = this.sqs.receiveMessage(request -> request.queueUrl(url).maxNumberOfMessages(10)
                .waitTimeSeconds(1).messageSystemAttributeNames(MessageSystemAttributeName.MESSAGE_GROUP_ID)).messages();
            assertThat(batch).isNotEmpty();
            for (Message message : batch) {
                received.computeIfAbsent(message.attributes().get(MessageSystemAttributeName.MESSAGE_GROUP_ID),
                        group -> new ArrayList<>()).add(message.body());
                this.sqs.deleteMessage(request -> request.queueUrl(url).receiptHandle(message.receiptHandle()));
            }
            count += batch.size();
        }
        for (String group : groups) {
            assertThat(received.get(group)).containsExactlyElementsOf(IntStream.range(0, 5)
                .mapToObj(i -> group + " step " + i).toList());
        }
    }

    private Map<String, Long> counts() {
        Map<String, Long> counts = new LinkedHashMap<>();
        counts.put("main", count(this.main));
        counts.put("shard-1", count(new DriverManagerDataSource(this.shard1, this.user, "")));
        counts.put("shard-2", count(new DriverManagerDataSource(this.shard2, this.user, "")));
        return counts;
    }

    private static long count(DataSource dataSource) {
        return new JdbcTemplate(dataSource).queryForObject("SELECT count(*) FROM pgqueue.message", Long.class);
    }
}
