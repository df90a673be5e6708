package io.pgqueue.internal.message;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Pattern;

import io.pgqueue.message.BatchEntry;
import io.pgqueue.message.MessageAttributeValue;
import io.pgqueue.message.MessageQueueAttributes;
import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;
import io.pgqueue.message.MessageQueueInfo;
import io.pgqueue.message.OutgoingMessage;

/**
 * The checks of Amazon SQS on names, bodies, attributes and batches, made before anything is
 * written, each failing with SQS's error code.
 */
public final class MessageValidation {

    /** Batches hold at most this many entries. */
    static final int MAX_BATCH = BatchEntry.MAX_ENTRIES;

    private static final Pattern QUEUE_NAME = Pattern.compile("[A-Za-z0-9_-]{1,80}");

    private static final Pattern QUEUE_NAME_PART = Pattern.compile("[A-Za-z0-9_.-]{0,80}");

    private static final Pattern FIFO_QUEUE_NAME = Pattern.compile("[A-Za-z0-9_-]{1,75}\\.fifo");


    private static final Pattern ATTRIBUTE_NAME = Pattern.compile("[A-Za-z0-9_.-]{1,256}");

    /** Group and deduplication ids: 1 to 128 printable ASCII characters. */
    /** The most tags a queue has. */
    static final int MAX_TAGS = 50;

    private static final Pattern FIFO_ID = Pattern.compile("[\\x21-\\x7E]{1,128}");

    private MessageValidation() {
    }

    /** @return whether a queue may have this name */
    public static boolean isQueueName(String name) {
        return name != null && (QUEUE_NAME.matcher(name).matches() || FIFO_QUEUE_NAME.matcher(name).matches());
    }

    /** @return whether a queue's name may start with this prefix */
    public static boolean isQueueNamePart(String prefix) {
        return QUEUE_NAME_PART.matcher(prefix).matches();
    }

    public static void queueName(String name) {
        if (!isQueueName(name)) {
            throw MessageQueueException.invalidParameter("Can only include alphanumeric characters, hyphens, or "
                    + "underscores. 1 to 80 in length (a FIFO queue's name ends in .fifo): " + name);
        }
    }

    /** The most significant digits of a Number attribute, and its range, as Amazon SQS documents them. */
    private static final int NUMBER_DIGITS = 38;

    /**
     * Checks an attribute's value as Amazon SQS does: never empty, and a Number a decimal number of at
     * most 38 significant digits between 10^-128 and 10^126 in magnitude.
     */
    private static void attributeValue(String name, MessageAttributeValue value) {
        String base = value.dataType().split("\\.", 2)[0];
        boolean empty = value.binary() ? value.binaryValue().length == 0 : value.stringValue().isEmpty();
        if (empty) {
            throw MessageQueueException.invalidParameter("Message (user) attribute '" + name + "' must contain a "
                    + "non-empty value of type '" + base + "'.");
        }
        if (!value.binary()) {
            characters(value.stringValue(), MessageQueueError.INVALID_PARAMETER_VALUE,
                    "The value of message (user) attribute '" + name + "'");
        }
        if (base.equals("Number")) {
            BigDecimal number;
            try {
                number = new BigDecimal(value.stringValue().strip());
            }
            catch (NumberFormatException ex) {
                throw MessageQueueException.invalidParameter("Can't cast the value of message (user) attribute '" + name
                        + "' to a number.");
            }
            BigDecimal magnitude = number.abs().stripTrailingZeros();
            if (magnitude.precision() > NUMBER_DIGITS || (magnitude.signum() != 0
                    && (magnitude.compareTo(BigDecimal.ONE.scaleByPowerOfTen(126)) > 0
                            || magnitude.compareTo(BigDecimal.ONE.scaleByPowerOfTen(-128)) < 0))) {
                throw MessageQueueException.invalidParameter("The value of message (user) attribute '" + name + "' is "
                        + "out of range: a Number has at most 38 significant digits, between 10^-128 and 10^126.");
            }
        }
    }

