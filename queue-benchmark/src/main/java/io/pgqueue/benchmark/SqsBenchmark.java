package io.pgqueue.benchmark;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DriverManagerDataSource;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * Workload {@code sqs}: SQS servers measured through their HTTP API by one client, side by side.
 * For each endpoint ({@code endpoints=pgqueue=http://127.0.0.1:8080/sqs,elasticmq=http://127.0.0.1:9324}),
 * a fresh standard queue, {@code producers} threads sending ({@code batch} messages per call:
 * 1 = SendMessage, up to 10 = SendMessageBatch) and {@code consumers} threads receiving up to ten
 * with a 1 s long poll and deleting what they got with DeleteMessageBatch, for {@code seconds}.
 * With {@code rate} (messages per second, all producers together) the producers pace themselves
 * instead of sending as fast as they can. Reports messages sent and received per second and the
 * send→receive latency (the send call's start to the receive call's return, both in this JVM).
 * <p>
 * Skewed load ({@code tenants=N}): each message belongs to a tenant, the noisy one with the share
 * {@code noisy-share} (0.5 by default) of the messages sent, the rest spread over {@code N} quiet
 * ones, and the noisy tenant sends a {@code backlog} of messages before the run; with
 * {@code groups=true} each message carries its tenant as its {@code MessageGroupId} (a fair queue),
 * without, none. The latencies are then reported for the quiet tenants and the noisy one apart.
 * <p>
 * With {@code db} (a JDBC URL of a database on the PostgreSQL server the endpoints use, on this
 * machine), also the server's CPU time and WAL per message received (its send, receive and delete
 * together), over all its databases: what a message costs the server, shards included.
 * <p>
 * Requests use the JSON protocol and are not
 * signed (run pgqueue with {@code pgqueue.sqs.allow-anonymous=true}). Each thread keeps one
 * HTTP/1.1 connection and writes each request, headers and body, in one write, as the AWS SDKs'
 * HTTP stacks do (the JDK's HttpClient writes them separately, which cost pgqueue's Tomcat a
 * round trip per request that the SDKs do not pay: 618 against 1,382 sends/s from four threads).
 */
final class SqsBenchmark {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final URI endpoint;

    private final ThreadLocal<Connection> connections = new ThreadLocal<>();

    /** The endpoint's PostgreSQL server, for its counters; {@code null} without {@code db}. */
    private final DataSource server;

    private SqsBenchmark(String endpoint, DataSource server) {
        this.endpoint = URI.create(endpoint + "/");
        this.server = server;
    }

    /** One keep-alive HTTP/1.1 connection: a request in one write, a response read by its Content-Length. */
    private static final class Connection {

        private final Socket socket;

        private final OutputStream out;

        private final InputStream in;

        /** Whether the server said it closes the connection after the last response. */
        boolean closing;

        Connection(URI endpoint) throws IOException {
            this.socket = new Socket(endpoint.getHost(), endpoint.getPort());
            this.socket.setTcpNoDelay(true);
            this.socket.setSoTimeout(30_000);
            this.out = this.socket.getOutputStream();
            this.in = new BufferedInputStream(this.socket.getInputStream());
        }

        String post(URI endpoint, String target, String body) throws IOException {
            byte[] payload = body.getBytes(StandardCharsets.UTF_8);
            String head = "POST " + endpoint.getRawPath() + " HTTP/1.1\r\nHost: " + endpoint.getHost() + ":"
                    + endpoint.getPort() + "\r\nX-Amz-Target: AmazonSQS." + target
                    + "\r\nContent-Type: application/x-amz-json-1.0\r\nContent-Length: " + payload.length + "\r\n\r\n";
            ByteArrayOutputStream request = new ByteArrayOutputStream(head.length() + payload.length);
            request.writeBytes(head.getBytes(StandardCharsets.US_ASCII));
            request.writeBytes(payload);
            this.out.write(request.toByteArray());
            this.out.flush();
            String status = line();
            int length = -1;
            boolean chunked = false;
            this.closing = false;
            for (String header = line(); !header.isEmpty(); header = line()) {
                String lower = header.toLowerCase(java.util.Locale.ROOT);
                if (lower.startsWith("content-length:")) {
                    length = Integer.parseInt(header.substring(15).strip());
                }
                else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
                    chunked = true;
                }
                else if (lower.startsWith("connection:") && lower.contains("close")) {
                    // Tomcat ends a keep-alive connection after 100 requests by default.
                    this.closing = true;
                }
            }
            String response = new String(chunked ? chunks() : this.in.readNBytes(Math.max(length, 0)),
                    StandardCharsets.UTF_8);
            if (!status.contains(" 200 ")) {
                throw new IllegalStateException(target + " failed: " + status + " " + response);
            }
            return response;
        }

        private byte[] chunks() throws IOException {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            for (int size = Integer.parseInt(line().strip(), 16); size > 0; size = Integer.parseInt(line().strip(), 16)) {
                body.writeBytes(this.in.readNBytes(size));
                line();
            }
            line();
            return body.toByteArray();
        }

        private String line() throws IOException {
            StringBuilder line = new StringBuilder();
            for (int c = this.in.read(); c != '\n'; c = this.in.read()) {
                if (c < 0) {
                    throw new IOException("connection closed");
                }
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            return line.toString();
        }

        void close() {
            try {
                this.socket.close();
            }
            catch (IOException ex) {
                // closing anyway
            }
        }
    }

    static void main(Map<String, String> args) throws Exception {
        String endpoints = args.getOrDefault("endpoints", "pgqueue=http://127.0.0.1:8080/sqs");
        int producers = Integer.parseInt(args.getOrDefault("producers", "4"));
        int consumers = Integer.parseInt(args.getOrDefault("consumers", "4"));
        int seconds = Integer.parseInt(args.getOrDefault("seconds", "20"));
        int batch = Integer.parseInt(args.getOrDefault("batch", "1"));
        int repeat = Integer.parseInt(args.getOrDefault("repeat", "1"));
        int rate = Integer.parseInt(args.getOrDefault("rate", "0"));
        Skew skew = new Skew(Integer.parseInt(args.getOrDefault("tenants", "0")),
                Double.parseDouble(args.getOrDefault("noisy-share", "0.5")), Integer.parseInt(args.getOrDefault("backlog", "0")),
                Boolean.parseBoolean(args.getOrDefault("groups", "false")));
        System.out.println("# sqs benchmark, " + Runtime.getRuntime().availableProcessors() + " cores, Java "
                + Runtime.version() + ", producers=" + producers + " consumers=" + consumers + " batch=" + batch
                + " seconds=" + seconds + " rate=" + (rate == 0 ? "unthrottled" : rate)
                + (skew.tenants() > 0 ? " " + skew : ""));
        for (int round = 0; round < repeat; round++) {
            for (String pair : endpoints.split(",")) {
                String[] named = pair.split("=", 2);
                String db = args.get("db");
                SqsBenchmark benchmark = new SqsBenchmark(named[1].replaceAll("/+$", ""),
                        db == null ? null : new DriverManagerDataSource(db));
                // A short unreported run first: JIT and connections on both sides.
                if (round == 0) {
                    benchmark.run(named[0], producers, consumers, 3, batch, rate, skew, false);
                }
                benchmark.run(named[0], producers, consumers, seconds, batch, rate, skew, true);
            }
        }
    }

    /**
     * A skewed load: quiet tenants and a noisy one.
     *
     * @param tenants the quiet tenants, 0 for no tenants
     * @param noisyShare the share of the messages sent that are the noisy tenant's
     * @param backlog the noisy tenant's messages sent before the run
     * @param groups whether messages carry their tenant as their message group
     */
    private record Skew(int tenants, double noisyShare, int backlog, boolean groups) {

        String tenant() {
            java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
            return this.tenants == 0 ? null
                    : random.nextDouble() < this.noisyShare ? "noisy" : "quiet-" + random.nextInt(this.tenants);
        }

        ObjectNode entry(ObjectNode entry, String tenant, long at) {
            entry.put("MessageBody", (tenant == null ? "" : tenant + ":") + at);
            if (this.groups && tenant != null) {
                entry.put("MessageGroupId", tenant);
            }
            return entry;
        }

        @Override
        public String toString() {
            return "tenants=" + this.tenants + " noisy-share=" + this.noisyShare + " backlog=" + this.backlog
                    + " groups=" + this.groups;
        }
    }

    private void run(String name, int producers, int consumers, int seconds, int batch, int rate, Skew skew,
            boolean report) throws Exception {
        String queueName = "bench-" + System.nanoTime();
        String queueUrl = call("CreateQueue", NODES.objectNode().put("QueueName", queueName)).get("QueueUrl").asString();
        long backlogAt = System.nanoTime();
        for (int sentBacklog = 0; sentBacklog < skew.backlog(); sentBacklog += 10) {
            ObjectNode request = NODES.objectNode().put("QueueUrl", queueUrl);
            ArrayNode entries = request.putArray("Entries");
            for (int i = 0; i < Math.min(10, skew.backlog() - sentBacklog); i++) {
                entries.add(skew.entry(NODES.objectNode().put("Id", "b" + i), "noisy", backlogAt));
            }
            call("SendMessageBatch", request);
        }
        LongAdder sent = new LongAdder();
        LongAdder received = new LongAdder();
        LongAdder errors = new LongAdder();
        ConcurrentLinkedQueue<long[]> latencies = new ConcurrentLinkedQueue<>();
        AtomicBoolean sending = new AtomicBoolean(true);
        AtomicBoolean receiving = new AtomicBoolean(true);
        ExecutorService threads = Executors.newFixedThreadPool(producers + consumers);
        List<Future<?>> work = new ArrayList<>();
        ServerCounters before = this.server == null ? null : ServerCounters.read(this.server);
        long started = System.nanoTime();
        for (int p = 0; p < producers; p++) {
            work.add(threads.submit(() -> {
                // Paced: this producer's share of the rate, in calls of `batch` messages.
                long interval = rate == 0 ? 0 : (long) (1e9 * batch * producers / rate);
                long next = System.nanoTime();
                while (sending.get()) {
                    try {
                        if (interval > 0) {
                            next += interval;
                            long wait = next - System.nanoTime();
                            if (wait > 0) {
                                java.util.concurrent.locks.LockSupport.parkNanos(wait);
                            }
                        }
                        long at = System.nanoTime();
                        if (batch == 1) {
                            call("SendMessage", skew.entry(NODES.objectNode().put("QueueUrl", queueUrl), skew.tenant(), at));
                        }
                        else {
                            ObjectNode request = NODES.objectNode().put("QueueUrl", queueUrl);
                            ArrayNode entries = request.putArray("Entries");
                            for (int i = 0; i < batch; i++) {
                                entries.add(skew.entry(NODES.objectNode().put("Id", "e" + i), skew.tenant(), at));
                            }
                            call("SendMessageBatch", request);
                        }
                        sent.add(batch);
                    }
                    catch (Exception ex) {
                        errors.increment();
                    }
                }
            }));
        }
        for (int c = 0; c < consumers; c++) {
            work.add(threads.submit(() -> {
                List<long[]> mine = new ArrayList<>();
                while (receiving.get()) {
                    try {
                        JsonNode messages = call("ReceiveMessage", NODES.objectNode().put("QueueUrl", queueUrl)
                            .put("MaxNumberOfMessages", 10).put("WaitTimeSeconds", 1)).get("Messages");
                        long now = System.nanoTime();
                        if (messages == null || messages.isEmpty()) {
                            continue;
                        }
                        ObjectNode delete = NODES.objectNode().put("QueueUrl", queueUrl);
                        ArrayNode entries = delete.putArray("Entries");
                        int i = 0;
                        for (JsonNode message : messages) {
                            String body = message.get("Body").asString();
                            int colon = body.indexOf(':');
                            mine.add(new long[] { now - Long.parseLong(body.substring(colon + 1)),
                                colon > 0 && !body.startsWith("noisy") ? 1 : 0 });
                            entries.add(NODES.objectNode().put("Id", "d" + i++)
                                .put("ReceiptHandle", message.get("ReceiptHandle").asString()));
                        }
                        call("DeleteMessageBatch", delete);
                        received.add(messages.size());
                    }
                    catch (Exception ex) {
                        errors.increment();
                    }
                }
                latencies.addAll(mine);
            }));
        }
        Thread.sleep(seconds * 1000L);
        sending.set(false);
        long sendSeconds = System.nanoTime() - started;
        long receivedWhileSending = received.sum();
        // Let the consumers take what is left, at most a while.
        long drainDeadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (received.sum() < sent.sum() && System.nanoTime() < drainDeadline) {
            Thread.sleep(50);
        }
        receiving.set(false);
        for (Future<?> future : work) {
            future.get();
        }
        ServerCounters spent = before == null ? null : ServerCounters.read(this.server).minus(before);
        threads.shutdown();
        call("DeleteQueue", NODES.objectNode().put("QueueUrl", queueUrl));
        if (!report) {
            return;
        }
        if (skew.tenants() > 0) {
            long[] quiet = latencies.stream().filter(l -> l[1] == 1).mapToLong(l -> l[0]).sorted().toArray();
            long[] noisy = latencies.stream().filter(l -> l[1] == 0).mapToLong(l -> l[0]).sorted().toArray();
            System.out.println(String.format(Locale.ROOT, "workload=sqs server=%s %s received=%d quiet=%d "
                    + "quiet_p50_ms=%.2f quiet_p99_ms=%.2f noisy=%d noisy_p50_ms=%.2f noisy_p99_ms=%.2f", name, skew,
                    received.sum(), quiet.length, percentile(quiet, 0.50), percentile(quiet, 0.99), noisy.length,
                    percentile(noisy, 0.50), percentile(noisy, 0.99)));
        }
        long[] sorted = latencies.stream().mapToLong(l -> l[0]).sorted().toArray();
        double elapsed = sendSeconds / 1e9;
        System.out.println(String.format(Locale.ROOT, "workload=sqs server=%s producers=%d consumers=%d batch=%d "
                + "rate=%s seconds=%d sent_per_s=%.0f received_per_s=%.0f sent=%d received=%d errors=%d latency_p50_ms=%.2f "
                + "latency_p99_ms=%.2f latency_max_ms=%.2f", name, producers, consumers, batch,
                rate == 0 ? "max" : Integer.toString(rate), seconds,
                sent.sum() / elapsed, receivedWhileSending / elapsed, sent.sum(), received.sum(), errors.sum(),
                percentile(sorted, 0.50), percentile(sorted, 0.99), sorted.length == 0 ? 0 : sorted[sorted.length - 1] / 1e6)
                + (spent == null ? "" : String.format(Locale.ROOT, " db_cpu_us_per_msg=%.1f wal_bytes_per_msg=%.0f",
                        spent.cpuMicrosPerJob((int) Math.max(1, received.sum())),
                        spent.walBytes() / (double) Math.max(1, received.sum()))));
    }

    private static double percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)] / 1e6;
    }

    private JsonNode call(String action, ObjectNode body) throws Exception {
        Connection connection = this.connections.get();
        if (connection == null) {
            connection = new Connection(this.endpoint);
            this.connections.set(connection);
        }
        try {
            String response = connection.post(this.endpoint, action, body.toString());
            if (connection.closing) {
                connection.close();
                this.connections.remove();
            }
            return response.isEmpty() ? NODES.objectNode() : JSON.readTree(response);
        }
        catch (IOException ex) {
            connection.close();
            this.connections.remove();
            throw ex;
        }
    }
}
