package io.pgqueue.autoconfigure.sqs;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import io.pgqueue.autoconfigure.sqs.SqsActions.Caller;
import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * The HTTP endpoint of the Amazon SQS API: the JSON protocol ({@code X-Amz-Target: AmazonSQS.<Action>},
 * {@code application/x-amz-json-1.0}) and the query protocol (form-encoded {@code Action=...}, XML
 * replies), each with SQS's error shapes. Requests are verified with AWS Signature Version 4 when
 * access keys are configured. A receive that waits for messages is completed asynchronously,
 * holding no servlet thread while it waits.
 */
final class SqsServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;

    private static final Logger log = LoggerFactory.getLogger(SqsServlet.class);

    /** The MDC key holding a call's request id (its {@code x-amzn-RequestId}) while the call runs. */
    static final String REQUEST_ID_MDC = "pgqueue.sqs.requestId";

    private static final String JSON_TARGET_PREFIX = "AmazonSQS.";

    /** A receive waits 20 s at most: one not answered 10 s after that hangs. */
    private static final long HUNG_AFTER_MILLIS = 30_000;

    /** The actions that change nothing, which an unsigned request may make however it comes. */
    private static final Set<String> READS = Set.of("GetQueueUrl", "ListQueues", "GetQueueAttributes", "ListQueueTags",
            "ListDeadLetterSourceQueues", "ListMessageMoveTasks");

    private static final String JSON_CONTENT_TYPE = "application/x-amz-json-1.0";

    private static final ObjectMapper JSON = JsonMapper.builder().build();

    /** Ten messages of at most 1 MiB together, encoded: JSON escapes and form encoding may triple it. */
    private static final int MAX_REQUEST_BYTES = 4 * 1024 * 1024;

    private final transient SqsActions actions;

    private final transient SqsMetrics metrics;

    private final transient SigV4Verifier verifier;

    private final boolean allowAnonymous;

    private final String baseUrl;

    /**
     * @param actions the actions
     * @param metrics the endpoint's meters
     * @param verifier verifies signatures, or {@code null} when no access keys are configured (every request is taken)
     * @param allowAnonymous whether unsigned requests are taken when access keys are configured
     * @param baseUrl the URL queue URLs start with, or {@code null} to take it from each request
     */
    SqsServlet(SqsActions actions, SqsMetrics metrics, SigV4Verifier verifier, boolean allowAnonymous, String baseUrl) {
        this.actions = actions;
        this.metrics = metrics;
        this.verifier = verifier;
        this.allowAnonymous = allowAnonymous;
        this.baseUrl = baseUrl;
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        Call call = new Call(UUID.randomUUID().toString(), System.nanoTime());
        MDC.put(REQUEST_ID_MDC, call.requestId);
        try {
            serve(request, response, call);
        }
        finally {
            MDC.remove(REQUEST_ID_MDC);
        }
    }

    private void serve(HttpServletRequest request, HttpServletResponse response, Call call) throws IOException {
        String target = request.getHeader("X-Amz-Target");
        boolean json = target != null || String.valueOf(request.getContentType()).startsWith(JSON_CONTENT_TYPE);
        try {
            if (!request.getMethod().equals("POST") && !(request.getMethod().equals("GET") && !json)) {
                throw new MessageQueueException(MessageQueueError.INVALID_ACTION,
                        "The SQS API takes POST requests (or GET with a query protocol Action)");
            }
            // What the headers can tell is checked before the body is read: an unsigned request, or
            // one signed with an unknown key, costs no memory for its body.
            Map<String, String> headers = signing(request) ? headers(request) : null;
            SigV4Verifier.Signature signature = headers == null ? null : this.verifier.check(headers);
            byte[] body = body(request);
            String sender = headers == null ? null : this.verifier.verify(new SigV4Verifier.SignedRequest(
                    request.getMethod(), request.getRequestURI(), request.getQueryString(), headers, body), signature);
            ObjectNode parameters;
            if (json) {
                if (target == null || !target.startsWith(JSON_TARGET_PREFIX)) {
                    throw new MessageQueueException(MessageQueueError.INVALID_ACTION,
                            "X-Amz-Target must name an AmazonSQS action, not " + target);
                }
                call.action = target.substring(JSON_TARGET_PREFIX.length());
                parameters = jsonBody(body);
            }
            else {
                parameters = SqsQueryProtocol.request(form(request, body));
                JsonNode named = parameters.remove("Action");
                parameters.remove("Version");
                if (named == null || named.asString().isEmpty()) {
                    throw new MessageQueueException(MessageQueueError.MISSING_PARAMETER,
                            "The request must contain the parameter Action.");
                }
                call.action = named.asString();
            }
            if (sender == null) {
                refuseCrossSite(request, call.action, json, body.length);
            }
            Caller caller = new Caller(baseUrl(request), pathQueue(request), sender);
            CompletableFuture<ObjectNode> result = this.actions.run(call.action, parameters, caller);
            if (result.isDone()) {
                respond(response, json, call, result);
            }
            else {
                answerWhenDone(request, json, call, result);
            }
        }
        catch (MessageQueueException ex) {
            error(response, json, ex, call);
        }
        catch (RuntimeException ex) {
            log.warn("SQS request {} ({}) failed", call.requestId, call.action, ex);
            error(response, json, new MessageQueueException(MessageQueueError.INTERNAL_ERROR,
                    "The request could not be processed: " + ex.getClass().getSimpleName()), call);
        }
    }

    /**
     * Answers a waiting receive when it completes, holding no thread meanwhile; one not answered
     * within the longest wait is answered with an error and counted as hung.
     */
    private void answerWhenDone(HttpServletRequest request, boolean json, Call call, CompletableFuture<ObjectNode> result) {
        AsyncContext async = request.startAsync();
        async.setTimeout(0);
        AtomicBoolean answered = new AtomicBoolean();
        this.metrics.waitStarted();
        CompletableFuture<ObjectNode> guarded = result.orTimeout(HUNG_AFTER_MILLIS, TimeUnit.MILLISECONDS);
        guarded.whenComplete((ok, failure) -> {
            if (!answered.compareAndSet(false, true)) {
                return;
            }
            this.metrics.waitEnded();
            MDC.put(REQUEST_ID_MDC, call.requestId);
            try {
                HttpServletResponse response = (HttpServletResponse) async.getResponse();
                if (unwrap(failure) instanceof TimeoutException) {
                    this.metrics.hung();
                    log.warn("SQS request {} ({}) waited {} ms without an answer: answered with an error",
                            call.requestId, call.action, HUNG_AFTER_MILLIS);
                    error(response, json, new MessageQueueException(MessageQueueError.INTERNAL_ERROR,
                            "The receive did not complete in time"), call);
                }
                else {
                    respond(response, json, call, guarded);
                }
            }
            catch (IOException | RuntimeException ex) {
                log.debug("Could not answer a waiting receive: {}", ex.toString());
            }
            finally {
                async.complete();
                MDC.remove(REQUEST_ID_MDC);
            }
        });
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException completion && completion.getCause() != null ? completion.getCause()
                : failure;
    }

    private void respond(HttpServletResponse response, boolean json, Call call, CompletableFuture<ObjectNode> result)
            throws IOException {
        ObjectNode body;
        try {
            body = result.join();
        }
        catch (CompletionException ex) {
            Throwable cause = ex.getCause();
            if (cause instanceof MessageQueueException queueException) {
                error(response, json, queueException, call);
                return;
            }
            log.warn("SQS request {} ({}) failed", call.requestId, call.action, cause);
            error(response, json, new MessageQueueException(MessageQueueError.INTERNAL_ERROR,
                    "The request could not be processed"), call);
            return;
        }
        response.setStatus(200);
        response.setHeader("x-amzn-RequestId", call.requestId);
        if (json) {
            write(response, JSON_CONTENT_TYPE, JSON.writeValueAsString(body));
        }
        else {
            write(response, "text/xml", SqsQueryProtocol.response(call.action, body, call.requestId));
        }
        answered(call, "OK");
    }

    private void answered(Call call, String code) {
        this.metrics.answered(call.action, code, call.startedNanos);
        if (log.isDebugEnabled()) {
            log.debug("SQS {} answered {} in {} ms", call.action, code,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - call.startedNanos));
        }
    }

    private void error(HttpServletResponse response, boolean json, MessageQueueException ex, Call call)
            throws IOException {
        MessageQueueError error = ex.error();
        response.setStatus(error.status());
        response.setHeader("x-amzn-RequestId", call.requestId);
        if (ex instanceof RequestThrottledException throttled) {
            response.setHeader("Retry-After", Long.toString(throttled.retryAfterSeconds()));
        }
        if (json) {
            response.setHeader("x-amzn-query-error", error.queryCode() + ";" + (error.senderFault() ? "Sender" : "Receiver"));
            ObjectNode body = JsonNodeFactory.instance.objectNode().put("__type", "com.amazonaws.sqs#" + error.code())
                .put("message", ex.getMessage());
            write(response, JSON_CONTENT_TYPE, body.toString());
        }
        else {
            write(response, "text/xml", SqsQueryProtocol.error(error, ex.getMessage(), call.requestId));
        }
        answered(call, error.code());
    }

    /** One call: its request id, when it came, and its action once known. */
    private static final class Call {

        final String requestId;

        final long startedNanos;

        String action;

        Call(String requestId, long startedNanos) {
            this.requestId = requestId;
            this.startedNanos = startedNanos;
        }
    }

    private static void write(HttpServletResponse response, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        response.setContentType(contentType);
        response.setCharacterEncoding("UTF-8");
        response.setContentLength(bytes.length);
        response.getOutputStream().write(bytes);
    }

    /** @return whether the request must be signed: signatures are on, and it is not an allowed anonymous one */
    /**
     * An unsigned request (anonymous access) may come from any web page a browser on the network
     * shows: a GET from a link or an image, a form's POST. Such a request changes queues only by POST,
     * in the SQS protocols' content types (not a form's text/plain or multipart), and without the
     * Origin of another site; reads are not restricted.
     */
    private static void refuseCrossSite(HttpServletRequest request, String action, boolean json, int bodyLength) {
        if (READS.contains(action)) {
            return;
        }
        if (!request.getMethod().equals("POST")) {
            throw new MessageQueueException(MessageQueueError.ACCESS_DENIED, "An unsigned " + action
                    + " must be a POST: an unsigned request changes no queue by " + request.getMethod());
        }
        String contentType = String.valueOf(request.getContentType()).toLowerCase(Locale.ROOT);
        if (!json && !contentType.startsWith("application/x-www-form-urlencoded")
                && !(contentType.equals("null") && bodyLength == 0)) {
            throw new MessageQueueException(MessageQueueError.ACCESS_DENIED, "An unsigned " + action + " must be sent "
                    + "as the JSON or the query protocol sends it, not as " + request.getContentType());
        }
        String origin = request.getHeader("Origin");
        if (origin != null && !sameHost(origin, request.getHeader("Host"))) {
            throw new MessageQueueException(MessageQueueError.ACCESS_DENIED, "An unsigned " + action
                    + " from a page of another site (Origin " + origin + ") changes no queue");
        }
    }

    private static boolean sameHost(String origin, String host) {
        try {
            URI uri = new URI(origin);
            String authority = uri.getHost() == null ? null : uri.getHost() + (uri.getPort() < 0 ? "" : ":" + uri.getPort());
            return authority != null && host != null && authority.equalsIgnoreCase(host);
        }
        catch (URISyntaxException ex) {
            return false;
        }
    }

    private boolean signing(HttpServletRequest request) {
        return this.verifier != null && !(request.getHeader("Authorization") == null && this.allowAnonymous);
    }

    private static Map<String, String> headers(HttpServletRequest request) {
        Map<String, String> headers = new LinkedHashMap<>();
        for (String name : Collections.list(request.getHeaderNames())) {
            headers.put(name.toLowerCase(Locale.ROOT), String.join(",", Collections.list(request.getHeaders(name))));
        }
        return headers;
    }

    private static byte[] body(HttpServletRequest request) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        byte[] buffer = new byte[16 * 1024];
        try (InputStream in = request.getInputStream()) {
            for (int read = in.read(buffer); read >= 0; read = in.read(buffer)) {
                bytes.write(buffer, 0, read);
                if (bytes.size() > MAX_REQUEST_BYTES) {
                    throw new MessageQueueException(MessageQueueError.BATCH_REQUEST_TOO_LONG,
                            "The request is larger than " + MAX_REQUEST_BYTES + " bytes.");
                }
            }
        }
        return bytes.toByteArray();
    }

    private static ObjectNode jsonBody(byte[] body) {
        if (body.length == 0) {
            return JsonNodeFactory.instance.objectNode();
        }
        try {
            JsonNode node = JSON.readTree(body);
            if (node instanceof ObjectNode object) {
                return object;
            }
        }
        catch (RuntimeException ex) {
            // reported below
        }
        throw new MessageQueueException(MessageQueueError.MALFORMED_REQUEST, "The request body is not a JSON object.");
    }

    /** The query string's parameters and, for a form post, the body's. */
    private static Map<String, String[]> form(HttpServletRequest request, byte[] body) {
        Map<String, String[]> parameters = new LinkedHashMap<>();
        parse(request.getQueryString(), parameters);
        String contentType = String.valueOf(request.getContentType()).toLowerCase(Locale.ROOT);
        if (body.length > 0 && (contentType.startsWith("application/x-www-form-urlencoded") || contentType.equals("null"))) {
            parse(new String(body, StandardCharsets.UTF_8), parameters);
        }
        return parameters;
    }

    private static void parse(String encoded, Map<String, String[]> parameters) {
        if (encoded == null || encoded.isEmpty()) {
            return;
        }
        for (String pair : encoded.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int equals = pair.indexOf('=');
            String name = decode(equals < 0 ? pair : pair.substring(0, equals));
            String value = equals < 0 ? "" : decode(pair.substring(equals + 1));
            parameters.putIfAbsent(name, new String[] { value });
        }
    }

    /**
     * Decodes one name or value of a query string or form.
     * @throws MessageQueueException a {@code MalformedQueryString} for an escape that is not {@code %XX} in hex
     */
    static String decode(String encoded) {
        try {
            return URLDecoder.decode(encoded, StandardCharsets.UTF_8);
        }
        catch (IllegalArgumentException ex) {
            throw new MessageQueueException(MessageQueueError.MALFORMED_REQUEST, "The query string or form is "
                    + "malformed: an escape is not a % and two hexadecimal digits");
        }
    }

    private String baseUrl(HttpServletRequest request) {
        if (this.baseUrl != null) {
            return this.baseUrl;
        }
        String host = request.getHeader("Host");
        if (host == null) {
            host = request.getServerName() + ":" + request.getServerPort();
        }
        return request.getScheme() + "://" + host + request.getContextPath() + request.getServletPath();
    }

    /** The queue named by a path {@code /<account>/<name>} under the endpoint, if any. */
    private static String pathQueue(HttpServletRequest request) {
        String path = request.getPathInfo();
        if (path == null) {
            return null;
        }
        String[] segments = path.replaceAll("^/+|/+$", "").split("/");
        return segments.length == 2 && !segments[1].isEmpty() ? segments[1] : null;
    }
}
