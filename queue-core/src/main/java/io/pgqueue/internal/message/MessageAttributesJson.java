package io.pgqueue.internal.message;

import java.util.Base64;
import java.util.Map;
import java.util.TreeMap;

import io.pgqueue.message.MessageAttributeValue;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * How message attributes are stored: a JSON object by name, each with its type and its string or
 * (base64) binary value.
 */
public final class MessageAttributesJson {

    private static final ObjectMapper JSON = JsonMapper.builder().build();

    private static final TypeReference<Map<String, Map<String, String>>> ATTRIBUTES = new TypeReference<>() {
    };

    private MessageAttributesJson() {
    }

    /** @return the attributes as JSON, or {@code null} without attributes */
    public static String write(Map<String, MessageAttributeValue> attributes) {
        if (attributes.isEmpty()) {
            return null;
        }
        Map<String, Map<String, String>> json = new TreeMap<>();
        attributes.forEach((name, value) -> json.put(name, value.binary()
                ? Map.of("type", value.dataType(), "binary", Base64.getEncoder().encodeToString(value.binaryValue()))
                : Map.of("type", value.dataType(), "string", value.stringValue())));
        return JSON.writeValueAsString(json);
    }

    /** @return the attributes of stored JSON, by name */
    public static Map<String, MessageAttributeValue> read(String json) {
        if (json == null) {
            return Map.of();
        }
        Map<String, MessageAttributeValue> attributes = new TreeMap<>();
        JSON.readValue(json, ATTRIBUTES).forEach((name, value) -> attributes.put(name,
                value.containsKey("binary")
                        ? new MessageAttributeValue(value.get("type"), null, Base64.getDecoder().decode(value.get("binary")))
                        : new MessageAttributeValue(value.get("type"), value.get("string"), null)));
        return attributes;
    }
}
