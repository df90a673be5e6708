package io.pgqueue.autoconfigure.sqs;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The query protocol of Amazon SQS (API version 2012-11-05), spoken by older SDKs and the AWS CLI
 * v1/early v2: form parameters in, XML out. Requests are turned into the JSON protocol's shape
 * ({@code Attribute.1.Name=X&Attribute.1.Value=Y} becomes {@code "Attributes": {"X": "Y"}}), and
 * responses in that shape are written as the query protocol's XML, so one set of actions serves both.
 */
final class SqsQueryProtocol {

    static final String NAMESPACE = "http://queue.amazonaws.com/doc/2012-11-05/";

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /** Query lists that become JSON maps: list name, JSON name, key field, value field. */
    private static final List<String[]> MAPS = List.of(new String[] { "Attribute", "Attributes", "Name", "Value" },
            new String[] { "Tag", "Tags", "Key", "Value" },
            new String[] { "MessageAttribute", "MessageAttributes", "Name", "Value" },
            new String[] { "MessageSystemAttribute", "MessageSystemAttributes", "Name", "Value" });

    /** Query lists renamed in JSON. */
    private static final Map<String, String> LISTS = Map.of("AttributeName", "AttributeNames", "MessageAttributeName",
            "MessageAttributeNames", "MessageSystemAttributeName", "MessageSystemAttributeNames", "TagKey", "TagKeys",
            "SendMessageBatchRequestEntry", "Entries", "DeleteMessageBatchRequestEntry", "Entries",
            "ChangeMessageVisibilityBatchRequestEntry", "Entries", "QueueUrl", "QueueUrls");

    /** Actions whose response has no result element; every other has one, empty or not (clients expect it). */
    private static final java.util.Set<String> NO_RESULT = java.util.Set.of("DeleteMessage", "DeleteQueue",
            "ChangeMessageVisibility", "PurgeQueue", "SetQueueAttributes", "TagQueue", "UntagQueue");

    /** The most dotted parts a parameter name may have: more than the API's deepest name, never a deep recursion. */
    private static final int MAX_NAME_PARTS = 8;

    private SqsQueryProtocol() {
    }

    /**
     * @param parameters the form (and query string) parameters
     * @return the request in the JSON protocol's shape, with {@code Action} among its fields
     */
    static ObjectNode request(Map<String, String[]> parameters) {
        ObjectNode tree = NODES.objectNode();
        parameters.forEach((name, values) -> {
            if (values.length > 0) {
                insert(tree, path(name), 0, values[0]);
            }
        });
        return (ObjectNode) normalise(tree);
    }

    /**
     * A parameter name's dotted path, bounded: the deepest name of the API
     * ({@code SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue}) has six parts.
     */
    private static String[] path(String name) {
        String[] path = name.split("\\.", -1);
        if (path.length > MAX_NAME_PARTS || java.util.Arrays.stream(path).anyMatch(String::isEmpty)) {
            throw new MessageQueueException(MessageQueueError.INVALID_PARAMETER_VALUE, "The parameter name '"
                    + (name.length() > 64 ? name.substring(0, 64) + "..." : name) + "' is not one of the API's");
        }
        return path;
    }

    private static void insert(ObjectNode node, String[] path, int index, String value) {
        String segment = path[index];
        if (index == path.length - 1) {
            node.put(segment, value);
            return;
        }
        JsonNode child = node.get(segment);
        if (!(child instanceof ObjectNode)) {
            child = NODES.objectNode();
            node.set(segment, child);
        }
        insert((ObjectNode) child, path, index + 1, value);
    }

    /** Objects keyed 1, 2, 3… become arrays in that order; then the query names become JSON names. */
    private static JsonNode normalise(JsonNode node) {
        if (!(node instanceof ObjectNode object)) {
            return node;
        }
        List<String> names = new ArrayList<>(object.propertyNames());
        if (!names.isEmpty() && names.stream().allMatch(name -> name.matches("\\d+"))) {
            names.stream().filter(name -> name.length() > 4).findFirst().ifPresent(name -> {
                throw new MessageQueueException(MessageQueueError.INVALID_PARAMETER_VALUE, "The list index " + name
                        + " is out of range: a list has at most 9999 entries");
            });
            TreeMap<Integer, JsonNode> ordered = new TreeMap<>();
            names.forEach(name -> ordered.put(Integer.parseInt(name), normalise(object.get(name))));
            ArrayNode array = NODES.arrayNode();
            ordered.values().forEach(array::add);
            return array;
        }
        ObjectNode result = NODES.objectNode();
        for (String name : names) {
            JsonNode value = normalise(object.get(name));
            String[] map = MAPS.stream().filter(candidate -> candidate[0].equals(name)).findFirst().orElse(null);
            if (map != null && value instanceof ArrayNode entries) {
                ObjectNode asMap = NODES.objectNode();
                for (JsonNode entry : entries) {
                    JsonNode key = entry.get(map[2]);
                    if (key == null || !key.isString()) {
                        throw new MessageQueueException(MessageQueueError.MISSING_PARAMETER,
                                "Every " + name + ".N needs its " + map[2]);
                    }
                    asMap.set(key.asString(), entry.get(map[3]));
                }
                result.set(map[1], asMap);
            }
            else if (LISTS.containsKey(name) && value instanceof ArrayNode) {
                result.set(LISTS.get(name), value);
            }
            else {
                result.set(name, value);
            }
        }
        return result;
    }

