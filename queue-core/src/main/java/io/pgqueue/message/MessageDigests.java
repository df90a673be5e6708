package io.pgqueue.message;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;

/**
 * The digests clients check messages by: the MD5 of a body, the MD5 of message attributes in Amazon
 * SQS's encoding, and the SHA-256 of a body for content-based deduplication.
 */
public final class MessageDigests {

    private MessageDigests() {
    }

    /**
     * @param body a message body
     * @return the MD5 of its UTF-8 bytes, lower-case hexadecimal
     */
    public static String md5OfBody(String body) {
        return hex("MD5", body.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The MD5 of message attributes as Amazon SQS computes it: for each attribute by name, the name,
     * the data type (each as a 4-byte big-endian length and UTF-8 bytes), a transport byte (1 for
     * String and Number, 2 for Binary) and the value (length and bytes).
     * @param attributes the attributes
     * @return the MD5, lower-case hexadecimal, or {@code null} without attributes
     */
    public static String md5OfAttributes(Map<String, MessageAttributeValue> attributes) {
        if (attributes == null || attributes.isEmpty()) {
            return null;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        new TreeMap<>(attributes).forEach((name, value) -> {
            lengthPrefixed(bytes, name.getBytes(StandardCharsets.UTF_8));
            lengthPrefixed(bytes, value.dataType().getBytes(StandardCharsets.UTF_8));
            if (value.binary()) {
                bytes.write(2);
                lengthPrefixed(bytes, value.binaryValue());
            }
            else {
                bytes.write(1);
                lengthPrefixed(bytes, value.stringValue().getBytes(StandardCharsets.UTF_8));
            }
        });
        return hex("MD5", bytes.toByteArray());
    }

    /**
     * @param body a message body
     * @return the SHA-256 of its UTF-8 bytes, lower-case hexadecimal
     */
    public static String sha256OfBody(String body) {
        return hex("SHA-256", body.getBytes(StandardCharsets.UTF_8));
    }

    private static void lengthPrefixed(ByteArrayOutputStream bytes, byte[] value) {
        int length = value.length;
        bytes.write(length >>> 24);
        bytes.write(length >>> 16);
        bytes.write(length >>> 8);
        bytes.write(length);
        bytes.writeBytes(value);
    }

    private static String hex(String algorithm, byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance(algorithm).digest(bytes));
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException("The JVM lacks " + algorithm, ex);
        }
    }
}
