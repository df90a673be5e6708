package io.pgqueue.autoconfigure.sqs;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import io.pgqueue.message.BatchEntry;
import io.pgqueue.message.BatchEntryFailure;
import io.pgqueue.message.BatchResult;
import io.pgqueue.message.MessageAttributeValue;
import io.pgqueue.message.MessageDigests;
import io.pgqueue.message.MessageMoveTask;
import io.pgqueue.message.MessageQueueAttributes;
import io.pgqueue.message.MessageQueueCounts;
import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;
import io.pgqueue.message.MessageQueueInfo;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.message.OutgoingMessage;
import io.pgqueue.message.ReceiveRequest;
import io.pgqueue.message.ReceivedMessage;
import io.pgqueue.message.RedrivePolicy;
import io.pgqueue.message.SentMessage;
import io.pgqueue.message.VisibilityChange;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The actions of the Amazon SQS API on {@link MessageQueues}, protocol-neutral: each takes a
 * request and returns a response in the JSON protocol's shape (the query protocol translates both).
 */
final class SqsActions {

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /** Queue attributes accepted and ignored: pgqueue has no access policies or encryption keys of its own. */
    private static final Set<String> IGNORED_ATTRIBUTES = Set.of("Policy", "KmsMasterKeyId",
            "KmsDataKeyReusePeriodSeconds", "SqsManagedSseEnabled", "RedriveAllowPolicy", "DeduplicationScope",
            "FifoThroughputLimit");

    private static final List<String> QUEUE_ATTRIBUTES = List.of("ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed", "CreatedTimestamp",
            "LastModifiedTimestamp", "QueueArn", "VisibilityTimeout", "MaximumMessageSize", "MessageRetentionPeriod",
            "DelaySeconds", "ReceiveMessageWaitTimeSeconds", "RedrivePolicy", "FifoQueue", "ContentBasedDeduplication",
            "DeduplicationScope", "FifoThroughputLimit", "SqsManagedSseEnabled");

    private static final List<String> MESSAGE_SYSTEM_ATTRIBUTES = List.of("SenderId", "SentTimestamp",
            "ApproximateReceiveCount", "ApproximateFirstReceiveTimestamp", "MessageGroupId", "MessageDeduplicationId",
            "SequenceNumber");

    /** The actions the endpoint serves. */
    static final Set<String> ACTIONS = Set.of("CreateQueue", "GetQueueUrl", "ListQueues", "DeleteQueue",
            "GetQueueAttributes", "SetQueueAttributes", "PurgeQueue", "SendMessage", "SendMessageBatch", "ReceiveMessage",
            "DeleteMessage", "DeleteMessageBatch", "ChangeMessageVisibility", "ChangeMessageVisibilityBatch", "TagQueue",
            "UntagQueue", "ListQueueTags", "ListDeadLetterSourceQueues", "StartMessageMoveTask", "ListMessageMoveTasks",
            "CancelMessageMoveTask");

    private final MessageQueues queues;

    private final String accountId;

    private final String region;

    private final SqsAccess access;

    private final SqsMetrics metrics;

    /**
     * Where a request came in and who signed it.
     *
     * @param baseUrl the endpoint's URL, queue URLs are {@code <baseUrl>/<account>/<name>}
     * @param pathQueue the queue named by the request's path (query protocol clients post to the queue URL), or {@code null}
     * @param sender the access key that signed the request, or {@code null}
     */
    record Caller(String baseUrl, String pathQueue, String sender) {
    }

    SqsActions(MessageQueues queues, String accountId, String region, SqsAccess access, SqsMetrics metrics) {
        this.queues = queues;
        this.accountId = accountId;
        this.region = region;
        this.access = access;
        this.metrics = metrics;
    }

