package io.pgqueue.autoconfigure.sqs;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;

import io.pgqueue.autoconfigure.sqs.SigV4Verifier.SignedRequest;
import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Signature Version 4 verification against the vectors of AWS's own test suite
 * ({@code get-vanilla}, {@code post-x-www-form-urlencoded}, {@code get-vanilla-query-order-key-case}).
 */
class SigV4VerifierTests {

    private static final String KEY = "AKIDEXAMPLE";

    private static final String SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";

    private static final Clock AT_SIGNING = Clock.fixed(Instant.parse("2015-08-30T12:36:00Z"), ZoneOffset.UTC);

    private final SigV4Verifier verifier = new SigV4Verifier(key -> KEY.equals(key) ? SECRET : null, "service",
            AT_SIGNING);

    private static Map<String, String> headers(String signedHeaders, String signature) {
        return Map.of("host", "example.amazonaws.com", "x-amz-date", "20150830T123600Z", "authorization",
                "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders="
                        + signedHeaders + ", Signature=" + signature);
    }

    @Test
    void getVanilla() {
        SignedRequest request = new SignedRequest("GET", "/", null,
                headers("host;x-amz-date", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
                new byte[0]);
        assertThat(this.verifier.verify(request)).isEqualTo(KEY);
    }

    @Test
    void queryParametersAreSortedAndEncoded() {
        SignedRequest request = new SignedRequest("GET", "/", "Param2=value2&Param1=value1",
                headers("host;x-amz-date", "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"),
                new byte[0]);
        assertThat(this.verifier.verify(request)).isEqualTo(KEY);
    }

    @Test
    void aMalformedEscapeInTheQueryIsAMalformedQueryStringAndNeverAnInternalError() {
        SignedRequest request = new SignedRequest("GET", "/", "Action=ListQueues&x=%ZZ",
                headers("host;x-amz-date", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
                new byte[0]);
        assertThatThrownBy(() -> this.verifier.verify(request)).isInstanceOfSatisfying(MessageQueueException.class,
                ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.MALFORMED_REQUEST));
    }

    @Test
    void postWithAFormBody() {
        Map<String, String> headers = new java.util.HashMap<>(headers("content-type;host;x-amz-date",
                "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"));
        headers.put("content-type", "application/x-www-form-urlencoded");
        SignedRequest request = new SignedRequest("POST", "/", null, headers,
                "Param1=value1".getBytes(StandardCharsets.UTF_8));
        assertThat(this.verifier.verify(request)).isEqualTo(KEY);
    }

    @Test
    void aChangedBodyBreaksTheSignature() {
        Map<String, String> headers = new java.util.HashMap<>(headers("content-type;host;x-amz-date",
                "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"));
        headers.put("content-type", "application/x-www-form-urlencoded");
        SignedRequest request = new SignedRequest("POST", "/", null, headers,
                "Param1=value2".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> this.verifier.verify(request)).isInstanceOfSatisfying(MessageQueueException.class,
                ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.SIGNATURE_DOES_NOT_MATCH));
    }

    @Test
    void aPayloadHashHeaderCannotStandInForTheBody() {
        Map<String, String> headers = new java.util.HashMap<>(headers("content-type;host;x-amz-date",
                "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"));
        headers.put("content-type", "application/x-www-form-urlencoded");
        // The signed body's hash, claimed for another body: a captured request sent again.
        headers.put("x-amz-content-sha256", SigV4Verifier.sha256Hex("Param1=value1"));
        SignedRequest replayed = new SignedRequest("POST", "/", null, headers,
                "Param1=value2".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> this.verifier.verify(replayed)).isInstanceOfSatisfying(MessageQueueException.class,
                ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.SIGNATURE_DOES_NOT_MATCH));

        headers.put("x-amz-content-sha256", "UNSIGNED-PAYLOAD");
        SignedRequest unsignedPayload = new SignedRequest("POST", "/", null, headers,
                "Param1=value2".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> this.verifier.verify(unsignedPayload))
            .isInstanceOfSatisfying(MessageQueueException.class,
                    ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.SIGNATURE_DOES_NOT_MATCH));

        // The header with the body's true hash is accepted.
        headers.put("x-amz-content-sha256", SigV4Verifier.sha256Hex("Param1=value1"));
        SignedRequest honest = new SignedRequest("POST", "/", null, headers,
                "Param1=value1".getBytes(StandardCharsets.UTF_8));
        assertThat(this.verifier.verify(honest)).isEqualTo(KEY);
    }

    @Test
    void aSignatureMustCoverTheHeadersThatDecideTheAction() {
        // Signed over host;x-amz-date only, then sent with an action and a content type it never saw.
        for (String deciding : List.of("x-amz-target", "content-type")) {
            Map<String, String> headers = new java.util.HashMap<>(headers("host;x-amz-date",
                    "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"));
            headers.put(deciding, deciding.equals("x-amz-target") ? "AmazonSQS.PurgeQueue" : "application/x-amz-json-1.0");
            assertThatThrownBy(() -> this.verifier.check(headers)).as(deciding)
                .isInstanceOfSatisfying(MessageQueueException.class, ex -> {
                    assertThat(ex.error()).isEqualTo(MessageQueueError.INCOMPLETE_SIGNATURE);
                    assertThat(ex.getMessage()).contains(deciding);
                });
        }
        Map<String, String> dateUnsigned = new java.util.HashMap<>(headers("host",
                "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"));
        assertThatThrownBy(() -> this.verifier.check(dateUnsigned)).isInstanceOfSatisfying(MessageQueueException.class,
                ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.INCOMPLETE_SIGNATURE));
    }

    @Test
    void anUnknownKeyAnOldSignatureAndNoSignatureAreRefused() {
        SignedRequest unknown = new SignedRequest("GET", "/", null, Map.of("host", "example.amazonaws.com",
                "x-amz-date", "20150830T123600Z", "authorization", "AWS4-HMAC-SHA256 Credential=OTHER/20150830/"
                        + "us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature="
                        + "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"), new byte[0]);
        assertThatThrownBy(() -> this.verifier.verify(unknown)).isInstanceOfSatisfying(MessageQueueException.class,
                ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.INVALID_CLIENT_TOKEN_ID));

        SigV4Verifier later = new SigV4Verifier(key -> SECRET, "service",
                Clock.fixed(Instant.parse("2015-08-30T12:52:00Z"), ZoneOffset.UTC));
        SignedRequest vanilla = new SignedRequest("GET", "/", null,
                headers("host;x-amz-date", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
                new byte[0]);
        assertThatThrownBy(() -> later.verify(vanilla)).isInstanceOfSatisfying(MessageQueueException.class,
                ex -> assertThat(ex.getMessage()).contains("Signature expired"));

        SignedRequest unsigned = new SignedRequest("GET", "/", null, Map.of("host", "example.amazonaws.com"),
                new byte[0]);
        assertThatThrownBy(() -> this.verifier.verify(unsigned)).isInstanceOfSatisfying(MessageQueueException.class,
                ex -> assertThat(ex.error()).isEqualTo(MessageQueueError.MISSING_AUTHENTICATION_TOKEN));
    }
}
