package io.pgqueue.autoconfigure;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import io.pgqueue.JobQuery;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The JSON fields whose values the console and the {@code queues} endpoint never show
 * ({@code pgqueue.redacted-fields}): in a job's payload, headers, result and progress, a field of
 * one of these names (ignoring case), at any depth, reads {@value #REDACTED}; a search may not match
 * on them, since its answers would tell their values.
 */
public final class RedactedFields {

    /** What a redacted value reads as. */
    public static final String REDACTED = "[redacted]";

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final Set<String> names;

    /**
     * @param names the field names, matched ignoring case
     */
    public RedactedFields(List<String> names) {
        this.names = names.stream().map(String::strip).filter(name -> !name.isEmpty())
            .map(name -> name.toLowerCase(Locale.ROOT)).collect(Collectors.toUnmodifiableSet());
    }

    /**
     * Redacts a JSON text.
     * @param json the JSON, or {@code null}
     * @return the JSON with the redacted fields' values replaced, or the text unchanged when it is
     * {@code null}, not JSON, or holds none of them
     */
    public String redact(String json) {
        if (json == null || this.names.isEmpty()) {
            return json;
        }
        JsonNode tree;
        try {
            tree = JSON.readTree(json);
        }
        catch (JacksonException ex) {
            return json;
        }
        return redact(tree) ? JSON.writeValueAsString(tree) : json;
    }

    /**
     * Redacts a map of headers.
     * @param headers the headers
     * @return a copy with the redacted headers' values replaced
     */
    public Map<String, String> redact(Map<String, String> headers) {
        if (this.names.isEmpty()) {
            return headers;
        }
        return headers.entrySet().stream().collect(Collectors.toMap(Map.Entry::getKey,
                entry -> this.names.contains(entry.getKey().toLowerCase(Locale.ROOT)) ? REDACTED : entry.getValue()));
    }

    private boolean redact(JsonNode node) {
        boolean changed = false;
        if (node instanceof ObjectNode object) {
            for (String name : List.copyOf(object.propertyNames())) {
                if (this.names.contains(name.toLowerCase(Locale.ROOT))) {
                    object.put(name, REDACTED);
                    changed = true;
                }
                else {
                    changed |= redact(object.get(name));
                }
            }
        }
        else if (node instanceof ArrayNode array) {
            for (JsonNode element : array) {
                changed |= redact(element);
            }
        }
        return changed;
    }

    /**
     * Refuses a search that matches on a redacted field.
     * @param query the search
     * @throws IllegalArgumentException naming the match, if one of its path's keys is redacted
     */
    public void requireSearchable(JobQuery query) {
        for (JobQuery.JsonMatch match : query.matches()) {
            if (match.path().stream().anyMatch(key -> this.names.contains(key.toLowerCase(Locale.ROOT)))) {
                throw new IllegalArgumentException(match.in().name().toLowerCase(Locale.ROOT) + "."
                        + String.join(".", match.path()) + " is redacted (pgqueue.redacted-fields): it cannot be searched");
            }
        }
    }
}
