package io.pgqueue.benchmark;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import io.pgqueue.internal.shard.PartitionHash;
import io.pgqueue.internal.shard.Shards;

/**
 * Tenant keys drawn with Zipf weights (exponent 1): tenant of rank r is drawn in proportion to 1/r.
 * The heaviest tenants are picked among keys whose partitions the main shard holds, so the load
 * starts skewed onto it (about three quarters with 50 of 1,000 tenants); the others fall anywhere.
 */
final class SkewedKeys {

    private final List<String> tenants = new ArrayList<>();

    private final double[] cumulative;

    SkewedKeys(Shards shards, int count, int onMain, long seed) {
        Random random = new Random(seed);
        int partitions = shards.partitions();
        String main = shards.main().name();
        while (this.tenants.size() < count) {
            String key = "tenant-" + Long.toHexString(random.nextLong());
            boolean onMainShard = shards.map().shardOf(PartitionHash.partitionOf(key, partitions)).equals(main);
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