    /**
     * Writes a response in the JSON protocol's shape as the query protocol's XML.
     * @param action the action
     * @param response the response
     * @param requestId the request id
     * @return the XML document
     */
    static String response(String action, ObjectNode response, String requestId) {
        StringBuilder xml = new StringBuilder("<?xml version=\"1.0\"?>");
        xml.append('<').append(action).append("Response xmlns=\"").append(NAMESPACE).append("\">");
        if (!NO_RESULT.contains(action)) {
            xml.append('<').append(action).append("Result>");
            members(xml, action, response);
            xml.append("</").append(action).append("Result>");
        }
        xml.append("<ResponseMetadata><RequestId>").append(requestId).append("</RequestId></ResponseMetadata>");
        xml.append("</").append(action).append("Response>");
        return xml.toString();
    }

    private static void members(StringBuilder xml, String action, ObjectNode object) {
        for (String name : object.propertyNames()) {
            JsonNode value = object.get(name);
            switch (name) {
                case "Attributes" -> map(xml, "Attribute", "Name", "Value", value);
                case "Tags" -> map(xml, "Tag", "Key", "Value", value);
                case "MessageAttributes" -> map(xml, "MessageAttribute", "Name", "Value", value);
                case "QueueUrls", "queueUrls" -> value.forEach(url -> element(xml, "QueueUrl", url));
                case "Messages" -> value.forEach(message -> element(xml, "Message", message));
                case "Successful" -> value.forEach(entry -> element(xml, action + "ResultEntry", entry));
                case "Failed" -> value.forEach(entry -> element(xml, "BatchResultErrorEntry", entry));
                case "Results" -> value.forEach(entry -> element(xml, action + "ResultEntry", entry));
                default -> element(xml, name, value);
            }
        }
    }

    private static void map(StringBuilder xml, String entry, String keyName, String valueName, JsonNode map) {
        for (String key : map.propertyNames()) {
            xml.append('<').append(entry).append("><").append(keyName).append('>').append(escape(key)).append("</")
                .append(keyName).append('>');
            element(xml, valueName, map.get(key));
            xml.append("</").append(entry).append('>');
        }
    }

    private static void element(StringBuilder xml, String name, JsonNode value) {
        xml.append('<').append(name).append('>');
        if (value instanceof ObjectNode object) {
            members(xml, name, object);
        }
        else if (value.isArray()) {
            for (Iterator<JsonNode> it = value.iterator(); it.hasNext();) {
                element(xml, "member", it.next());
            }
        }
        else {
            xml.append(escape(value.asString()));
        }
        xml.append("</").append(name).append('>');
    }

    /**
     * @param error the error
     * @param message what is wrong
     * @param requestId the request id
     * @return the query protocol's error document
     */
    static String error(MessageQueueError error, String message, String requestId) {
        return "<?xml version=\"1.0\"?><ErrorResponse xmlns=\"" + NAMESPACE + "\"><Error><Type>"
                + (error.senderFault() ? "Sender" : "Receiver") + "</Type><Code>" + error.queryCode() + "</Code><Message>"
                + escape(message) + "</Message><Detail/></Error><RequestId>" + requestId + "</RequestId></ErrorResponse>";
    }

    /** Escapes XML text; characters XML 1.0 cannot carry at all (allowed in bodies: #x9, #xA, #xD) are written as references. */
    static String escape(String text) {
        StringBuilder escaped = new StringBuilder(text.length() + 16);
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '<' -> escaped.append("&lt;");
                case '>' -> escaped.append("&gt;");
                case '&' -> escaped.append("&amp;");
                case '"' -> escaped.append("&quot;");
                case '\'' -> escaped.append("&apos;");
                case '\r' -> escaped.append("&#xD;");
                // XML 1.0 has no way to write these, even as references: an error that echoes a
                // request's U+0000 or U+FFFE must stay a document the client can parse.
                default -> escaped.append(c == '\t' || c == '\n' || (c >= 0x20 && c <= 0xFFFD) ? c : '\uFFFD');
            }
        }
        return escaped.toString();
    }
}
