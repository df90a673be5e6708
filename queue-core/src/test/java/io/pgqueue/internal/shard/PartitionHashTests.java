package io.pgqueue.internal.shard;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PartitionHashTests {

    @Test
    void matchesThePublishedMurmur3Vectors() {
        assertThat(PartitionHash.murmur3(new byte[0], 0)).isZero();
        assertThat(PartitionHash.murmur3(new byte[0], 1)).isEqualTo(0x514E28B7);
        assertThat(PartitionHash.murmur3(new byte[0], 0xffffffff)).isEqualTo(0x81F16F39);
        assertThat(PartitionHash.murmur3(new byte[4], 0)).isEqualTo(0x2362F9DE);
        assertThat(hash("aaaa")).isEqualTo(0x5A97808A);
        assertThat(hash("aaa")).isEqualTo(0x283E0130);
        assertThat(hash("aa")).isEqualTo(0x5D211726);
        assertThat(hash("a")).isEqualTo(0x7FA09EA6);
        assertThat(hash("abcd")).isEqualTo(0xF0478627);
        assertThat(hash("abc")).isEqualTo(0xC84A62DD);
        assertThat(hash("Hello, world!")).isEqualTo(0x24884CBA);
        assertThat(hash("The quick brown fox jumps over the lazy dog")).isEqualTo(0x2FA826CD);
    }

    @Test
    void placesKeysInTheSamePartitionsForGood() {
        // Fixed for good: changing any of these would strand every installation's dedup keys.
        assertThat(PartitionHash.partitionOf("", 1024)).isZero();
        // Cross-checked with Guava's Hashing.murmur3_32_fixed().
        assertThat(PartitionHash.partitionOf("order-1", 1024)).isEqualTo(545);
        assertThat(PartitionHash.partitionOf("tenant-7", 1024)).isEqualTo(263);
        assertThat(PartitionHash.partitionOf("Ünïcödé ключ", 1024)).isEqualTo(966);
        assertThat(PartitionHash.partitionOf("tenant-7", 7)).isEqualTo(Integer.remainderUnsigned(0x3d20cd07, 7));
    }

    @Test
    void rejectsAPartitionCountBelowOne() {
        assertThatThrownBy(() -> PartitionHash.partitionOf("a", 0)).isInstanceOf(IllegalArgumentException.class);
    }

    private static int hash(String text) {
        return PartitionHash.murmur3(text.getBytes(StandardCharsets.UTF_8), 0x9747b28c);
    }
}
