package io.pgqueue.observe;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.micrometer.common.KeyValue;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.pgqueue.AttemptResult;
import io.pgqueue.EnqueueOutcome;
import io.pgqueue.RateLimit;
import io.pgqueue.TaskDefinition;
import io.pgqueue.balance.BalancerMeterBinder;
import io.pgqueue.balance.BalancerRound;
import io.pgqueue.balance.BalancerStatus;
import io.pgqueue.balance.MoveReason;
import io.pgqueue.message.MessageQueueCounts;
import io.pgqueue.worker.PoolState;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The metrics table in {@code docs/monitoring.md} against the code: every name in
 * {@link QueueMeterNames} is documented and every documented name exists, and each meter's type,
 * tags and listed tag values are the ones the binder and the event listener register.
 */
class QueueMetricsDocumentationTests {

    private static final Path MONITORING = Path.of("../docs/monitoring.md");

    /** A tag name, optionally followed by its values in parentheses: {@code outcome (`created`, `merged`)}. */
    private static final Pattern TAG = Pattern.compile("([a-z_]+)(?:\\s*\\(([^)]*)\\))?");

    private static final Pattern VALUE = Pattern.compile("`([a-z_]+)`");

    private static Map<String, Row> table;

    private static Map<String, Set<String>> registeredTagNames;

    private static Map<String, Map<String, Set<String>>> registeredTagValues;

    private static Map<String, String> registeredTypes;

    private static Map<String, Set<String>> observationKeys;

    /** One row of the table. */
    private record Row(String type, Map<String, Set<String>> tags) {
    }

    @BeforeAll
    static void readTableAndRegisterEveryMeter() throws IOException {
        table = metricsTable(Files.readString(MONITORING));
        MeterRegistry registry = new SimpleMeterRegistry();
        QueueMeterBinder binder = QueueMeterBinder.NONE.withTasks(List.of("t"), () -> QueueStats.NONE)
            .withPools(Map.of("p", List.of("t")), List::<PoolState>of)
            .withShards(List.of("main", "b"))
            .withLimits(List.of(TaskDefinition.builder("t").globalConcurrency(2)
                .rateLimit(RateLimit.of(10, Duration.ofSeconds(1))).build()));
        binder.bindTo(registry);
        new BalancerMeterBinder(new BalancerStatus() {
            @Override
            public boolean sharded() {
                return true;
            }

            @Override
            public boolean leading() {
                return false;
            }

            @Override
            public Optional<BalancerRound> lastRound() {
                return Optional.empty();
            }

            @Override
            public Map<MoveReason, Long> moves() {
                return Map.of(MoveReason.DRAIN, 0L, MoveReason.OVERLOAD, 0L, MoveReason.GINI, 0L);
            }

            @Override
            public long blockedByFriction() {
                return 0;
            }
        }).bindTo(registry);
        fireEveryEvent(new MicrometerQueueEvents(registry));
        MessageQueueMeters messages = new MessageQueueMeters(registry);
        messages.sent("q", 1);
        messages.received("q", 1);
        messages.received("q", 0);
        messages.firstReceived("q", Duration.ofMillis(3));
        messages.deleted("q", 1);
        messages.counted(Map.of("q", new MessageQueueCounts("q", 1, 1, 1, Duration.ofSeconds(1))));
        registeredTagNames = new TreeMap<>();
        registeredTagValues = new TreeMap<>();
        registeredTypes = new TreeMap<>();
        for (Meter meter : registry.getMeters()) {
            Meter.Id id = meter.getId();
            // Percentile gauges of a timer belong to the timer.
            if (id.syntheticAssociation() != null) {
                continue;
            }
            registeredTypes.put(id.getName(), id.getType().name().toLowerCase(Locale.ROOT));
            Set<String> names = registeredTagNames.computeIfAbsent(id.getName(), name -> new TreeSet<>());
            for (Tag tag : id.getTags()) {
                names.add(tag.getKey());
                registeredTagValues.computeIfAbsent(id.getName(), name -> new TreeMap<>())
                    .computeIfAbsent(tag.getKey(), key -> new TreeSet<>())
                    .add(tag.getValue());
            }
        }
        observationKeys = observe();
    }

    @Test
    void everyNameInQueueMeterNamesIsInTheTableAndNothingElse() throws IllegalAccessException {
        assertThat(table.keySet()).as("names in the metrics table of %s", MONITORING)
            .containsExactlyInAnyOrderElementsOf(constants(false));
    }

    @Test
    void theTableUsesTheTagNamesOfQueueMeterNames() throws IllegalAccessException {
        Set<String> used = table.values().stream()
            .flatMap(row -> row.tags().keySet().stream())
            .collect(Collectors.toCollection(TreeSet::new));

        assertThat(used).containsExactlyInAnyOrderElementsOf(constants(true));
    }