    /**
     * Runs an action.
     * @param action the action's name, e.g. {@code SendMessage}
     * @param request its parameters
     * @param caller where it came from
     * @return the response; completed at once for every action but a receive that waits
     */
    CompletableFuture<ObjectNode> run(String action, ObjectNode request, Caller caller) {
        if (ACTIONS.contains(action)) {
            String queue = switch (action) {
                case "ListQueues", "CancelMessageMoveTask" -> null;
                case "CreateQueue", "GetQueueUrl" -> required(request, "QueueName");
                case "StartMessageMoveTask", "ListMessageMoveTasks" -> arnQueue(required(request, "SourceArn"), "SourceArn");
                default -> queueName(request, caller);
            };
            this.access.authorize(caller.sender(), action, queue);
            this.access.throttle(caller.sender(), action, queue);
        }
        if (action.equals("ReceiveMessage")) {
            return receiveMessage(request, caller);
        }
        ObjectNode response = switch (action) {
            case "CreateQueue" -> createQueue(request, caller);
            case "GetQueueUrl" -> getQueueUrl(request, caller);
            case "ListQueues" -> listQueues(request, caller);
            case "DeleteQueue" -> deleteQueue(request, caller);
            case "GetQueueAttributes" -> getQueueAttributes(request, caller);
            case "SetQueueAttributes" -> setQueueAttributes(request, caller);
            case "PurgeQueue" -> purgeQueue(request, caller);
            case "SendMessage" -> sendMessage(request, caller);
            case "SendMessageBatch" -> sendMessageBatch(request, caller);
            case "DeleteMessage" -> deleteMessage(request, caller);
            case "DeleteMessageBatch" -> deleteMessageBatch(request, caller);
            case "ChangeMessageVisibility" -> changeMessageVisibility(request, caller);
            case "ChangeMessageVisibilityBatch" -> changeMessageVisibilityBatch(request, caller);
            case "TagQueue" -> tagQueue(request, caller);
            case "UntagQueue" -> untagQueue(request, caller);
            case "ListQueueTags" -> listQueueTags(request, caller);
            case "ListDeadLetterSourceQueues" -> listDeadLetterSourceQueues(request, caller);
            case "StartMessageMoveTask" -> startMessageMoveTask(request);
            case "ListMessageMoveTasks" -> listMessageMoveTasks(request);
            case "CancelMessageMoveTask" -> cancelMessageMoveTask(request);
            case "AddPermission", "RemovePermission" -> throw new MessageQueueException(MessageQueueError.INVALID_ACTION,
                            "The action " + action + " is not supported by pgqueue.");
            default -> throw new MessageQueueException(MessageQueueError.INVALID_ACTION,
                    "The action " + action + " is not valid for this endpoint.");
        };
        return CompletableFuture.completedFuture(response);
    }

    // Queues

    private ObjectNode createQueue(ObjectNode request, Caller caller) {
        String name = required(request, "QueueName");
        Map<String, String> attributes = stringMap(request.get("Attributes"), "Attributes");
        if (name.endsWith(".fifo") && !attributes.containsKey("FifoQueue")) {
            // As SQS: the suffix alone makes no FIFO queue, and a standard queue's name has no dot.
            throw MessageQueueException.invalidParameter("Can only include alphanumeric characters, hyphens, or "
                    + "underscores. 1 to 80 in length. A FIFO queue's name ends in .fifo and needs the attribute "
                    + "FifoQueue=true.");
        }
        // As SQS: an existing queue is returned unless the request gives an attribute with another
        // value; the attributes it leaves out are the queue's own, not the defaults.
        MessageQueueAttributes base = existing(this.queues, name).map(MessageQueueInfo::attributes).orElse(MessageQueueAttributes.defaults());
        // The JSON protocol names the field tags, the query protocol Tag.N (Tags here).
        JsonNode tags = request.has("tags") ? request.get("tags") : request.get("Tags");
        MessageQueueInfo queue = this.queues.createQueue(name, attributes(attributes, base, name), stringMap(tags, "Tags"));
        return NODES.objectNode().put("QueueUrl", url(caller, queue.name()));
    }

    /** @return the queue of that name, if there is one */
    static Optional<MessageQueueInfo> existing(MessageQueues queues, String name) {
        try {
            return Optional.of(queues.getQueue(name));
        }
        catch (MessageQueueException ex) {
            if (ex.error() == MessageQueueError.QUEUE_DOES_NOT_EXIST) {
                return Optional.empty();
            }
            throw ex;
        }
    }

    private ObjectNode getQueueUrl(ObjectNode request, Caller caller) {
        return NODES.objectNode().put("QueueUrl", url(caller, this.queues.getQueue(required(request, "QueueName")).name()));
    }

    private ObjectNode listQueues(ObjectNode request, Caller caller) {
        String prefix = optional(request, "QueueNamePrefix");
        Integer maxResults = integer(request, "MaxResults");
        String token = optional(request, "NextToken");
        String after = token == null ? "" : decodeToken(token);
        int limit = maxResults == null ? 1000 : maxResults;
        List<MessageQueueInfo> page = this.queues.listQueues(prefix, after, limit);
        ObjectNode response = NODES.objectNode();
        List<MessageQueueInfo> shown = page.stream().filter(queue -> this.access.shows(caller.sender(), queue.name()))
            .toList();
        if (!shown.isEmpty()) {
            ArrayNode urls = response.putArray("QueueUrls");
            shown.forEach(queue -> urls.add(url(caller, queue.name())));
        }
        // A token only when another page has queues: a full last page ends the listing.
        String last = page.isEmpty() ? null : page.get(page.size() - 1).name();
        if (maxResults != null && page.size() == limit && !this.queues.listQueues(prefix, last, 1).isEmpty()) {
            response.put("NextToken", Base64.getUrlEncoder().withoutPadding()
                .encodeToString(last.getBytes(StandardCharsets.UTF_8)));
        }
        return response;
    }

