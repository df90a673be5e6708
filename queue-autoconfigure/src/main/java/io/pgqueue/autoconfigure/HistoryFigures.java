package io.pgqueue.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.pgqueue.observe.TaskHistory;

/**
 * The task history as the console and the {@code queues} endpoint answer it: the windows they
 * read ({@code 1h}, {@code 24h}, {@code 7d}) and the points of several tasks added up.
 */
public final class HistoryFigures {

    private static final Map<String, Duration> WINDOWS = Map.of("1h", Duration.ofHours(1), "24h", Duration.ofDays(1),
            "7d", Duration.ofDays(7));

    private HistoryFigures() {
    }

    /**
     * @param name {@code 1h}, {@code 24h} or {@code 7d}
     * @return the window
     * @throws IllegalArgumentException for any other name
     */
    public static Duration window(String name) {
        Duration window = WINDOWS.get(name);
        if (window == null) {
            throw new IllegalArgumentException("Unknown history window '" + name + "'; use 1h, 24h or 7d");
        }
        return window;
    }

    /**
     * Adds up the points of tasks step by step: counts add, averages are weighted by their counts,
     * maxima keep the largest.
     * @param histories the tasks' histories, of one step
     * @return the points, oldest first, each a map of {@code at}, {@code completed}, {@code failed},
     * {@code retried}, {@code started}, {@code waitAvgMs}, {@code waitMaxMs}, {@code ran}, {@code runAvgMs}, {@code runMaxMs}
     */
    public static List<Map<String, Object>> merged(Collection<TaskHistory> histories) {
        Map<Instant, long[]> sums = new TreeMap<>();
        for (TaskHistory history : histories) {
            for (TaskHistory.Point point : history.points()) {
                long[] sum = sums.computeIfAbsent(point.at(), at -> new long[9]);
                sum[0] += point.completed();
                sum[1] += point.failed();
                sum[2] += point.retried();
                sum[3] += point.started();
                sum[4] += point.waitAvgMillis() == null ? 0 : Math.round(point.waitAvgMillis() * point.started());
                sum[5] = Math.max(sum[5], point.waitMaxMillis());
                sum[6] += point.ran();
                sum[7] += point.runAvgMillis() == null ? 0 : Math.round(point.runAvgMillis() * point.ran());
                sum[8] = Math.max(sum[8], point.runMaxMillis());
            }
        }
        return sums.entrySet().stream().map(entry -> {
            long[] sum = entry.getValue();
            Map<String, Object> point = new LinkedHashMap<>();
            point.put("at", entry.getKey());
            point.put("completed", sum[0]);
            point.put("failed", sum[1]);
            point.put("retried", sum[2]);
            point.put("started", sum[3]);
            point.put("waitAvgMs", sum[3] == 0 ? null : sum[4] / (double) sum[3]);
            point.put("waitMaxMs", sum[5]);
            point.put("ran", sum[6]);
            point.put("runAvgMs", sum[6] == 0 ? null : sum[7] / (double) sum[6]);
            point.put("runMaxMs", sum[8]);
            return point;
        }).toList();
    }
}
