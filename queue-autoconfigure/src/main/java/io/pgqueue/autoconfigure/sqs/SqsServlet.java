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

import io.pgqueue.autoconfigure.sqs.SqsActions.Caller;
import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
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

    private static final String JSON_TARGET_PREFIX = "AmazonSQS.";

    /** The actions that change nothing, which an unsigned request may make however it comes. */
    private static final Set<String> READS = Set.of("GetQueueUrl", "ListQueues", "GetQueueAttributes", "ListQueueTags",
            "ListDeadLetterSourceQueues");

    private static final String JSON_CONTENT_TYPE = "application/x-amz-json-1.0";

    private static final ObjectMapper JSON = JsonMapper.builder().build();

    /** Ten messages of at most 1 MiB together, encoded: JSON escapes and form encoding may triple it. */
    private static final int MAX_REQUEST_BYTES = 4 * 1024 * 1024;

    private final transient SqsActions actions;

    private final transient SigV4Verifier verifier;

    private final boolean allowAnonymous;

    private final String baseUrl;

    /**
     * @param actions the actions
     * @param verifier verifies signatures, or {@code null} when no access keys are configured (every request is taken)
     * @param allowAnonymous whether unsigned requests are taken when access keys are configured
     * @param baseUrl the URL queue URLs start with, or {@code null} to take it from each request
     */
    SqsServlet(SqsActions actions, SigV4Verifier verifier, boolean allowAnonymous, String baseUrl) {
        this.actions = actions;
        this.verifier = verifier;
        this.allowAnonymous = allowAnonymous;
        this.baseUrl = baseUrl;
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
        String requestId = UUID.randomUUID().toString();
        String target = request.getHeader("X-Amz-Target");
        boolean json = target != null || String.valueOf(request.getContentType()).startsWith(JSON_CONTENT_TYPE);
        String action = null;
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
                action = target.substring(JSON_TARGET_PREFIX.length());
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
                action = named.asString();
            }
            if (sender == null) {
                refuseCrossSite(request, action, json, body.length);
            }
            Caller caller = new Caller(baseUrl(request), pathQueue(request), sender);
            CompletableFuture<ObjectNode> result = this.actions.run(action, parameters, caller);
            if (result.isDone()) {
                respond(response, json, action, requestId, result);
            }
            else {
                String waiting = action;
                AsyncContext async = request.startAsync();
                // The receive ends itself at its wait time; this only guards against a hang.
                async.setTimeout(60_000);
                result.whenComplete((ok, failure) -> {
                    try {
                        respond((HttpServletResponse) async.getResponse(), json, waiting, requestId, result);
                    }
                    catch (IOException | RuntimeException ex) {
                        log.debug("Could not answer a waiting receive: {}", ex.toString());
                    }
                    finally {
                        async.complete();
                    }
                });
            }
        }
        catch (MessageQueueException ex) {
            error(response, json, ex.error(), ex.getMessage(), requestId);
        }
        catch (RuntimeException ex) {
            log.warn("SQS request {} ({}) failed", requestId, action, ex);
            error(response, json, MessageQueueError.INTERNAL_ERROR,
                    "The request could not be processed: " + ex.getClass().getSimpleName(), requestId);
        }
    }

    private void respond(HttpServletResponse response, boolean json, String action, String requestId,
            CompletableFuture<ObjectNode> result) throws IOException {
        ObjectNode body;
        try {
            body = result.join();
        }
        catch (CompletionException ex) {
            Throwable cause = ex.getCause();
            if (cause instanceof MessageQueueException queueException) {
                error(response, json, queueException.error(), queueException.getMessage(), requestId);
                return;
            }
            log.warn("SQS request {} ({}) failed", requestId, action, cause);
            error(response, json, MessageQueueError.INTERNAL_ERROR, "The request could not be processed", requestId);
            return;
        }
        response.setStatus(200);
        response.setHeader("x-amzn-RequestId", requestId);
        if (json) {
            write(response, JSON_CONTENT_TYPE, JSON.writeValueAsString(body));
        }
        else {
            write(response, "text/xml", SqsQueryProtocol.response(action, body, requestId));
        }
    }

    private static void error(HttpServletResponse response, boolean json, MessageQueueError error, String message,
            String requestId) throws IOException {
        response.setStatus(error.status());
        response.setHeader("x-amzn-RequestId", requestId);
        if (json) {
            response.setHeader("x-amzn-query-error", error.queryCode() + ";" + (error.senderFault() ? "Sender" : "Receiver"));
            ObjectNode body = JsonNodeFactory.instance.objectNode().put("__type", "com.amazonaws.sqs#" + error.code())
                .put("message", message);
            write(response, JSON_CONTENT_TYPE, body.toString());
        }
        else {
            write(response, "text/xml", SqsQueryProtocol.error(error, message, requestId));
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
