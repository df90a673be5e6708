package io.pgqueue.autoconfigure.sqs;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;

/**
 * Verifies AWS Signature Version 4 of a request (the {@code Authorization} header form the AWS
 * SDKs and CLI send) against configured secret keys: rebuilds the canonical request from the
 * method, path, query, signed headers and the body's SHA-256, derives the signing key from the
 * secret, date, region and service, and compares signatures in constant time. Requests signed
 * more than 15 minutes before or after now are refused, as AWS does.
 */
final class SigV4Verifier {

    private static final String ALGORITHM = "AWS4-HMAC-SHA256";

    private static final Pattern AUTHORIZATION = Pattern.compile(ALGORITHM
            + "\\s+Credential=([^/,\\s]+)/(\\d{8})/([^/,\\s]+)/([^/,\\s]+)/aws4_request\\s*,\\s*"
            + "SignedHeaders=([^,\\s]+)\\s*,\\s*Signature=([0-9a-fA-F]{64})\\s*");

    private static final DateTimeFormatter AMZ_DATE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")
        .withZone(ZoneOffset.UTC);

    private static final Duration MAX_SKEW = Duration.ofMinutes(15);

    private final Function<String, String> secrets;

    private final String service;

    private final Clock clock;

    /**
     * @param secrets the secret key of an access key id, or {@code null} for an unknown one
     * @param service the service name signatures must be scoped to ({@code sqs})
     * @param clock the clock requests' dates are checked against
     */
    SigV4Verifier(Function<String, String> secrets, String service, Clock clock) {
        this.secrets = secrets;
        this.service = service;
        this.clock = clock;
    }

    /**
     * A request to verify.
     *
     * @param method the HTTP method
     * @param rawPath the path as sent, still percent-encoded
     * @param rawQuery the query string as sent, or {@code null}
     * @param headers the headers by lower-case name (values of repeated headers joined by ',')
     * @param body the body
     */
    record SignedRequest(String method, String rawPath, String rawQuery, Map<String, String> headers, byte[] body) {
    }

    /**
     * What the Authorization header and the headers it signs say, checked before the body is read:
     * a request that cannot be from a configured key costs no more than its headers.
     *
     * @param accessKey the access key id
     * @param secret its secret
     * @param date the credential's day (yyyyMMdd)
     * @param region the credential's region
     * @param scopeService the credential's service
     * @param signedHeaders the names of the signed headers, lower case
     * @param signature the signature, lower-case hex
     * @param amzDate the X-Amz-Date header
     */
    record Signature(String accessKey, String secret, String date, String region, String scopeService,
            List<String> signedHeaders, String signature, String amzDate) {
    }

    /**
     * Checks what a request's headers can tell: the Authorization header is a Signature Version 4
     * one of a configured key, scoped to this service, on time, and it signs the host, the date and
     * the headers that decide what the request does ({@code x-amz-target}, {@code content-type}).
     * @param headers the headers by lower-case name
     * @return the signature to check against the body
     * @throws MessageQueueException when the signature is missing, malformed, stale, made with an
     * unknown key or leaves a deciding header out
     */
    Signature check(Map<String, String> headers) {
        String authorization = headers.get("authorization");
        if (authorization == null) {
            throw new MessageQueueException(MessageQueueError.MISSING_AUTHENTICATION_TOKEN, "The request is not signed: "
                    + "sign it with AWS Signature Version 4 and an access key configured in pgqueue.sqs.credentials");
        }
        Matcher matcher = AUTHORIZATION.matcher(authorization);
        if (!matcher.matches()) {
            throw new MessageQueueException(MessageQueueError.INCOMPLETE_SIGNATURE,
                    "The Authorization header is not an AWS Signature Version 4 (" + ALGORITHM + ") header");
        }
        String accessKey = matcher.group(1);
        String date = matcher.group(2);
        String region = matcher.group(3);
        String scopeService = matcher.group(4);
        List<String> signedHeaders = List.of(matcher.group(5).toLowerCase(Locale.ROOT).split(";"));
        String signature = matcher.group(6).toLowerCase(Locale.ROOT);
        String secret = this.secrets.apply(accessKey);
        if (secret == null) {
            throw new MessageQueueException(MessageQueueError.INVALID_CLIENT_TOKEN_ID,
                    "The security token included in the request is invalid: access key " + accessKey
                            + " is not configured");
        }
        if (!this.service.equals(scopeService)) {
            throw new MessageQueueException(MessageQueueError.SIGNATURE_DOES_NOT_MATCH,
                    "Credential should be scoped to correct service: '" + this.service + "'");
        }
        String amzDate = headers.get("x-amz-date");
        if (amzDate == null || !signedHeaders.contains("host") || !signedHeaders.contains("x-amz-date")) {
            throw new MessageQueueException(MessageQueueError.INCOMPLETE_SIGNATURE,
                    "The request must carry X-Amz-Date and sign it and Host");
        }
        // A signature that leaves out what decides the action would let a captured request be sent
        // again as another action (X-Amz-Target) or read as another protocol (Content-Type).
        for (String deciding : List.of("x-amz-target", "content-type")) {
            if (headers.containsKey(deciding) && !signedHeaders.contains(deciding)) {
                throw new MessageQueueException(MessageQueueError.INCOMPLETE_SIGNATURE,
                        "The signature must cover the " + deciding + " header the request carries");
            }
        }
        Instant signedAt;
        try {
            signedAt = Instant.from(AMZ_DATE.parse(amzDate));
        }
        catch (DateTimeParseException ex) {
            throw new MessageQueueException(MessageQueueError.INCOMPLETE_SIGNATURE, "X-Amz-Date is malformed: " + amzDate);
        }
        if (!amzDate.startsWith(date)) {
            throw new MessageQueueException(MessageQueueError.SIGNATURE_DOES_NOT_MATCH,
                    "The credential's date " + date + " is not the day of X-Amz-Date " + amzDate);
        }
        Duration skew = Duration.between(signedAt, this.clock.instant()).abs();
        if (skew.compareTo(MAX_SKEW) > 0) {
            throw new MessageQueueException(MessageQueueError.SIGNATURE_DOES_NOT_MATCH, "Signature expired: "
                    + amzDate + " is more than 15 minutes from the server's time " + AMZ_DATE.format(this.clock.instant()));
        }
        return new Signature(accessKey, secret, date, region, scopeService, signedHeaders, signature, amzDate);
    }