    /**
     * Checks a message for a queue.
     * @return the bytes it counts towards the maximum message size
     */
    public static int message(OutgoingMessage message, MessageQueueInfo queue) {
        if (message == null || message.body() == null) {
            throw new MessageQueueException(MessageQueueError.MISSING_PARAMETER,
                    "The request must contain the parameter MessageBody.");
        }
        if (message.body().isEmpty()) {
            throw MessageQueueException.invalidParameter("The request must contain a non-empty MessageBody.");
        }
        body(message.body());
        if (message.attributes().size() > 10) {
            throw MessageQueueException.invalidParameter("Number of message attributes [" + message.attributes().size()
                    + "] exceeds the allowed maximum [10].");
        }
        int size = message.body().getBytes(StandardCharsets.UTF_8).length;
        for (Map.Entry<String, MessageAttributeValue> attribute : message.attributes().entrySet()) {
            attributeName(attribute.getKey());
            attributeValue(attribute.getKey(), attribute.getValue());
            size += attribute.getKey().getBytes(StandardCharsets.UTF_8).length + attribute.getValue().size();
        }
        if (size > queue.attributes().maxMessageSize()) {
            throw MessageQueueException.invalidParameter("One or more parameters are invalid. Reason: Message must be "
                    + "shorter than " + queue.attributes().maxMessageSize() + " bytes.");
        }
        if (message.delay() != null) {
            if (queue.fifo()) {
                throw MessageQueueException.invalidParameter("Value " + message.delay().toSeconds() + " for parameter "
                        + "DelaySeconds is invalid. Reason: The request include parameter that is not valid for this "
                        + "queue type.");
            }
            seconds(message.delay(), "DelaySeconds", MessageQueueAttributes.MAX_DELAY);
        }
        if (queue.fifo()) {
            if (message.groupId() == null) {
                throw new MessageQueueException(MessageQueueError.MISSING_PARAMETER,
                        "The request must contain the parameter MessageGroupId.");
            }
            fifoId(message.groupId(), "MessageGroupId");
            if (message.deduplicationId() == null && !queue.attributes().contentBasedDeduplication()) {
                throw MessageQueueException.invalidParameter("The queue should either have ContentBasedDeduplication "
                        + "enabled or MessageDeduplicationId provided explicitly");
            }
            if (message.deduplicationId() != null) {
                fifoId(message.deduplicationId(), "MessageDeduplicationId");
            }
        }
        else {
            if (message.deduplicationId() != null) {
                throw MessageQueueException.invalidParameter("The request include parameter MessageDeduplicationId "
                        + "that is not valid for this queue type");
            }
            if (message.groupId() != null) {
                fifoId(message.groupId(), "MessageGroupId");
            }
        }
        return size;
    }

    private static void body(String body) {
        characters(body, MessageQueueError.INVALID_MESSAGE_CONTENTS, "The message body");
    }

    /**
     * Refuses the characters XML 1.0 cannot hold (a body, an attribute value and a tag are written into
     * the query protocol's XML responses) and U+0000, which PostgreSQL's text cannot hold.
     */
    private static void characters(String text, MessageQueueError error, String what) {
        for (int i = 0; i < text.length();) {
            int c = text.codePointAt(i);
            boolean allowed = c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF)
                    || (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
            if (!allowed) {
                throw new MessageQueueException(error, what + " has invalid characters. Valid unicode characters are "
                        + "#x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF (found #x"
                        + Integer.toHexString(c) + " at " + i + ")");
            }
            i += Character.charCount(c);
        }
    }

    /**
     * Checks a queue's tags as Amazon SQS does: at most 50, a key of 1 to 128 characters and a value of
     * at most 256, in the characters a message body may hold.
     * @param tags the tags a queue would have
     */
    public static void tags(Map<String, String> tags) {
        if (tags.size() > MAX_TAGS) {
            throw MessageQueueException.invalidParameter("Too many tags: a queue has at most " + MAX_TAGS + ".");
        }
        tags.forEach((key, value) -> {
            if (key == null || key.isEmpty() || key.length() > 128) {
                throw MessageQueueException.invalidParameter("A tag key must be 1 to 128 characters long.");
            }
            if (value == null || value.length() > 256) {
                throw MessageQueueException.invalidParameter("The value of tag '" + key + "' must be at most 256 "
                        + "characters long.");
            }
            characters(key, MessageQueueError.INVALID_PARAMETER_VALUE, "A tag key");
            characters(value, MessageQueueError.INVALID_PARAMETER_VALUE, "The value of tag '" + key + "'");
        });
    }

    private static void attributeName(String name) {
        String lower = name == null ? "" : name.toLowerCase(java.util.Locale.ROOT);
        if (name == null || !ATTRIBUTE_NAME.matcher(name).matches() || name.startsWith(".") || name.endsWith(".")
                || name.contains("..") || lower.startsWith("aws.") || lower.startsWith("amazon.")) {
            throw MessageQueueException.invalidParameter("Message attribute name '" + name + "' is invalid: 1 to 256 "
                    + "letters, digits, '_', '-' and '.', no leading, trailing or double '.', not starting with "
                    + "'AWS.' or 'Amazon.'");
        }
    }

    private static void fifoId(String id, String parameter) {
        if (!FIFO_ID.matcher(id).matches()) {
            throw MessageQueueException.invalidParameter("Value " + id + " for parameter " + parameter
                    + " is invalid. Reason: 1 to 128 alphanumeric or punctuation characters.");
        }
    }

    public static int seconds(Duration value, String parameter, Duration max) {
        if (value.isNegative() || value.compareTo(max) > 0 || value.toMillis() % 1000 != 0) {
            throw MessageQueueException.invalidParameter("Value " + value.toMillis() / 1000.0 + " for parameter "
                    + parameter + " is invalid. Reason: Must be whole seconds from 0 to " + max.toSeconds() + ".");
        }
        return (int) value.toSeconds();
    }

    public static void maxMessages(int max) {
        if (max < 1 || max > MAX_BATCH) {
            throw MessageQueueException.invalidParameter("Value " + max + " for parameter MaxNumberOfMessages is "
                    + "invalid. Reason: Must be between 1 and 10, if provided.");
        }
    }
}