    private static String decodeToken(String token) {
        try {
            return new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
        }
        catch (IllegalArgumentException ex) {
            throw new MessageQueueException(MessageQueueError.INVALID_PARAMETER_VALUE, "Invalid NextToken value.");
        }
    }

    private ObjectNode deleteQueue(ObjectNode request, Caller caller) {
        this.queues.deleteQueue(queueName(request, caller));
        return NODES.objectNode();
    }

    private ObjectNode getQueueAttributes(ObjectNode request, Caller caller) {
        MessageQueueInfo queue = this.queues.getQueue(queueName(request, caller));
        Set<String> names = names(request.get("AttributeNames"));
        if (names.isEmpty()) {
            return NODES.objectNode();
        }
        boolean all = names.contains("All");
        for (String name : names) {
            // Attributes accepted and ignored on writes are asked for without error; those pgqueue has no
            // value for are not returned, as AWS does for an attribute a queue does not have set.
            if (!name.equals("All") && !QUEUE_ATTRIBUTES.contains(name) && !IGNORED_ATTRIBUTES.contains(name)) {
                throw new MessageQueueException(MessageQueueError.INVALID_ATTRIBUTE_NAME, "Unknown Attribute " + name + ".");
            }
        }
        Map<String, String> values = new LinkedHashMap<>();
        if (all || names.stream().anyMatch(name -> name.startsWith("ApproximateNumberOfMessages"))) {
            MessageQueueCounts counts = this.queues.counts(queue.name());
            values.put("ApproximateNumberOfMessages", Long.toString(counts.visible()));
            values.put("ApproximateNumberOfMessagesNotVisible", Long.toString(counts.inFlight()));
            values.put("ApproximateNumberOfMessagesDelayed", Long.toString(counts.delayed()));
        }
        MessageQueueAttributes attributes = queue.attributes();
        values.put("CreatedTimestamp", Long.toString(queue.createdAt().getEpochSecond()));
        values.put("LastModifiedTimestamp", Long.toString(queue.updatedAt().getEpochSecond()));
        values.put("QueueArn", arn(queue.name()));
        values.put("VisibilityTimeout", Long.toString(attributes.visibilityTimeout().toSeconds()));
        values.put("MaximumMessageSize", Integer.toString(attributes.maxMessageSize()));
        values.put("MessageRetentionPeriod", Long.toString(attributes.retention().toSeconds()));
        values.put("DelaySeconds", Long.toString(attributes.delay().toSeconds()));
        values.put("ReceiveMessageWaitTimeSeconds", Long.toString(attributes.receiveWaitTime().toSeconds()));
        if (attributes.redrivePolicy() != null) {
            values.put("RedrivePolicy", NODES.objectNode()
                .put("deadLetterTargetArn", arn(attributes.redrivePolicy().deadLetterQueue()))
                .put("maxReceiveCount", attributes.redrivePolicy().maxReceiveCount()).toString());
        }
        if (queue.fifo()) {
            values.put("FifoQueue", "true");
            values.put("ContentBasedDeduplication", Boolean.toString(attributes.contentBasedDeduplication()));
            boolean perGroup = this.queues.deduplicatesPerGroup();
            values.put("DeduplicationScope", perGroup ? "messageGroup" : "queue");
            values.put("FifoThroughputLimit", perGroup ? "perMessageGroupId" : "perQueue");
        }
        values.put("SqsManagedSseEnabled", "false");
        ObjectNode map = NODES.objectNode();
        values.forEach((name, value) -> {
            if (all || names.contains(name)) {
                map.put(name, value);
            }
        });
        ObjectNode response = NODES.objectNode();
        response.set("Attributes", map);
        return response;
    }

