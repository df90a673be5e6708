package io.pgqueue.internal.balance;

import java.util.Arrays;
import java.util.Collection;

/**
 * The Gini index of shard loads: 0 when every shard carries the same load, approaching 1 when one
 * shard carries everything. It stays in [0, 1] whatever the number of shards, so one threshold
 * suits 2 shards and 20, and a shard joining or leaving moves it only a little.
 */
public final class Gini {

    private Gini() {
    }

    /**
     * @param loads the loads, one per shard (non-negative)
     * @return the Gini index, 0 for fewer than two shards or no load at all
     */
    public static double of(Collection<Double> loads) {
        double[] sorted = loads.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int n = sorted.length;
        double total = Arrays.stream(sorted).sum();
        if (n < 2 || total <= 0) {
            return 0;
        }
        // Mean absolute difference over all pairs, from the sorted loads in one pass:
        // sum_i sum_j |x_i - x_j| = 2 * sum_i (2i - n + 1) * x_i (i from 0).
        double weighted = 0;
        for (int i = 0; i < n; i++) {
            weighted += (2.0 * i - n + 1) * sorted[i];
        }
        return weighted / (n * total);
    }
}
