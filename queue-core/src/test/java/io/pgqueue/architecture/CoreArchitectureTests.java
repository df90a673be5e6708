package io.pgqueue.architecture;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ladder queue-core's imports run down, checked on its compiled classes: {@code PgQueue} →
 * {@code QueueAdmin} → {@code QueueClient} → the engine ({@code io.pgqueue.internal.*}, built as one
 * {@code Engine}) → the store ({@code io.pgqueue.internal.store}) → the public value types and
 * interfaces ({@code Schedules} and {@code MessageQueues} are interfaces the engine implements).
 * Each rule lists every dependency that breaks it.
 */
class CoreArchitectureTests {

    private static final String INTERNAL = "io.pgqueue.internal.";

    private static final String STORE = "io.pgqueue.internal.store.";

    /** The facades, each on its rung: a class may depend only on lower rungs (and within the bottom three). */
    private static final Map<String, Integer> FACADES = Map.of(
            "io.pgqueue.PgQueue", 6,
            "io.pgqueue.QueueAdmin", 5,
            "io.pgqueue.QueueTestSupport", 5,
            "io.pgqueue.QueueClient", 3,
            "io.pgqueue.store.QueueSchema", 3);

    /** The builders the client hands out, part of its rung. */
    private static final Map<String, String> CLIENT_PARTS = Map.of(
            "io.pgqueue.Workflow", "io.pgqueue.QueueClient",
            "io.pgqueue.Batch", "io.pgqueue.QueueClient");

    private static final int ENGINE = 2;

    private static final int STORE_RUNG = 1;

    private static final int VALUES = 0;

    private static final List<String> JDBC = List.of("java.sql.", "org.springframework.jdbc.", "org.postgresql.");

    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.pgqueue");
    }

    @Test
    void importsRunDownTheLadder() {
        Set<String> found = new TreeSet<>();
        for (JavaClass origin : classes) {
            for (Dependency dependency : origin.getDirectDependenciesFromSelf()) {
                String from = topLevel(origin.getName());
                String to = topLevel(dependency.getTargetClass().getName());
                if (!to.startsWith("io.pgqueue.") || from.equals(to)) {
                    continue;
                }
                int a = rung(from);
                int b = rung(to);
                if (b > a || (b == a && a > ENGINE)) {
                    found.add("ladder: " + from + " -> " + to);
                }
            }
        }
        assertThat(found).as("dependencies up the ladder (move the code down instead)").isEmpty();
    }

    @Test
    void enginePackagesFormNoCycle() {
        Map<String, Set<String>> graph = new LinkedHashMap<>();
        for (JavaClass origin : classes) {
            String from = origin.getPackageName();
            if (!from.startsWith(INTERNAL)) {
                continue;
            }
            for (Dependency dependency : origin.getDirectDependenciesFromSelf()) {
                String to = dependency.getTargetClass().getPackageName();
                if (to.startsWith(INTERNAL) && !to.equals(from)) {
                    graph.computeIfAbsent(from, key -> new TreeSet<>()).add(to);
                }
            }
        }
        Set<String> found = new TreeSet<>();
        graph.forEach((from, targets) -> targets.forEach(to -> {
            if (reaches(graph, to, from)) {
                found.add("cycle: " + from + " -> " + to);
            }
        }));
        assertThat(found).as("dependencies between engine packages that form a cycle").isEmpty();
    }

    @Test
    void onlyTheStoreUsesJdbc() {
        Set<String> found = new TreeSet<>();
        for (JavaClass origin : classes) {
            if (origin.getName().startsWith(STORE)) {
                continue;
            }
            for (Dependency dependency : origin.getDirectDependenciesFromSelf()) {
                String to = dependency.getTargetClass().getName();
                if (JDBC.stream().anyMatch(to::startsWith)) {
                    found.add("jdbc: " + topLevel(origin.getName()) + " -> " + topLevel(to));
                }
            }
        }
        assertThat(found).as("JDBC used outside io.pgqueue.internal.store").isEmpty();
    }

    @Test
    void thePublicApiHandsOutNoEngineType() {
        Set<String> found = new TreeSet<>();
        for (JavaClass type : classes) {
            if (type.getPackageName().startsWith(INTERNAL) || !type.getModifiers().contains(JavaModifier.PUBLIC)) {
                continue;
            }
            for (JavaMember member : type.getMembers()) {
                if (!member.getModifiers().contains(JavaModifier.PUBLIC) && !member.getModifiers().contains(JavaModifier.PROTECTED)) {
                    continue;
                }
                List<JavaClass> involved = new ArrayList<>();
                if (member instanceof JavaCodeUnit unit) {
                    involved.addAll(unit.getReturnType().getAllInvolvedRawTypes());
                    unit.getParameterTypes().forEach(parameter -> involved.addAll(parameter.getAllInvolvedRawTypes()));
                }
                else if (member instanceof JavaField field) {
                    involved.addAll(field.getType().getAllInvolvedRawTypes());
                }
                involved.stream().filter(used -> used.getName().startsWith(INTERNAL))
                    .forEach(used -> found.add(type.getName() + "." + member.getName() + " -> " + used.getName()));
            }
        }
        assertThat(found).as("public members that hand out or take engine types").isEmpty();
    }

    private static boolean reaches(Map<String, Set<String>> graph, String from, String target) {
        List<String> todo = new ArrayList<>(List.of(from));
        Set<String> seen = new TreeSet<>();
        while (!todo.isEmpty()) {
            String next = todo.remove(todo.size() - 1);
            if (next.equals(target)) {
                return true;
            }
            if (seen.add(next)) {
                todo.addAll(graph.getOrDefault(next, Set.of()));
            }
        }
        return false;
    }

    private static int rung(String className) {
        Integer facade = FACADES.get(className);
        if (facade != null) {
            return facade;
        }
        if (className.startsWith(STORE)) {
            return STORE_RUNG;
        }
        return className.startsWith(INTERNAL) ? ENGINE : VALUES;
    }

    /** @return the top-level class of a class, or the facade it is part of */
    private static String topLevel(String className) {
        int nested = className.indexOf('$');
        String top = nested < 0 ? className : className.substring(0, nested);
        return CLIENT_PARTS.getOrDefault(top, top);
    }
}