    @Test
    void everyRegisteredMeterIsDocumentedWithItsTypeAndTags() {
        Map<String, Row> meters = new TreeMap<>(table);
        meters.values().removeIf(row -> row.type().equals("observation"));

        assertThat(registeredTypes.keySet()).containsExactlyInAnyOrderElementsOf(meters.keySet());
        meters.forEach((name, row) -> {
            assertThat(documentedType(registeredTypes.get(name))).as("type of %s", name).isEqualTo(row.type());
            assertThat(registeredTagNames.get(name)).as("tags of %s", name)
                .containsExactlyInAnyOrderElementsOf(row.tags().keySet());
            row.tags().forEach((tag, values) -> {
                if (!values.isEmpty()) {
                    assertThat(registeredTagValues.get(name).get(tag)).as("values of tag %s of %s", tag, name)
                        .containsExactlyInAnyOrderElementsOf(values);
                }
            });
        });
    }

    @Test
    void everyObservationIsDocumentedWithTheKeysItStartsWith() {
        Map<String, Row> observations = new TreeMap<>(table);
        observations.values().removeIf(row -> !row.type().equals("observation"));

        assertThat(observationKeys.keySet()).containsExactlyInAnyOrderElementsOf(observations.keySet());
        // The worker adds the outcome of an execution when it ends.
        observationKeys.forEach((name, keys) -> assertThat(observations.get(name).tags().keySet())
            .as("keys of %s", name).containsAll(keys));
    }

    /** Parses the table under "## Metrics": name, type (its first word), tags with their listed values. */
    private static Map<String, Row> metricsTable(String markdown) {
        String section = markdown.substring(markdown.indexOf("\n## Metrics\n"));
        section = section.substring(0, section.indexOf("\n## ", 1));
        Map<String, Row> rows = new LinkedHashMap<>();
        for (String line : section.lines().filter(line -> line.startsWith("| `")).toList()) {
            String[] cells = line.split("\\|");
            String name = cells[1].strip().replace("`", "");
            String type = cells[2].strip().split("\\s+")[0];
            Map<String, Set<String>> tags = new LinkedHashMap<>();
            Matcher tag = TAG.matcher(cells[3]);
            while (tag.find()) {
                Set<String> values = new LinkedHashSet<>();
                Matcher value = VALUE.matcher(tag.group(2) == null ? "" : tag.group(2));
                while (value.find()) {
                    values.add(value.group(1));
                }
                tags.put(tag.group(1), values);
            }
            assertThat(rows.put(name, new Row(type, tags))).as("rows of %s", name).isNull();
        }
        assertThat(rows).as("rows of the metrics table").isNotEmpty();
        return rows;
    }

    /** The values of the name constants, or of the tag-name constants. */
    private static List<String> constants(boolean tags) throws IllegalAccessException {
        List<String> values = new ArrayList<>();
        for (Field field : QueueMeterNames.class.getFields()) {
            if (Modifier.isStatic(field.getModifiers()) && field.getName().startsWith("TAG_") == tags) {
                values.add((String) field.get(null));
            }
        }
        return values;
    }

    /** Every event with every value its enums allow, so that every meter and tag value exists. */
    private static void fireEveryEvent(MicrometerQueueEvents events) {
        Arrays.stream(EnqueueOutcome.values()).forEach(outcome -> events.enqueued("t", outcome));
        events.workflowStarted("upload");
        events.claimRan("p", 3, Duration.ofMillis(2));
        events.started("t", Duration.ofMillis(5), Duration.ofMillis(7), true);
        Arrays.stream(AttemptResult.values()).filter(AttemptResult::isExecutionOutcome)
            .forEach(kind -> events.executed("t", kind, Duration.ofMillis(3)));
    }

    /** The low-cardinality keys each observation starts with, by observation name. */
    private static Map<String, Set<String>> observe() {
        Map<String, Set<String>> keys = new TreeMap<>();
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new ObservationHandler<>() {

            @Override
            public void onStop(Observation.Context context) {
                keys.put(context.getName(), context.getLowCardinalityKeyValues()
                    .stream()
                    .map(KeyValue::getKey)
                    .collect(Collectors.toCollection(HashSet::new)));
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }
        });
        QueueObservations.enqueue(registry, "t").start().stop();
        QueueObservations.execute(registry, "t", Map.of()).start().stop();
        return keys;
    }

    /** The type as the table names it. */
    private static String documentedType(String type) {
        return type.equals("distribution_summary") ? "summary" : type;
    }
}