    private ObjectNode setQueueAttributes(ObjectNode request, Caller caller) {
        MessageQueueInfo queue = this.queues.getQueue(queueName(request, caller));
        Map<String, String> attributes = stringMap(request.get("Attributes"), "Attributes");
        if (attributes.isEmpty()) {
            throw new MessageQueueException(MessageQueueError.MISSING_PARAMETER,
                    "The request must contain the parameter Attributes.");
        }
        this.queues.setAttributes(queue.name(), attributes(attributes, queue.attributes(), queue.name()));
        return NODES.objectNode();
    }

    private ObjectNode purgeQueue(ObjectNode request, Caller caller) {
        this.queues.purge(queueName(request, caller));
        return NODES.objectNode();
    }

    private ObjectNode tagQueue(ObjectNode request, Caller caller) {
        this.queues.tagQueue(queueName(request, caller), stringMap(request.get("Tags"), "Tags"));
        return NODES.objectNode();
    }

    private ObjectNode untagQueue(ObjectNode request, Caller caller) {
        this.queues.untagQueue(queueName(request, caller), names(request.get("TagKeys")));
        return NODES.objectNode();
    }

    private ObjectNode listQueueTags(ObjectNode request, Caller caller) {
        MessageQueueInfo queue = this.queues.getQueue(queueName(request, caller));
        ObjectNode response = NODES.objectNode();
        if (!queue.tags().isEmpty()) {
            ObjectNode tags = response.putObject("Tags");
            queue.tags().forEach(tags::put);
        }
        return response;
    }

    private ObjectNode listDeadLetterSourceQueues(ObjectNode request, Caller caller) {
        ObjectNode response = NODES.objectNode();
        ArrayNode urls = response.putArray("queueUrls");
        this.queues.deadLetterSourceQueues(queueName(request, caller)).stream()
            .filter(queue -> this.access.shows(caller.sender(), queue.name()))
            .forEach(queue -> urls.add(url(caller, queue.name())));
        return response;
    }

    // Move tasks

    private ObjectNode startMessageMoveTask(ObjectNode request) {
        String destination = optional(request, "DestinationArn");
        MessageMoveTask task = this.queues.startMoveTask(arnQueue(required(request, "SourceArn"), "SourceArn"),
                destination == null ? null : arnQueue(destination, "DestinationArn"),
                integer(request, "MaxNumberOfMessagesPerSecond"));
        return NODES.objectNode().put("TaskHandle", task.handle());
    }

    private ObjectNode listMessageMoveTasks(ObjectNode request) {
        Integer max = integer(request, "MaxResults");
        ObjectNode response = NODES.objectNode();
        ArrayNode results = response.putArray("Results");
        for (MessageMoveTask task : this.queues.moveTasks(arnQueue(required(request, "SourceArn"), "SourceArn"),
                max == null ? 1 : max)) {
            ObjectNode result = results.addObject();
            if (task.status() == MessageMoveTask.Status.RUNNING) {
                result.put("TaskHandle", task.handle());
            }
            result.put("Status", task.status().name()).put("SourceArn", arn(task.source()));
            if (task.destination() != null) {
                result.put("DestinationArn", arn(task.destination()));
            }
            if (task.maxPerSecond() != null) {
                result.put("MaxNumberOfMessagesPerSecond", task.maxPerSecond());
            }
            result.put("ApproximateNumberOfMessagesMoved", task.moved())
                .put("ApproximateNumberOfMessagesToMove", task.toMove());
            if (task.failureReason() != null) {
                result.put("FailureReason", task.failureReason());
            }
            result.put("StartedTimestamp", task.startedAt().toEpochMilli());
        }
        return response;
    }

    private ObjectNode cancelMessageMoveTask(ObjectNode request) {
        return NODES.objectNode().put("ApproximateNumberOfMessagesMoved",
                this.queues.cancelMoveTask(required(request, "TaskHandle")).moved());
    }

    /** @return the queue an SQS ARN names ({@code arn:aws:sqs:<region>:<account>:<name>}) */
    private static String arnQueue(String arn, String parameter) {
        String[] parts = arn.split(":", -1);
        if (parts.length != 6 || !parts[0].equals("arn") || !parts[2].equals("sqs") || parts[5].isEmpty()) {
            throw MessageQueueException.invalidParameter(parameter + " is not the ARN of a queue "
                    + "(arn:aws:sqs:<region>:<account>:<name>): " + arn);
        }
        return parts[5];
    }

