package io.pgqueue.autoconfigure.sqs;

import java.util.LinkedHashMap;
import java.util.Map;

import io.pgqueue.message.MessageQueueError;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The query protocol's parameters become the JSON protocol's shape, and responses in that shape
 * become the query protocol's XML.
 */
class SqsQueryProtocolTests {

    private static Map<String, String[]> form(String... pairs) {
        Map<String, String[]> form = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            form.put(pairs[i], new String[] { pairs[i + 1] });
        }
        return form;
    }

    @Test
    void attributesTagsAndMessageAttributesBecomeMaps() {
        ObjectNode request = SqsQueryProtocol.request(form("Action", "SendMessage", "MessageBody", "hi",
                "MessageAttribute.2.Name", "b", "MessageAttribute.2.Value.DataType", "Binary",
                "MessageAttribute.2.Value.BinaryValue", "aGk=", "MessageAttribute.1.Name", "a",
                "MessageAttribute.1.Value.DataType", "String", "MessageAttribute.1.Value.StringValue", "x",
                "Attribute.1.Name", "VisibilityTimeout", "Attribute.1.Value", "5", "Tag.1.Key", "team", "Tag.1.Value", "red"));
        assertThat(request.toString()).isEqualTo(JsonMapper.builder().build().readTree("""
                {"Action":"SendMessage","MessageBody":"hi",
                 "MessageAttributes":{"a":{"DataType":"String","StringValue":"x"},"b":{"DataType":"Binary","BinaryValue":"aGk="}},
                 "Attributes":{"VisibilityTimeout":"5"},"Tags":{"team":"red"}}""").toString());
    }

    @Test
    void batchEntriesAndNameListsBecomeListsInNumberOrder() {
        ObjectNode request = SqsQueryProtocol.request(form("DeleteMessageBatchRequestEntry.10.Id", "j",
                "DeleteMessageBatchRequestEntry.10.ReceiptHandle", "h10", "DeleteMessageBatchRequestEntry.2.Id", "b",
                "DeleteMessageBatchRequestEntry.2.ReceiptHandle", "h2", "AttributeName.1", "All",
                "MessageAttributeName.1", "a.*"));
        assertThat(request.get("Entries").get(0).get("Id").asString()).isEqualTo("b");
        assertThat(request.get("Entries").get(1).get("ReceiptHandle").asString()).isEqualTo("h10");
        assertThat(request.get("AttributeNames").get(0).asString()).isEqualTo("All");
        assertThat(request.get("MessageAttributeNames").get(0).asString()).isEqualTo("a.*");
    }

    @Test
    void aReceiveIsWrittenWithFlattenedMessagesAndAttributes() {
        ObjectNode response = (ObjectNode) JsonMapper.builder().build().readTree("""
                {"Messages":[{"MessageId":"m1","ReceiptHandle":"r","MD5OfBody":"d","Body":"a<b>&\\r\\n",
                  "Attributes":{"ApproximateReceiveCount":"1"},
                  "MessageAttributes":{"k":{"StringValue":"v","DataType":"String"}}}]}""");
        assertThat(SqsQueryProtocol.response("ReceiveMessage", response, "req-1")).isEqualTo("<?xml version=\"1.0\"?>"
                + "<ReceiveMessageResponse xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\"><ReceiveMessageResult>"
                + "<Message><MessageId>m1</MessageId><ReceiptHandle>r</ReceiptHandle><MD5OfBody>d</MD5OfBody>"
                + "<Body>a&lt;b&gt;&amp;&#xD;\n</Body><Attribute><Name>ApproximateReceiveCount</Name><Value>1</Value>"
                + "</Attribute><MessageAttribute><Name>k</Name><Value><StringValue>v</StringValue><DataType>String"
                + "</DataType></Value></MessageAttribute></Message></ReceiveMessageResult><ResponseMetadata><RequestId>"
                + "req-1</RequestId></ResponseMetadata></ReceiveMessageResponse>");
    }

    @Test
    void batchResultsAndEmptyResults() {
        ObjectNode response = (ObjectNode) JsonMapper.builder().build().readTree("""
                {"Successful":[{"Id":"a"}],"Failed":[{"Id":"b","SenderFault":true,"Code":"ReceiptHandleIsInvalid","Message":"m"}]}""");
        assertThat(SqsQueryProtocol.response("DeleteMessageBatch", response, "r")).contains(
                "<DeleteMessageBatchResult><DeleteMessageBatchResultEntry><Id>a</Id></DeleteMessageBatchResultEntry>"
                        + "<BatchResultErrorEntry><Id>b</Id><SenderFault>true</SenderFault><Code>ReceiptHandleIsInvalid"
                        + "</Code><Message>m</Message></BatchResultErrorEntry></DeleteMessageBatchResult>");
        assertThat(SqsQueryProtocol.response("DeleteMessage", JsonMapper.builder().build().createObjectNode(), "r"))
            .isEqualTo("<?xml version=\"1.0\"?><DeleteMessageResponse xmlns=\"http://queue.amazonaws.com/doc/2012-11-05/\">"
                    + "<ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></DeleteMessageResponse>");
        assertThat(SqsQueryProtocol.response("ReceiveMessage", JsonMapper.builder().build().createObjectNode(), "r"))
            .as("an empty receive still has its result element").contains("<ReceiveMessageResult></ReceiveMessageResult>");
    }

    @Test
    void errorsCarryTheQueryCodeAndFault() {
        assertThat(SqsQueryProtocol.error(MessageQueueError.QUEUE_DOES_NOT_EXIST, "no <such> queue", "r"))
            .contains("<Type>Sender</Type><Code>AWS.SimpleQueueService.NonExistentQueue</Code>"
                    + "<Message>no &lt;such&gt; queue</Message>");
    }
}
