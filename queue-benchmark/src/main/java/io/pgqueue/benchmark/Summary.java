package io.pgqueue.benchmark;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Folds repeated result lines into one line per configuration: each measured figure as
 * {@code median(min-max)}.
 */
final class Summary {

    /** Keys that identify a configuration rather than measure it. */
    private static final Set<String> IDENTITY = Set.of("workload", "task_types", "n", "backlog", "keys", "rate", "target_per_s",
            "producers");

    private Summary() {
    }

    static List<String> of(List<String> lines) {
        Map<String, Map<String, List<String>>> groups = new LinkedHashMap<>();
        for (String line : lines) {
            Map<String, String> fields = new LinkedHashMap<>();
            for (String pair : line.split(" ")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    fields.put(pair.substring(0, eq), pair.substring(eq + 1));
                }
            }
            StringBuilder identity = new StringBuilder();
            fields.forEach((key, value) -> {
                if (IDENTITY.contains(key)) {
                    identity.append(key).append('=').append(value).append(' ');
                }
            });
            Map<String, List<String>> values = groups.computeIfAbsent(identity.toString().strip(), k -> new LinkedHashMap<>());
            fields.forEach((key, value) -> {
                if (!IDENTITY.contains(key)) {
                    values.computeIfAbsent(key, k -> new ArrayList<>()).add(value);
                }
            });
        }
        List<String> summary = new ArrayList<>();
        groups.forEach((identity, values) -> {
            StringBuilder line = new StringBuilder(identity);
            values.forEach((key, list) -> line.append(' ').append(key).append('=').append(fold(list)));
            line.append(" runs=").append(values.values().stream().mapToInt(List::size).max().orElse(0));
            summary.add(line.toString());
        });
        return summary;
    }

    private static String fold(List<String> values) {
        try {
            double[] numbers = values.stream().mapToDouble(Double::parseDouble).sorted().toArray();
            if (numbers.length == 1) {
                return format(numbers[0]);
            }
            double median = numbers.length % 2 == 1 ? numbers[numbers.length / 2]
                    : (numbers[numbers.length / 2 - 1] + numbers[numbers.length / 2]) / 2;
            return format(median) + "(" + format(numbers[0]) + "-" + format(numbers[numbers.length - 1]) + ")";
        }
        catch (NumberFormatException ex) {
            return String.join("/", values.stream().distinct().toList());
        }
    }

    private static String format(double value) {
        return value == Math.rint(value) && Math.abs(value) > 10 ? String.format(Locale.ROOT, "%.0f", value)
                : String.format(Locale.ROOT, "%.2f", value);
    }

}