    /**
     * Settings from SQS attribute names and values, over a base (defaults, or the queue's current ones).
     * @throws MessageQueueException for an unknown attribute or a value out of range
     */
    static MessageQueueAttributes attributes(Map<String, String> values, MessageQueueAttributes base, String name) {
        MessageQueueAttributes attributes = base;
        for (Map.Entry<String, String> entry : values.entrySet()) {
            String value = entry.getValue();
            attributes = switch (entry.getKey()) {
                case "VisibilityTimeout" -> attributes.withVisibilityTimeout(seconds(entry));
                case "MessageRetentionPeriod" -> attributes.withRetention(seconds(entry));
                case "DelaySeconds" -> attributes.withDelay(seconds(entry));
                case "ReceiveMessageWaitTimeSeconds" -> attributes.withReceiveWaitTime(seconds(entry));
                case "MaximumMessageSize" -> attributes.withMaxMessageSize(bytes(entry));
                case "ContentBasedDeduplication" -> attributes.withContentBasedDeduplication(bool(entry));
                case "RedrivePolicy" -> attributes.withRedrivePolicy(value.isBlank() ? null : redrivePolicy(value));
                case "FifoQueue" -> {
                    if (bool(entry) != name.endsWith(".fifo")) {
                        throw new MessageQueueException(MessageQueueError.INVALID_PARAMETER_VALUE, bool(entry)
                                ? "The name of a FIFO queue must end with the .fifo suffix."
                                : "A queue named .fifo is a FIFO queue: FifoQueue cannot be false.");
                    }
                    yield attributes;
                }
                default -> {
                    if (!IGNORED_ATTRIBUTES.contains(entry.getKey())) {
                        throw new MessageQueueException(MessageQueueError.INVALID_ATTRIBUTE_NAME,
                                "Unknown Attribute " + entry.getKey() + ".");
                    }
                    yield attributes;
                }
            };
        }
        return attributes;
    }

    private static Duration seconds(Map.Entry<String, String> entry) {
        try {
            return Duration.ofSeconds(Long.parseLong(entry.getValue().strip()));
        }
        catch (NumberFormatException ex) {
            throw new MessageQueueException(MessageQueueError.INVALID_ATTRIBUTE_VALUE,
                    "Invalid value for the parameter " + entry.getKey() + ": " + entry.getValue());
        }
    }

    private static int bytes(Map.Entry<String, String> entry) {
        long bytes = seconds(entry).toSeconds();
        if (bytes < Integer.MIN_VALUE || bytes > Integer.MAX_VALUE) {
            throw new MessageQueueException(MessageQueueError.INVALID_ATTRIBUTE_VALUE,
                    "Invalid value for the parameter " + entry.getKey() + ": " + entry.getValue());
        }
        return (int) bytes;
    }

    private static boolean bool(Map.Entry<String, String> entry) {
        if (!entry.getValue().equalsIgnoreCase("true") && !entry.getValue().equalsIgnoreCase("false")) {
            throw new MessageQueueException(MessageQueueError.INVALID_ATTRIBUTE_VALUE,
                    "Invalid value for the parameter " + entry.getKey() + ": " + entry.getValue());
        }
        return Boolean.parseBoolean(entry.getValue());
    }

    private static RedrivePolicy redrivePolicy(String json) {
        JsonNode policy;
        try {
            policy = tools.jackson.databind.json.JsonMapper.builder().build().readTree(json);
        }
        catch (RuntimeException ex) {
            policy = null;
        }
        if (policy == null || !policy.isObject() || policy.get("deadLetterTargetArn") == null
                || policy.get("maxReceiveCount") == null) {
            throw new MessageQueueException(MessageQueueError.INVALID_ATTRIBUTE_VALUE, "Value " + json + " for parameter "
                    + "RedrivePolicy is invalid. Reason: Redrive policy needs deadLetterTargetArn and maxReceiveCount.");
        }
        String arn = policy.get("deadLetterTargetArn").asString();
        int count;
        try {
            count = Integer.parseInt(policy.get("maxReceiveCount").asString().strip());
        }
        catch (NumberFormatException ex) {
            throw new MessageQueueException(MessageQueueError.INVALID_ATTRIBUTE_VALUE,
                    "Value " + json + " for parameter RedrivePolicy is invalid. Reason: maxReceiveCount is not a number.");
        }
        return new RedrivePolicy(arn.substring(arn.lastIndexOf(':') + 1), count);
    }

    // Messages

    private ObjectNode sendMessage(ObjectNode request, Caller caller) {
        String queue = queueName(request, caller);
        OutgoingMessage message = outgoing(request);
        SentMessage sent = this.queues.send(queue, message);
        this.metrics.sent(queue, message.body().getBytes(StandardCharsets.UTF_8).length);
        return sentNode(NODES.objectNode(), sent);
    }