    /**
     * @param request the request
     * @return the access key id that signed it
     * @throws MessageQueueException when the signature is missing, malformed, stale, made with an
     * unknown key or does not match
     */
    String verify(SignedRequest request) {
        return verify(request, check(request.headers()));
    }

    /**
     * Verifies a request whose headers {@link #check} passed: the body's hash and the signature.
     * @param request the request
     * @param checked what the check found in its headers
     * @return the access key id that signed it
     * @throws MessageQueueException when the body's hash or the signature does not match
     */
    String verify(SignedRequest request, Signature checked) {
        String date = checked.date();
        // Always the hash of the body received: a header that claims another one, or an unsigned
        // payload, would let a captured request be sent again with another body.
        String bodyHash = sha256Hex(request.body());
        String claimedHash = request.headers().get("x-amz-content-sha256");
        if (claimedHash != null && !claimedHash.equalsIgnoreCase(bodyHash)) {
            throw new MessageQueueException(MessageQueueError.SIGNATURE_DOES_NOT_MATCH,
                    "The x-amz-content-sha256 header is not the SHA-256 of the body: sign the body itself");
        }
        String scope = date + "/" + checked.region() + "/" + checked.scopeService() + "/aws4_request";
        String canonical = canonicalRequest(request, checked.signedHeaders(), bodyHash);
        String stringToSign = ALGORITHM + "\n" + checked.amzDate() + "\n" + scope + "\n" + sha256Hex(canonical);
        byte[] secret = ("AWS4" + checked.secret()).getBytes(StandardCharsets.UTF_8);
        byte[] key = hmac(hmac(hmac(hmac(secret, date), checked.region()), checked.scopeService()), "aws4_request");
        String expected = HexFormat.of().formatHex(hmac(key, stringToSign));
        if (!MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII),
                checked.signature().getBytes(StandardCharsets.US_ASCII))) {
            throw new MessageQueueException(MessageQueueError.SIGNATURE_DOES_NOT_MATCH, "The request signature we "
                    + "calculated does not match the signature you provided. Check your AWS Secret Access Key and "
                    + "signing method.");
        }
        return checked.accessKey();
    }

    static String canonicalRequest(SignedRequest request, List<String> signedHeaders, String bodyHash) {
        StringBuilder canonical = new StringBuilder();
        canonical.append(request.method().toUpperCase(Locale.ROOT)).append('\n');
        canonical.append(canonicalPath(request.rawPath())).append('\n');
        canonical.append(canonicalQuery(request.rawQuery())).append('\n');
        for (String name : signedHeaders) {
            String value = request.headers().getOrDefault(name, "");
            canonical.append(name).append(':').append(value.strip().replaceAll("\\s+", " ")).append('\n');
        }
        canonical.append('\n').append(String.join(";", signedHeaders)).append('\n');
        canonical.append(bodyHash);
        return canonical.toString();
    }

    /** Each segment of the path as sent, encoded again: AWS services other than S3 sign the path encoded twice. */
    private static String canonicalPath(String rawPath) {
        if (rawPath == null || rawPath.isEmpty()) {
            return "/";
        }
        List<String> segments = new ArrayList<>();
        for (String segment : rawPath.split("/", -1)) {
            segments.add(encode(segment));
        }
        return String.join("/", segments);
    }

    private static String canonicalQuery(String rawQuery) {
        if (rawQuery == null || rawQuery.isEmpty()) {
            return "";
        }
        List<String[]> pairs = new ArrayList<>();
        for (String pair : rawQuery.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int equals = pair.indexOf('=');
            String name = equals < 0 ? pair : pair.substring(0, equals);
            String value = equals < 0 ? "" : pair.substring(equals + 1);
            pairs.add(new String[] { encode(decode(name)), encode(decode(value)) });
        }
        pairs.sort((a, b) -> a[0].equals(b[0]) ? a[1].compareTo(b[1]) : a[0].compareTo(b[0]));
        StringBuilder query = new StringBuilder();
        for (String[] pair : pairs) {
            if (!query.isEmpty()) {
                query.append('&');
            }
            query.append(pair[0]).append('=').append(pair[1]);
        }
        return query.toString();
    }

    private static String decode(String text) {
        return SqsServlet.decode(text.replace("+", "%20"));
    }

    /** RFC 3986 encoding as SigV4 wants it: unreserved characters kept, every other byte %XX (upper case). */
    static String encode(String text) {
        StringBuilder encoded = new StringBuilder();
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            char c = (char) (b & 0xFF);
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'
                    || c == '.' || c == '~') {
                encoded.append(c);
            }
            else {
                encoded.append('%').append(String.format("%02X", b & 0xFF));
            }
        }
        return encoded.toString();
    }

    static String sha256Hex(String text) {
        return sha256Hex(text.getBytes(StandardCharsets.UTF_8));
    }

    static String sha256Hex(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        }
        catch (GeneralSecurityException ex) {
            throw new IllegalStateException(ex);
        }
    }

    private static byte[] hmac(byte[] key, String data) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
        }
        catch (GeneralSecurityException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
