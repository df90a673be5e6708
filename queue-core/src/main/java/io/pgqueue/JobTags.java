package io.pgqueue;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The tags of a job: short labels set at enqueue ({@link EnqueueOptions#withTags}) and by its task
 * ({@link QueueTask#tags()}, {@link TaskDefinition#tags()}) that operators filter on
 * ({@link JobQuery#withTags}). A job keeps them, comma-separated, in the header
 * {@value QueueDefaults#TAGS_HEADER}, which travels with the job wherever it goes (re-runs, moves
 * between shards, the outbox, workflows).
 */
public final class JobTags {

    /** The most tags one job has. */
    public static final int MAX_TAGS = 20;

    /** The longest tag. */
    public static final int MAX_TAG_LENGTH = 64;

    private JobTags() {
    }

    /**
     * Checks tags and drops repeats, keeping their order.
     * @param tags the tags
     * @param what what holds them, for the message
     * @return the tags, each once
     * @throws InvalidJobException if a tag is null, blank, longer than {@value #MAX_TAG_LENGTH}
     * characters, or holds a comma, a control character or a space at either end, or if there are more than
     * {@value #MAX_TAGS}
     */
    public static List<String> check(Collection<String> tags, String what) {
        Set<String> distinct = new LinkedHashSet<>();
        for (String tag : tags) {
            if (tag == null || tag.isBlank() || tag.length() > MAX_TAG_LENGTH || !tag.strip().equals(tag)
                    || tag.indexOf(',') >= 0 || tag.chars().anyMatch(Character::isISOControl)) {
                throw new InvalidJobException("A tag of " + what + " must be 1 to " + MAX_TAG_LENGTH
                        + " characters without commas, control characters or spaces at either end, was "
                        + (tag == null ? "null" : "'" + tag + "'"));
            }
            distinct.add(tag);
        }
        if (distinct.size() > MAX_TAGS) {
            throw new InvalidJobException(what + " has " + distinct.size() + " tags; at most " + MAX_TAGS
                    + " are allowed");
        }
        return List.copyOf(distinct);
    }

    /**
     * Reads a job's tags from its headers.
     * @param headers the job's headers
     * @return its tags, in the order they were given; none when it has none
     */
    public static List<String> of(Map<String, String> headers) {
        return parse(headers.get(QueueDefaults.TAGS_HEADER));
    }

    /**
     * Reads tags written by {@link #join}.
     * @param text the header's value, or {@code null}
     * @return the tags; none for {@code null} or an empty text
     */
    public static List<String> parse(String text) {
        if (text == null || text.isEmpty()) {
            return List.of();
        }
        List<String> tags = new ArrayList<>();
        for (String tag : text.split(",")) {
            if (!tag.isEmpty()) {
                tags.add(tag);
            }
        }
        return List.copyOf(tags);
    }

    /**
     * Writes tags as the header's value.
     * @param tags checked tags
     * @return the tags, comma-separated
     */
    public static String join(Collection<String> tags) {
        return String.join(",", tags);
    }
}
