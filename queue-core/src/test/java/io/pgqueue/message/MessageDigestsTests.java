package io.pgqueue.message;

import java.nio.charset.StandardCharsets;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The digests match the values Amazon SQS and its SDKs compute (vectors from the SDKs' own tests).
 */
class MessageDigestsTests {

    @Test
    void md5OfABody() {
        assertThat(MessageDigests.md5OfBody("hello")).isEqualTo("5d41402abc4b2a76b9719d911017c592");
    }

    @Test
    void md5OfAStringAttribute() {
        assertThat(MessageDigests.md5OfAttributes(Map.of("attribName1", MessageAttributeValue.string("attribValue 1"))))
            .isEqualTo("19e27d4e946b072f3f58da80d94fd778");
    }

    @Test
    void md5OfABinaryAttribute() {
        assertThat(MessageDigests.md5OfAttributes(Map.of("binaryAttribute",
                MessageAttributeValue.binary("Hello binary world!".getBytes(StandardCharsets.UTF_8)))))
            .isEqualTo("31a92b15d92f8db860eda32aceb656c3");
    }

    @Test
    void noAttributesHaveNoDigest() {
        assertThat(MessageDigests.md5OfAttributes(Map.of())).isNull();
    }
}