    private static ObjectNode sentNode(ObjectNode node, SentMessage sent) {
        node.put("MessageId", sent.messageId()).put("MD5OfMessageBody", sent.md5OfBody());
        if (sent.md5OfAttributes() != null) {
            node.put("MD5OfMessageAttributes", sent.md5OfAttributes());
        }
        if (sent.sequenceNumber() != null) {
            node.put("SequenceNumber", sent.sequenceNumber());
        }
        return node;
    }

    private ObjectNode sendMessageBatch(ObjectNode request, Caller caller) {
        List<BatchEntry<OutgoingMessage>> entries = new ArrayList<>();
        List<BatchEntryFailure> unreadable = new ArrayList<>();
        BatchEntry.checkIds(entries(request).stream().map(entry -> optional(entry, "Id")).toList());
        for (JsonNode entry : entries(request)) {
            String id = optional(entry, "Id");
            try {
                entries.add(new BatchEntry<>(id, outgoing(entry)));
            }
            catch (MessageQueueException ex) {
                unreadable.add(new BatchEntryFailure(id, ex.error(), ex.getMessage()));
            }
        }
        String queue = queueName(request, caller);
        BatchResult<SentMessage> result = unreadable.isEmpty() ? this.queues.sendBatch(queue, entries)
                : sendReadable(queue, entries, unreadable);
        entries.stream().filter(entry -> result.successful().containsKey(entry.id())).forEach(entry -> this.metrics
            .sent(queue, entry.value().body().getBytes(StandardCharsets.UTF_8).length));
        ObjectNode response = NODES.objectNode();
        ArrayNode successful = response.putArray("Successful");
        result.successful().forEach((id, sent) -> successful.add(sentNode(NODES.objectNode().put("Id", id), sent)));
        failed(response, result.failed());
        return response;
    }

    private BatchResult<SentMessage> sendReadable(String queue, List<BatchEntry<OutgoingMessage>> entries,
            List<BatchEntryFailure> unreadable) {
        if (entries.isEmpty()) {
            return new BatchResult<>(Map.of(), unreadable);
        }
        BatchResult<SentMessage> sent = this.queues.sendBatch(queue, entries);
        List<BatchEntryFailure> failed = new ArrayList<>(unreadable);
        failed.addAll(sent.failed());
        return new BatchResult<>(sent.successful(), failed);
    }

    private OutgoingMessage outgoing(JsonNode request) {
        String body = optional(request, "MessageBody");
        if (body == null) {
            throw new MessageQueueException(MessageQueueError.MISSING_PARAMETER,
                    "The request must contain the parameter MessageBody.");
        }
        Integer delay = integer(request, "DelaySeconds");
        return new OutgoingMessage(body, messageAttributes(request.get("MessageAttributes")),
                delay == null ? null : Duration.ofSeconds(delay), optional(request, "MessageGroupId"),
                optional(request, "MessageDeduplicationId"));
    }

    private static Map<String, MessageAttributeValue> messageAttributes(JsonNode node) {
        Map<String, MessageAttributeValue> attributes = new LinkedHashMap<>();
        if (node == null || node.isNull()) {
            return attributes;
        }
        if (!node.isObject()) {
            throw new MessageQueueException(MessageQueueError.INVALID_PARAMETER_VALUE, "MessageAttributes must be a map");
        }
        for (String name : node.propertyNames()) {
            JsonNode value = node.get(name);
            String type = optional(value, "DataType");
            String text = optional(value, "StringValue");
            String binary = optional(value, "BinaryValue");
            if (type == null) {
                throw new MessageQueueException(MessageQueueError.INVALID_PARAMETER_VALUE,
                        "The message attribute '" + name + "' must contain a non-empty attribute type.");
            }
            byte[] bytes = null;
            if (binary != null) {
                try {
                    bytes = Base64.getMimeDecoder().decode(binary);
                }
                catch (IllegalArgumentException ex) {
                    throw new MessageQueueException(MessageQueueError.INVALID_PARAMETER_VALUE,
                            "The message attribute '" + name + "' has a BinaryValue that is not base64.");
                }
            }
            attributes.put(name, new MessageAttributeValue(type, text, bytes));
        }
        return attributes;
    }

