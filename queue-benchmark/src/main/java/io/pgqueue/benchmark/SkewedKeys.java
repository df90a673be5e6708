package io.pgqueue.benchmark;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import io.pgqueue.internal.shard.PartitionHash;

/**
 * Tenant keys drawn with Zipf weights (exponent 1): tenant of rank r is drawn in proportion to 1/r.
 * The heaviest tenants are picked among keys whose partitions the main shard holds, so the load
 * starts skewed onto it (about three quarters with 50 of 1,000 tenants); the others fall anywhere.
 */
final class SkewedKeys {

    private final List<String> tenants = new ArrayList<>();

    private final double[] cumulative;

    /**
     * @param partitions the installation's partition count
     * @param mainPartitions the partitions the main shard holds
     * @param count how many tenants
     * @param onMain how many of the heaviest tenants have keys on the main shard
     * @param seed the seed of the keys
     */
    SkewedKeys(int partitions, Collection<Integer> mainPartitions, int count, int onMain, long seed) {
        Random random = new Random(seed);
        Set<Integer> main = new HashSet<>(mainPartitions);
        while (this.tenants.size() < count) {
            String key = "tenant-" + Long.toHexString(random.nextLong());
            boolean onMainShard = main.contains(PartitionHash.partitionOf(key, partitions));
            if (this.tenants.size() >= onMain || onMainShard) {
                this.tenants.add(key);
            }
        }
        this.cumulative = new double[count];
        double sum = 0;
        for (int r = 0; r < count; r++) {
            sum += 1.0 / (r + 1);
            this.cumulative[r] = sum;
        }
        for (int r = 0; r < count; r++) {
            this.cumulative[r] /= sum;
        }
    }

    /** @return the next tenant's key */
    String next(Random random) {
        double u = random.nextDouble();
        int low = 0;
        int high = this.cumulative.length - 1;
        while (low < high) {
            int middle = (low + high) >>> 1;
            if (this.cumulative[middle] < u) {
                low = middle + 1;
            }
            else {
                high = middle;
            }
        }
        return this.tenants.get(low);
    }
}
