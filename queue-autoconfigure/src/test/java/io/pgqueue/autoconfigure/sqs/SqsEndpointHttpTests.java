package io.pgqueue.autoconfigure.sqs;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.pgqueue.autoconfigure.console.QueueConsoleHttpTests;
import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ContextConfiguration;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The SQS endpoint over real HTTP on a real server, both wire protocols, without signatures
 * (anonymous access): request and response shapes, error shapes, and a waiting receive answered
 * asynchronously when a message comes.
 */
@SpringBootTest(classes = SqsEndpointHttpTests.SqsApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "pgqueue.sqs.enabled=true", "pgqueue.sqs.allow-anonymous=true", "pgqueue.workers.enabled=false",
                QueueConsoleHttpTests.WITHOUT_SECURITY })
@ContextConfiguration(initializers = TestDatabaseInitializer.class)
class SqsEndpointHttpTests {

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class SqsApplication {
    }

    private static final HttpClient http = HttpClient.newHttpClient();

    @LocalServerPort
    int port;

    private HttpResponse<String> json(String action, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/sqs/"))
            .header("X-Amz-Target", "AmazonSQS." + action)
            .header("Content-Type", "application/x-amz-json-1.0")
            .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private CompletableFuture<HttpResponse<String>> query(String path, String... pairs) {
        StringBuilder form = new StringBuilder();
        for (int i = 0; i < pairs.length; i += 2) {
            form.append(form.isEmpty() ? "" : "&").append(URLEncoder.encode(pairs[i], StandardCharsets.UTF_8)).append('=')
                .append(URLEncoder.encode(pairs[i + 1], StandardCharsets.UTF_8));
        }
        return http.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
            .header("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
            .POST(HttpRequest.BodyPublishers.ofString(form.toString())).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode tree(HttpResponse<String> response) {
        return JsonMapper.builder().build().readTree(response.body());
    }

    @Test
    void tagsAreCountedAndMeasuredAtCreationToo() throws Exception {
        StringBuilder many = new StringBuilder();
        for (int i = 0; i < 51; i++) {
            many.append(i == 0 ? "" : ",").append("\"k").append(i).append("\":\"v\"");
        }
        for (String tags : List.of(many.toString(), "\"" + "k".repeat(129) + "\":\"v\"", "\"k\":\"" + "v".repeat(257) + "\"",
                "\"k\":\"\\u0008\"", "\"k\":\"\\ufffe\"")) {
            HttpResponse<String> created = json("CreateQueue", "{\"QueueName\":\"measured-tags-q\",\"tags\":{" + tags + "}}");
            assertThat(created.statusCode()).as(tags).isEqualTo(400);
            assertThat(tree(created).get("__type").asString()).isEqualTo("com.amazonaws.sqs#InvalidParameterValue");
        }
        assertThat(json("GetQueueUrl", "{\"QueueName\":\"measured-tags-q\"}").statusCode()).as("nothing created").isEqualTo(400);
        String url = tree(json("CreateQueue", "{\"QueueName\":\"measured-tags-q\",\"tags\":{\"" + "k".repeat(128) + "\":\""
                + "v".repeat(256) + "\"}}")).get("QueueUrl").asString();
        HttpResponse<String> poison = json("TagQueue", "{\"QueueUrl\":\"" + url + "\",\"Tags\":{\"team\":\"\\u0001\"}}");
        assertThat(poison.statusCode()).isEqualTo(400);
        assertThat(tree(poison).get("message").asString()).contains("The value of tag 'team' has invalid characters");
    }

    @Test
    void valuesThatAreNotStringsOrDoNotFitAreRefusedAsSqsDoes() throws Exception {
        String url = tree(json("CreateQueue", "{\"QueueName\":\"shapes-q\"}")).get("QueueUrl").asString();
        for (String request : List.of(
                "SetQueueAttributes|{\"QueueUrl\":\"" + url + "\",\"Attributes\":{\"VisibilityTimeout\":{\"a\":1}}}",
                "SetQueueAttributes|{\"QueueUrl\":\"" + url + "\",\"Attributes\":{\"RedrivePolicy\":[1,2]}}",
                "TagQueue|{\"QueueUrl\":\"" + url + "\",\"Tags\":{\"k\":[1]}}",
                "SetQueueAttributes|{\"QueueUrl\":\"" + url + "\",\"Attributes\":{\"MaximumMessageSize\":\"4294968320\"}}",
                "SendMessage|{\"QueueUrl\":\"" + url + "\",\"MessageBody\":\"x\",\"MessageAttributes\":{\"a\":"
                        + "{\"DataType\":\"String\",\"StringValue\":\"\\u0008\"}}}")) {
            String[] parts = request.split("\\|", 2);
            HttpResponse<String> refused = json(parts[0], parts[1]);
            assertThat(refused.statusCode()).as(request).isEqualTo(400);
            assertThat(tree(refused).get("__type").asString()).as(request).startsWith("com.amazonaws.sqs#Invalid");
        }
        assertThat(tree(json("GetQueueAttributes", "{\"QueueUrl\":\"" + url + "\",\"AttributeNames\":[\"All\"]}"))
            .get("Attributes").get("MaximumMessageSize").asString()).as("unchanged").isEqualTo("1048576");
    }

    @Test
    void theQueryProtocolBoundsParameterNamesAndListIndexes() throws Exception {
        String url = tree(json("CreateQueue", "{\"QueueName\":\"names-q\"}")).get("QueueUrl").asString();
        for (String name : List.of(".".repeat(4000), "a." + "b.".repeat(2000) + "c", "MessageAttribute..Name")) {
            HttpResponse<String> refused = query("/sqs/", "Action", "SendMessage", "QueueUrl", url, "MessageBody", "x",
                    name, "v").get();
            assertThat(refused.statusCode()).isEqualTo(400);
            assertThat(refused.body()).contains("<Code>InvalidParameterValue</Code>");
        }
        HttpResponse<String> fiveDigits = query("/sqs/", "Action", "SendMessage", "QueueUrl", url, "MessageBody", "x",
                "MessageAttribute.10000.Name", "a", "MessageAttribute.10000.Value.DataType", "String",
                "MessageAttribute.10000.Value.StringValue", "v").get();
        assertThat(fiveDigits.statusCode()).as("not silently dropped").isEqualTo(400);
        assertThat(fiveDigits.body()).contains("list index 10000 is out of range");
    }

    @Test
    void aNulCharacterInAnyStringIsAClientErrorOnBothProtocols() throws Exception {
        String url = tree(json("CreateQueue", "{\"QueueName\":\"nul-q\"}")).get("QueueUrl").asString();
        Map<String, String> requests = new java.util.LinkedHashMap<>();
        requests.put("queue url", "SendMessage|{\"QueueUrl\":\"" + url + "\\u0000\",\"MessageBody\":\"x\"}");
        requests.put("queue name", "GetQueueUrl|{\"QueueName\":\"nul\\u0000q\"}");
        requests.put("new queue name", "CreateQueue|{\"QueueName\":\"nul\\u0000q\"}");
        requests.put("body", "SendMessage|{\"QueueUrl\":\"" + url + "\",\"MessageBody\":\"a\\u0000b\"}");
        requests.put("attribute name", "SendMessage|{\"QueueUrl\":\"" + url + "\",\"MessageBody\":\"x\",\"MessageAttributes\":"
                + "{\"a\\u0000\":{\"DataType\":\"String\",\"StringValue\":\"v\"}}}");
        requests.put("attribute value", "SendMessage|{\"QueueUrl\":\"" + url + "\",\"MessageBody\":\"x\",\"MessageAttributes\":"
                + "{\"a\":{\"DataType\":\"String\",\"StringValue\":\"v\\u0000\"}}}");
        requests.put("receipt handle", "DeleteMessage|{\"QueueUrl\":\"" + url + "\",\"ReceiptHandle\":\"a\\u0000b\"}");
        requests.put("tag", "TagQueue|{\"QueueUrl\":\"" + url + "\",\"Tags\":{\"k\":\"\\u0000\"}}");
        requests.put("redrive target", "SetQueueAttributes|{\"QueueUrl\":\"" + url + "\",\"Attributes\":{\"RedrivePolicy\":"
                + "\"{\\\"deadLetterTargetArn\\\":\\\"arn:aws:sqs:us-east-1:000000000000:d\\\\u0000\\\",\\\"maxReceiveCount\\\":3}\"}}");
        requests.forEach((field, request) -> {
            String[] parts = request.split("\\|", 2);
            try {
                HttpResponse<String> refused = json(parts[0], parts[1]);
                assertThat(refused.statusCode()).as(field + ": " + refused.body()).isEqualTo(400);
            }
            catch (Exception ex) {
                throw new IllegalStateException(ex);
            }
        });
        assertThat(tree(json("ListQueues", "{\"QueueNamePrefix\":\"nul\\u0000\"}")).get("QueueUrls"))
            .as("no queue has such a name").isNull();

        HttpResponse<String> queryUrl = query("/sqs/", "Action", "SendMessage", "QueueUrl", url + "\u0000",
                "MessageBody", "x").get();
        assertThat(queryUrl.statusCode()).isEqualTo(400);
        assertThat(queryUrl.body()).contains("<Code>AWS.SimpleQueueService.NonExistentQueue</Code>")
            .as("the XML error echoes no character XML cannot hold").doesNotContain("\u0000");
        javax.xml.parsers.DocumentBuilderFactory.newInstance().newDocumentBuilder()
            .parse(new java.io.ByteArrayInputStream(queryUrl.body().getBytes(StandardCharsets.UTF_8)));
        assertThat(query("/sqs/", "Action", "GetQueueUrl", "QueueName", "nul\u0000").get().statusCode()).isEqualTo(400);
        assertThat(query("/sqs/", "Action", "ListQueues", "QueueNamePrefix", "a\u0000").get().statusCode()).isEqualTo(200);
    }

    @Test
    void anUnsignedRequestChangesNoQueueByGetFromAFormOrFromAnotherSite() throws Exception {
        String url = tree(json("CreateQueue", "{\"QueueName\":\"cross-site-q\"}")).get("QueueUrl").asString();
        String base = "http://127.0.0.1:" + this.port;
        String send = "Action=SendMessage&MessageBody=x&QueueUrl=" + URLEncoder.encode(url, StandardCharsets.UTF_8);

        HttpResponse<String> byGet = http.send(HttpRequest.newBuilder(URI.create(base + "/sqs/?" + send)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> asPlainText = http.send(HttpRequest.newBuilder(URI.create(base + "/sqs/?Action=PurgeQueue&QueueUrl="
                + URLEncoder.encode(url, StandardCharsets.UTF_8))).header("Content-Type", "text/plain")
            .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
        HttpResponse<String> fromAnotherSite = http.send(HttpRequest.newBuilder(URI.create(base + "/sqs/"))
            .header("Content-Type", "application/x-www-form-urlencoded").header("Origin", "https://evil.example")
            .POST(HttpRequest.BodyPublishers.ofString(send)).build(), HttpResponse.BodyHandlers.ofString());
        for (HttpResponse<String> refused : List.of(byGet, asPlainText, fromAnotherSite)) {
            assertThat(refused.statusCode()).as(refused.body()).isEqualTo(403);
            assertThat(refused.body()).contains("<Code>AccessDenied</Code>");
        }
        assertThat(tree(json("GetQueueAttributes", "{\"QueueUrl\":\"" + url + "\",\"AttributeNames\":"
                + "[\"ApproximateNumberOfMessages\"]}")).get("Attributes").get("ApproximateNumberOfMessages").asString())
            .as("nothing sent").isEqualTo("0");

        // Reads by GET, and a client's own POST (no Origin), still work.
        assertThat(http.send(HttpRequest.newBuilder(URI.create(base + "/sqs/?Action=ListQueues")).GET().build(),
                HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
        assertThat(query("/sqs/", "Action", "SendMessage", "QueueUrl", url, "MessageBody", "x").get().statusCode())
            .isEqualTo(200);
        assertThat(http.send(HttpRequest.newBuilder(URI.create(base + "/sqs/"))
            .header("Content-Type", "application/x-www-form-urlencoded").header("Origin", base)
            .POST(HttpRequest.BodyPublishers.ofString(send)).build(), HttpResponse.BodyHandlers.ofString()).statusCode())
            .as("a page of the same site").isEqualTo(200);
    }

    @Test
    void theJsonProtocolSendsReceivesAndDeletes() throws Exception {
        HttpResponse<String> created = json("CreateQueue", "{\"QueueName\":\"json-q\",\"Attributes\":{\"VisibilityTimeout\":\"10\"}}");
        assertThat(created.statusCode()).isEqualTo(200);
        assertThat(created.headers().firstValue("Content-Type")).hasValueSatisfying(
                type -> assertThat(type).startsWith("application/x-amz-json-1.0"));
        String url = tree(created).get("QueueUrl").asString();
        assertThat(url).isEqualTo("http://127.0.0.1:" + this.port + "/sqs/000000000000/json-q");

        JsonNode sent = tree(json("SendMessage", "{\"QueueUrl\":\"" + url + "\",\"MessageBody\":\"hello\","
                + "\"MessageAttributes\":{\"attribName1\":{\"DataType\":\"String\",\"StringValue\":\"attribValue 1\"}}}"));
        assertThat(sent.get("MD5OfMessageBody").asString()).isEqualTo("5d41402abc4b2a76b9719d911017c592");
        assertThat(sent.get("MD5OfMessageAttributes").asString()).isEqualTo("19e27d4e946b072f3f58da80d94fd778");

        JsonNode received = tree(json("ReceiveMessage", "{\"QueueUrl\":\"" + url + "\",\"MaxNumberOfMessages\":10,"
                + "\"MessageAttributeNames\":[\"All\"],\"MessageSystemAttributeNames\":[\"ApproximateReceiveCount\"]}"));
        JsonNode message = received.get("Messages").get(0);
        assertThat(message.get("Body").asString()).isEqualTo("hello");
        assertThat(message.get("Attributes").get("ApproximateReceiveCount").asString()).isEqualTo("1");
        assertThat(message.get("Attributes").has("SentTimestamp")).isFalse();
        assertThat(message.get("MD5OfMessageAttributes").asString()).isEqualTo("19e27d4e946b072f3f58da80d94fd778");

        assertThat(json("DeleteMessage", "{\"QueueUrl\":\"" + url + "\",\"ReceiptHandle\":\""
                + message.get("ReceiptHandle").asString() + "\"}").statusCode()).isEqualTo(200);
        JsonNode attributes = tree(json("GetQueueAttributes", "{\"QueueUrl\":\"" + url + "\",\"AttributeNames\":[\"All\"]}"))
            .get("Attributes");
        assertThat(attributes.get("ApproximateNumberOfMessages").asString()).isEqualTo("0");
        assertThat(attributes.get("VisibilityTimeout").asString()).isEqualTo("10");
        assertThat(attributes.get("QueueArn").asString()).isEqualTo("arn:aws:sqs:us-east-1:000000000000:json-q");

        // An attribute accepted and ignored on writes is not an unknown one when asked for.
        HttpResponse<String> ignored = json("GetQueueAttributes", "{\"QueueUrl\":\"" + url + "\",\"AttributeNames\":"
                + "[\"Policy\",\"VisibilityTimeout\"]}");
        assertThat(ignored.statusCode()).isEqualTo(200);
        assertThat(tree(ignored).get("Attributes").propertyNames()).containsExactly("VisibilityTimeout");
        HttpResponse<String> unknown = json("GetQueueAttributes", "{\"QueueUrl\":\"" + url + "\",\"AttributeNames\":"
                + "[\"Colour\"]}");
        assertThat(tree(unknown).get("__type").asString()).isEqualTo("com.amazonaws.sqs#InvalidAttributeName");
    }

    @Test
    void jsonErrorsCarryTypeAndQueryCode() throws Exception {
        HttpResponse<String> missing = json("GetQueueUrl", "{\"QueueName\":\"nope\"}");
        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(tree(missing).get("__type").asString()).isEqualTo("com.amazonaws.sqs#QueueDoesNotExist");
        assertThat(missing.headers().firstValue("x-amzn-query-error"))
            .hasValue("AWS.SimpleQueueService.NonExistentQueue;Sender");
        HttpResponse<String> unknown = json("Frobnicate", "{}");
        assertThat(tree(unknown).get("__type").asString()).isEqualTo("com.amazonaws.sqs#InvalidAction");
        HttpResponse<String> malformed = json("ListQueues", "not json");
        assertThat(malformed.statusCode()).isEqualTo(400);
    }

    @Test
    void createQueueReturnsAnExistingQueueUnlessAGivenAttributeDiffers() throws Exception {
        String url = tree(json("CreateQueue", "{\"QueueName\":\"changed-q\"}")).get("QueueUrl").asString();
        assertThat(json("SetQueueAttributes", "{\"QueueUrl\":\"" + url + "\",\"Attributes\":{\"VisibilityTimeout\":\"45\"}}")
            .statusCode()).isEqualTo(200);
        // A service that creates the queue at start-up with only the attributes it cares about.
        HttpResponse<String> nameOnly = json("CreateQueue", "{\"QueueName\":\"changed-q\"}");
        assertThat(nameOnly.statusCode()).isEqualTo(200);
        assertThat(tree(nameOnly).get("QueueUrl").asString()).isEqualTo(url);
        assertThat(json("CreateQueue", "{\"QueueName\":\"changed-q\",\"Attributes\":{\"VisibilityTimeout\":\"45\"}}")
            .statusCode()).isEqualTo(200);
        HttpResponse<String> differs = json("CreateQueue", "{\"QueueName\":\"changed-q\",\"Attributes\":"
                + "{\"VisibilityTimeout\":\"46\"}}");
        assertThat(differs.statusCode()).isEqualTo(400);
        assertThat(tree(differs).get("__type").asString()).isEqualTo("com.amazonaws.sqs#QueueNameExists");
    }

    @Test
    void createQueueKeepsTheTagsOfTheJsonProtocol() throws Exception {
        String url = tree(json("CreateQueue", "{\"QueueName\":\"tagged-q\",\"tags\":{\"team\":\"billing\"}}"))
            .get("QueueUrl").asString();
        JsonNode tags = tree(json("ListQueueTags", "{\"QueueUrl\":\"" + url + "\"}")).get("Tags");
        assertThat(tags).isNotNull();
        assertThat(tags.get("team").asString()).isEqualTo("billing");
    }

    @Test
    void numberAttributesMustBeNumbersAndNoValueEmpty() throws Exception {
        String url = tree(json("CreateQueue", "{\"QueueName\":\"attributes-q\"}")).get("QueueUrl").asString();
        for (String attribute : List.of("{\"DataType\":\"Number\",\"StringValue\":\"abc\"}",
                "{\"DataType\":\"Number\",\"StringValue\":\"1e400\"}",
                "{\"DataType\":\"String\",\"StringValue\":\"\"}", "{\"DataType\":\"Number\",\"StringValue\":\"\"}")) {
            HttpResponse<String> refused = json("SendMessage", "{\"QueueUrl\":\"" + url + "\",\"MessageBody\":\"x\","
                    + "\"MessageAttributes\":{\"a\":" + attribute + "}}");
            assertThat(refused.statusCode()).as(attribute).isEqualTo(400);
            assertThat(tree(refused).get("__type").asString()).as(attribute)
                .isEqualTo("com.amazonaws.sqs#InvalidParameterValue");
        }
        assertThat(json("SendMessage", "{\"QueueUrl\":\"" + url + "\",\"MessageBody\":\"x\",\"MessageAttributes\":"
                + "{\"a\":{\"DataType\":\"Number.float\",\"StringValue\":\"-1.5e3\"}}}").statusCode()).isEqualTo(200);
        assertThat(tree(json("GetQueueAttributes", "{\"QueueUrl\":\"" + url + "\",\"AttributeNames\":"
                + "[\"ApproximateNumberOfMessages\"]}")).get("Attributes").get("ApproximateNumberOfMessages").asString())
            .as("only the valid message stored").isEqualTo("1");
    }

    @Test
    void aFullLastPageOfQueuesEndsTheListingWithoutANextToken() throws Exception {
        for (String name : List.of("paged-a", "paged-b", "paged-c", "paged-d")) {
            assertThat(json("CreateQueue", "{\"QueueName\":\"" + name + "\"}").statusCode()).isEqualTo(200);
        }
        JsonNode first = tree(json("ListQueues", "{\"QueueNamePrefix\":\"paged-\",\"MaxResults\":2}"));
        assertThat(first.get("QueueUrls")).hasSize(2);
        assertThat(first.has("NextToken")).isTrue();
        JsonNode last = tree(json("ListQueues", "{\"QueueNamePrefix\":\"paged-\",\"MaxResults\":2,\"NextToken\":\""
                + first.get("NextToken").asString() + "\"}"));
        assertThat(last.get("QueueUrls")).hasSize(2);
        assertThat(last.has("NextToken")).as("a token after the exactly full last page").isFalse();
    }

    @Test
    void aQueueNamedFifoNeedsFifoQueueTrueAsOnSqs() throws Exception {
        HttpResponse<String> refused = json("CreateQueue", "{\"QueueName\":\"suffix-only.fifo\"}");
        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(tree(refused).get("__type").asString()).isEqualTo("com.amazonaws.sqs#InvalidParameterValue");
        assertThat(tree(json("GetQueueUrl", "{\"QueueName\":\"suffix-only.fifo\"}")).get("__type").asString())
            .as("nothing created").isEqualTo("com.amazonaws.sqs#QueueDoesNotExist");
        assertThat(json("CreateQueue", "{\"QueueName\":\"declared.fifo\",\"Attributes\":{\"FifoQueue\":\"true\"}}")
            .statusCode()).isEqualTo(200);
    }

    @Test
    void anEmptyBatchOnTheQueryProtocolIsAnEmptyBatchRequest() throws Exception {
        assertThat(query("/sqs", "Action", "CreateQueue", "QueueName", "empty-batch-q").get().statusCode()).isEqualTo(200);
        // How botocore writes an empty list on the query protocol.
        for (String[] action : List.of(new String[] { "SendMessageBatch", "SendMessageBatchRequestEntry" },
                new String[] { "DeleteMessageBatch", "DeleteMessageBatchRequestEntry" },
                new String[] { "ChangeMessageVisibilityBatch", "ChangeMessageVisibilityBatchRequestEntry" })) {
            HttpResponse<String> empty = query("/sqs/000000000000/empty-batch-q", "Action", action[0], action[1], "").get();
            assertThat(empty.statusCode()).as(action[0]).isEqualTo(400);
            assertThat(empty.body()).as(action[0]).contains("<Code>AWS.SimpleQueueService.EmptyBatchRequest</Code>");
        }
    }

    @Test
    void theQueryProtocolSpeaksXmlAndTakesTheQueueFromThePath() throws Exception {
        HttpResponse<String> created = query("/sqs", "Action", "CreateQueue", "QueueName", "xml-q", "Attribute.1.Name",
                "DelaySeconds", "Attribute.1.Value", "0").get();
        assertThat(created.statusCode()).isEqualTo(200);
        assertThat(created.body()).contains("<CreateQueueResponse xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\">")
            .contains("<QueueUrl>http://127.0.0.1:" + this.port + "/sqs/000000000000/xml-q</QueueUrl>");
        HttpResponse<String> sent = query("/sqs/000000000000/xml-q", "Action", "SendMessage", "MessageBody",
                "a < b & c\r\n").get();
        assertThat(sent.body()).contains("<SendMessageResult><MessageId>");
        HttpResponse<String> received = query("/sqs/000000000000/xml-q", "Action", "ReceiveMessage",
                "AttributeName.1", "All").get();
        assertThat(received.body()).contains("<Body>a &lt; b &amp; c&#xD;\n</Body>")
            .contains("<Attribute><Name>ApproximateReceiveCount</Name><Value>1</Value></Attribute>");
        HttpResponse<String> missing = query("/sqs", "Action", "GetQueueUrl", "QueueName", "nope").get();
        assertThat(missing.statusCode()).isEqualTo(400);
        assertThat(missing.body()).contains("<Code>AWS.SimpleQueueService.NonExistentQueue</Code>");
    }

    @Test
    void aWaitingReceiveIsAnsweredWhenAMessageComes() throws Exception {
        json("CreateQueue", "{\"QueueName\":\"wait-q\"}");
        String url = "http://127.0.0.1:" + this.port + "/sqs/000000000000/wait-q";
        long started = System.nanoTime();
        CompletableFuture<HttpResponse<String>> waiting = query("/sqs/000000000000/wait-q", "Action", "ReceiveMessage",
                "WaitTimeSeconds", "20");
        assertThatThrownBy(() -> waiting.get(500, TimeUnit.MILLISECONDS)).as("still waiting")
            .isInstanceOf(java.util.concurrent.TimeoutException.class);
        json("SendMessage", "{\"QueueUrl\":\"" + url + "\",\"MessageBody\":\"late\"}");
        HttpResponse<String> received = waiting.get(10, TimeUnit.SECONDS);
        assertThat(received.body()).contains("<Body>late</Body>");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
    }
}