    private CompletableFuture<ObjectNode> receiveMessage(ObjectNode request, Caller caller) {
        String queueName = queueName(request, caller);
        MessageQueueInfo queue = this.queues.queue(queueName);
        Integer max = integer(request, "MaxNumberOfMessages");
        Integer visibility = integer(request, "VisibilityTimeout");
        Integer wait = integer(request, "WaitTimeSeconds");
        ReceiveRequest receive = new ReceiveRequest(max == null ? 1 : max,
                visibility == null ? null : Duration.ofSeconds(visibility), wait == null ? null : Duration.ofSeconds(wait));
        Set<String> systemNames = names(request.get("AttributeNames"));
        systemNames.addAll(names(request.get("MessageSystemAttributeNames")));
        Set<String> attributeNames = names(request.get("MessageAttributeNames"));
        return this.queues.receiveAsync(queueName, receive).thenApply(messages -> {
            ObjectNode response = NODES.objectNode();
            if (!messages.isEmpty()) {
                ArrayNode array = response.putArray("Messages");
                messages.forEach(message -> array.add(messageNode(message, queue, systemNames, attributeNames)));
            }
            return response;
        });
    }

    private ObjectNode messageNode(ReceivedMessage message, MessageQueueInfo queue, Set<String> systemNames,
            Set<String> attributeNames) {
        ObjectNode node = NODES.objectNode().put("MessageId", message.messageId())
            .put("ReceiptHandle", message.receiptHandle()).put("MD5OfBody", message.md5OfBody())
            .put("Body", message.body());
        Map<String, String> system = new LinkedHashMap<>();
        system.put("SenderId", this.accountId);
        system.put("SentTimestamp", Long.toString(message.sentAt().toEpochMilli()));
        system.put("ApproximateReceiveCount", Integer.toString(message.receiveCount()));
        system.put("ApproximateFirstReceiveTimestamp", Long.toString(message.firstReceivedAt().toEpochMilli()));
        if (message.groupId() != null) {
            system.put("MessageGroupId", message.groupId());
        }
        if (queue.fifo()) {
            system.put("MessageDeduplicationId", message.deduplicationId());
            system.put("SequenceNumber", message.sequenceNumber());
        }
        boolean allSystem = systemNames.contains("All");
        ObjectNode attributes = NODES.objectNode();
        system.forEach((name, value) -> {
            if (allSystem || systemNames.contains(name)) {
                attributes.put(name, value);
            }
        });
        if (!attributes.isEmpty()) {
            node.set("Attributes", attributes);
        }
        Map<String, MessageAttributeValue> selected = new LinkedHashMap<>();
        message.attributes().forEach((name, value) -> {
            if (selected(name, attributeNames)) {
                selected.put(name, value);
            }
        });
        if (!selected.isEmpty()) {
            node.put("MD5OfMessageAttributes", MessageDigests.md5OfAttributes(selected));
            ObjectNode values = node.putObject("MessageAttributes");
            selected.forEach((name, value) -> {
                ObjectNode entry = values.putObject(name);
                if (value.binary()) {
                    entry.put("BinaryValue", Base64.getEncoder().encodeToString(value.binaryValue()));
                }
                else {
                    entry.put("StringValue", value.stringValue());
                }
                entry.put("DataType", value.dataType());
            });
        }
        return node;
    }

    private static boolean selected(String name, Set<String> wanted) {
        for (String pattern : wanted) {
            if (pattern.equals("All") || pattern.equals(".*") || pattern.equals(name)
                    || (pattern.endsWith(".*") && name.startsWith(pattern.substring(0, pattern.length() - 1)))) {
                return true;
            }
        }
        return false;
    }

    private ObjectNode deleteMessage(ObjectNode request, Caller caller) {
        this.queues.delete(queueName(request, caller), required(request, "ReceiptHandle"));
        return NODES.objectNode();
    }

    private ObjectNode deleteMessageBatch(ObjectNode request, Caller caller) {
        List<BatchEntry<String>> entries = new ArrayList<>();
        for (JsonNode entry : entries(request)) {
            entries.add(new BatchEntry<>(optional(entry, "Id"), optional(entry, "ReceiptHandle")));
        }
        return idsOnly(this.queues.deleteBatch(queueName(request, caller), entries));
    }

    private ObjectNode changeMessageVisibility(ObjectNode request, Caller caller) {
        Integer timeout = integer(request, "VisibilityTimeout");
        if (timeout == null) {
            throw new MessageQueueException(MessageQueueError.MISSING_PARAMETER,
                    "The request must contain the parameter VisibilityTimeout.");
        }
        this.queues.changeVisibility(queueName(request, caller), required(request, "ReceiptHandle"),
                Duration.ofSeconds(timeout));
        return NODES.objectNode();
    }

