package io.pgqueue.sample;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ContextConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample application's SQS API driven by real AWS clients that nobody here wrote: the AWS SDK
 * for JavaScript v3 (JSON protocol), boto3 (Debian's 1.26 speaks the query protocol, newer ones
 * the JSON protocol) and the AWS CLI (Debian's 2.9 speaks the query protocol). Each runs the
 * scripts in {@code src/test/sqs-clients} — create, send with attributes, receive with long
 * polling, change visibility, delete, batches, FIFO order per group and deduplication, redrive to a
 * dead-letter queue, a stale receipt handle refused, queue attributes, tags, purge, errors, wrong
 * signatures — all clients at once, each on queues of its own. A client that is not installed is
 * skipped with the command that installs it ({@code .ci/run} installs them).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "sample.embedded-postgres.enabled=false", "pgqueue.sqs.enabled=true" })
@ContextConfiguration(initializers = TestDatabaseInitializer.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SqsClientsTests {

    private static final Logger log = LoggerFactory.getLogger(SqsClientsTests.class);

    private static final Path SCRIPTS = Path.of("src/test/sqs-clients");

    private static final Path WORK = Path.of("target/sqs-clients");

    private static final long TIMEOUT_SECONDS = 300;

    @LocalServerPort
    int port;

    @Value("${pgqueue.sqs.credentials[0].access-key-id}")
    String accessKey;

    @Value("${pgqueue.sqs.credentials[0].secret-access-key}")
    String secretKey;

    /** Per client, its run, or why it cannot run here. */
    private final Map<String, Object> runs = new LinkedHashMap<>();

    private record Run(Process process, Path output) {
    }

    @BeforeAll
    void startEveryClient() throws IOException {
        Files.createDirectories(WORK);
        try (Stream<Path> files = Files.list(SCRIPTS)) {
            for (Path file : files.toList()) {
                Files.copy(file, WORK.resolve(file.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
        String javascript = installJavascriptSdk();
        this.runs.put("javascript", javascript != null ? javascript : start("javascript", "node", "--no-warnings",
                "sqs-client.mjs"));
        this.runs.put("boto3-debian", usable("/usr/bin/python3", "-c", "import boto3")
                ? start("boto3-debian", "/usr/bin/python3", "sqs_client.py")
                : "/usr/bin/python3 has no boto3: apt-get install python3-boto3");
        String python = onPath("python3");
        if (python != null && !python.equals("/usr/bin/python3") && usable(python, "-c", "import boto3")) {
            this.runs.put("boto3-" + python, start("boto3-path", python, "sqs_client.py"));
        }
        this.runs.put("aws-cli-debian", usable("/usr/bin/aws", "--version")
                ? start("aws-cli-debian", "bash", "sqs-cli.sh") : "/usr/bin/aws is missing: apt-get install awscli");
    }

    @AfterAll
    void stopClients() {
        this.runs.values().stream().filter(Run.class::isInstance).map(Run.class::cast)
            .forEach(run -> run.process().destroyForcibly());
    }

    @Test
    void aRequestOfAnUnknownKeyIsRefusedBeforeItsBodyIsRead() throws Exception {
        // Announces a 4 MB body and sends ten bytes of it: the answer must come from the headers alone.
        try (Socket socket = new Socket("127.0.0.1", this.port)) {
            socket.setSoTimeout(10_000);
            String head = "POST /sqs/ HTTP/1.1\r\nHost: 127.0.0.1:" + this.port + "\r\n"
                    + "Content-Type: application/x-amz-json-1.0\r\nX-Amz-Target: AmazonSQS.ListQueues\r\n"
                    + "X-Amz-Date: 20261206T000000Z\r\nAuthorization: AWS4-HMAC-SHA256 Credential=nobody/20261206/"
                    + "us-east-1/sqs/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
                    + "Signature=" + "0".repeat(64) + "\r\nContent-Length: 4000000\r\n\r\n0123456789";
            socket.getOutputStream().write(head.getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            String status = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII))
                .readLine();
            assertThat(status).startsWith("HTTP/1.1 4");
        }
    }

    @Test
    void theJavascriptSdkPassesEveryCase() throws Exception {
        passes("javascript");
    }

    @Test
    void debianBoto3PassesEveryCase() throws Exception {
        passes("boto3-debian");
    }

    @Test
    void boto3OnThePathPassesEveryCase() throws Exception {
        String key = this.runs.keySet().stream().filter(name -> name.startsWith("boto3-/")).findFirst().orElse(null);
        Assumptions.assumeTrue(key != null, "no other python3 with boto3 on the PATH than /usr/bin/python3");
        passes(key);
    }

    @Test
    void debianAwsCliPassesEveryCase() throws Exception {
        passes("aws-cli-debian");
    }

    private void passes(String client) throws Exception {
        Object run = this.runs.get(client);
        Assumptions.assumeTrue(run instanceof Run, () -> client + " cannot run here: " + run);
        Run started = (Run) run;
        boolean ended = started.process().waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS);
        String output = Files.readString(started.output(), StandardCharsets.UTF_8);
        log.info("{}:\n{}", client, output);
        assertThat(ended).as("%s ended within %d s; output so far:%n%s", client, TIMEOUT_SECONDS, output).isTrue();
        List<String> failed = output.lines().filter(line -> line.startsWith("FAIL")).toList();
        assertThat(failed).as("failed cases of %s", client).isEmpty();
        assertThat(output.lines().filter(line -> line.startsWith("PASS")).count()).as("cases passed by %s", client)
            .isGreaterThanOrEqualTo(client.startsWith("aws-cli") ? 8 : 18);
        assertThat(started.process().exitValue()).as("exit code of %s:%n%s", client, output).isZero();
    }

    private Run start(String name, String... command) {
        Path output = WORK.resolve(name + ".log").toAbsolutePath();
        ProcessBuilder builder = new ProcessBuilder(command).directory(WORK.toFile()).redirectErrorStream(true)
            .redirectOutput(output.toFile());
        Map<String, String> environment = builder.environment();
        environment.put("SQS_ENDPOINT", "http://127.0.0.1:" + this.port + "/sqs");
        environment.put("AWS_ACCESS_KEY_ID", this.accessKey);
        environment.put("AWS_SECRET_ACCESS_KEY", this.secretKey);
        environment.put("AWS_REGION", "us-east-1");
        environment.put("AWS_DEFAULT_REGION", "us-east-1");
        environment.put("QUEUE_PREFIX", name.replaceAll("[^a-z0-9]", "") + System.nanoTime() % 100000);
        environment.put("CHECK_SIGNATURES", "1");
        environment.put("STALE_HANDLE", "reject");
        environment.put("AWS_CLI", "/usr/bin/aws");
        // The CLI's cases share two cores with the server and the other clients: three at a time
        // (each call starts a Python interpreter; one at a time took a minute).
        environment.put("CLI_PARALLEL", "1");
        environment.put("CLI_JOBS", "3");
        try {
            return new Run(builder.start(), output);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Could not start " + String.join(" ", command), ex);
        }
    }

    /** @return why the JavaScript SDK cannot be installed, or {@code null} once it is */
    private static String installJavascriptSdk() {
        if (onPath("node") == null || onPath("npm") == null) {
            return "node and npm are missing: install Node.js 18 or later";
        }
        if (Files.isDirectory(WORK.resolve("node_modules/@aws-sdk/client-sqs"))) {
            return null;
        }
        List<String> command = new ArrayList<>(List.of("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"));
        return usable(WORK.toFile(), command.toArray(String[]::new)) ? null
                : "npm ci of @aws-sdk/client-sqs failed (is the npm registry reachable?)";
    }

    private static boolean usable(String... command) {
        return usable(WORK.toFile(), command);
    }

    private static boolean usable(File directory, String... command) {
        try {
            Process process = new ProcessBuilder(command).directory(directory).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return process.waitFor(180, TimeUnit.SECONDS) && process.exitValue() == 0;
        }
        catch (IOException ex) {
            return false;
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static String onPath(String program) {
        for (String directory : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            Path candidate = Path.of(directory, program);
            if (Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        return null;
    }
}
