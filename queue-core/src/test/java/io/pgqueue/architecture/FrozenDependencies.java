package io.pgqueue.architecture;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The dependencies the architecture rules still allow although they break them, one per line of
 * {@code frozen-dependencies.txt} ({@code <rule>: <from> -> <to>}), in the test resources of the
 * module whose rules they are.
 */
public final class FrozenDependencies {

    private FrozenDependencies() {
    }

    /**
     * Asserts that a rule finds exactly its frozen dependencies.
     * @param rule the rule's name, the prefix of its lines
     * @param found what the rule found, each as {@code <rule>: <from> -> <to>}
     */
    public static void assertMatches(String rule, Set<String> found) {
        Set<String> frozen = frozen(rule);
        Set<String> added = new TreeSet<>(found);
        added.removeAll(frozen);
        Set<String> gone = new TreeSet<>(frozen);
        gone.removeAll(found);
        assertThat(added).as("dependencies that break the rule '%s' (move the code down the ladder instead)", rule)
            .isEmpty();
        assertThat(gone).as("frozen dependencies of the rule '%s' that are gone: take them off frozen-dependencies.txt",
                rule).isEmpty();
    }

    private static Set<String> frozen(String rule) {
        Set<String> lines = new TreeSet<>();
        try (InputStream in = FrozenDependencies.class.getResourceAsStream("frozen-dependencies.txt")) {
            if (in == null) {
                return lines;
            }
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                String trimmed = line.strip();
                if (trimmed.startsWith(rule + ":")) {
                    lines.add(trimmed);
                }
            }
        }
        catch (IOException ex) {
            throw new IllegalStateException(ex);
        }
        return lines;
    }
}