    private ObjectNode changeMessageVisibilityBatch(ObjectNode request, Caller caller) {
        List<BatchEntry<VisibilityChange>> entries = new ArrayList<>();
        for (JsonNode entry : entries(request)) {
            Integer timeout = integer(entry, "VisibilityTimeout");
            entries.add(new BatchEntry<>(optional(entry, "Id"), new VisibilityChange(optional(entry, "ReceiptHandle"),
                    timeout == null ? null : Duration.ofSeconds(timeout))));
        }
        return idsOnly(this.queues.changeVisibilityBatch(queueName(request, caller), entries));
    }

    private static ObjectNode idsOnly(BatchResult<Boolean> result) {
        ObjectNode response = NODES.objectNode();
        ArrayNode successful = response.putArray("Successful");
        result.successful().keySet().forEach(id -> successful.add(NODES.objectNode().put("Id", id)));
        failed(response, result.failed());
        return response;
    }

    private static void failed(ObjectNode response, List<BatchEntryFailure> failures) {
        ArrayNode failed = response.putArray("Failed");
        for (BatchEntryFailure failure : failures) {
            failed.add(NODES.objectNode().put("Id", failure.id()).put("SenderFault", failure.error().senderFault())
                .put("Code", failure.error().code()).put("Message", failure.message()));
        }
    }

    // Parameters

    private static List<JsonNode> entries(ObjectNode request) {
        JsonNode entries = request.get("Entries");
        // The query protocol writes an empty list as one empty parameter (SendMessageBatchRequestEntry=).
        if (entries == null || entries.isNull() || (entries.isString() && entries.asString().isEmpty())) {
            return List.of();
        }
        if (!entries.isArray()) {
            throw new MessageQueueException(MessageQueueError.INVALID_PARAMETER_VALUE, "Entries must be a list");
        }
        List<JsonNode> list = new ArrayList<>();
        entries.forEach(list::add);
        return list;
    }

    /** The queue a request names: its QueueUrl (its last path segment), else the request's path. */
    private static String queueName(ObjectNode request, Caller caller) {
        String url = optional(request, "QueueUrl");
        if (url == null || url.isBlank()) {
            if (caller.pathQueue() != null) {
                return caller.pathQueue();
            }
            throw new MessageQueueException(MessageQueueError.MISSING_PARAMETER,
                    "The request must contain the parameter QueueUrl.");
        }
        String path = url.strip();
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        return path.substring(path.lastIndexOf('/') + 1);
    }

    private String url(Caller caller, String name) {
        return caller.baseUrl() + "/" + this.accountId + "/" + name;
    }

    private String arn(String name) {
        return "arn:aws:sqs:" + this.region + ":" + this.accountId + ":" + name;
    }

    private static String required(JsonNode request, String name) {
        String value = optional(request, name);
        if (value == null || value.isEmpty()) {
            throw new MessageQueueException(MessageQueueError.MISSING_PARAMETER,
                    "The request must contain the parameter " + name + ".");
        }
        return value;
    }

    private static String optional(JsonNode request, String name) {
        JsonNode value = request == null ? null : request.get(name);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isValueNode()) {
            throw new MessageQueueException(MessageQueueError.INVALID_PARAMETER_VALUE, name + " must be a single value");
        }
        return value.asString();
    }

    private static Integer integer(JsonNode request, String name) {
        String value = optional(request, name);
        if (value == null || value.isEmpty()) {
            return null;
        }
        try {
            return Integer.valueOf(value.strip());
        }
        catch (NumberFormatException ex) {
            throw new MessageQueueException(MessageQueueError.INVALID_PARAMETER_VALUE,
                    "Value " + value + " for parameter " + name + " is invalid. Reason: it is not an integer.");
        }
    }

    private static Map<String, String> stringMap(JsonNode node, String name) {
        Map<String, String> map = new LinkedHashMap<>();
        if (node == null || node.isNull()) {
            return map;
        }
        if (!node.isObject()) {
            throw new MessageQueueException(MessageQueueError.INVALID_PARAMETER_VALUE, name + " must be a map");
        }
        for (String key : node.propertyNames()) {
            JsonNode value = node.get(key);
            if (value != null && !value.isNull() && !value.isValueNode()) {
                throw new MessageQueueException(MessageQueueError.INVALID_PARAMETER_VALUE,
                        "The value of " + name + " '" + key + "' must be a string");
            }
            map.put(key, value == null || value.isNull() ? "" : value.asString());
        }
        return map;
    }

    private static Set<String> names(JsonNode node) {
        Set<String> names = new LinkedHashSet<>();
        if (node != null && node.isArray()) {
            node.forEach(name -> names.add(name.asString()));
        }
        return names;
    }
}
