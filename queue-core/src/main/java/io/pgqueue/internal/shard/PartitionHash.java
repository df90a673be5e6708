package io.pgqueue.internal.shard;

import java.nio.charset.StandardCharsets;

/**
 * The partition of a job: MurmurHash3 (x86, 32-bit, seed 0) of its partition key's UTF-8 bytes,
 * taken modulo the installation's partition count as an unsigned number. The function is fixed
 * for good: every node of every release, and the schema's {@code partition_of(text, integer)},
 * must put a key in the same partition, or duplicates would stop meeting on one shard.
 */
public final class PartitionHash {

    private static final int C1 = 0xcc9e2d51;

    private static final int C2 = 0x1b873593;

    private PartitionHash() {
    }

    /**
     * Returns the partition of a key.
     * @param key the partition key
     * @param partitions the installation's partition count
     * @return the partition, from 0 to {@code partitions - 1}
     */
    public static int partitionOf(String key, int partitions) {
        if (partitions <= 0) {
            throw new IllegalArgumentException("The partition count must be positive, was " + partitions);
        }
        return Integer.remainderUnsigned(murmur3(key.getBytes(StandardCharsets.UTF_8), 0), partitions);
    }

    /**
     * MurmurHash3_x86_32.
     * @param data the bytes
     * @param seed the seed
     * @return the hash
     */
    static int murmur3(byte[] data, int seed) {
        int h = seed;
        int blocks = data.length / 4;
        for (int i = 0; i < blocks; i++) {
            int offset = i * 4;
            int k = (data[offset] & 0xff) | (data[offset + 1] & 0xff) << 8 | (data[offset + 2] & 0xff) << 16
                    | (data[offset + 3] & 0xff) << 24;
            h ^= mixK(k);
            h = Integer.rotateLeft(h, 13) * 5 + 0xe6546b64;
        }
        int tail = blocks * 4;
        int k = 0;
        switch (data.length & 3) {
            case 3:
                k ^= (data[tail + 2] & 0xff) << 16;
                // fall through
            case 2:
                k ^= (data[tail + 1] & 0xff) << 8;
                // fall through
            case 1:
                k ^= data[tail] & 0xff;
                h ^= mixK(k);
                break;
            default:
                break;
        }
        h ^= data.length;
        h ^= h >>> 16;
        h *= 0x85ebca6b;
        h ^= h >>> 13;
        h *= 0xc2b2ae35;
        h ^= h >>> 16;
        return h;
    }

    private static int mixK(int k) {
        return Integer.rotateLeft(k * C1, 15) * C2;
    }
}
