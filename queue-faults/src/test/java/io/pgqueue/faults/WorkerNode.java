package io.pgqueue.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One worker node: the fault worker's jar in a process of its own, with its output in a file
 * ({@code pgqueue-fault-<node>*.log} in the temporary directory), deleted when the scenario ends
 * unless the system property {@code faults.keep-logs} is set.
 */
final class WorkerNode implements AutoCloseable {

    final String id;

    private final Process process;

    private final Path log;

    private WorkerNode(String id, Process process, Path log) {
        this.id = id;
        this.process = process;
        this.log = log;
    }

    /**
     * Starts a node; {@link #awaitStarted()} waits for it.
     * @param id the node id (lease owner, recorder's node)
     * @param image how its JVM is launched
     * @param jdbcUrl the queue's database
     * @param jvmOptions further options of the JVM
     * @param settings further {@code --name=value} arguments
     */
    static WorkerNode start(String id, NodeImage image, String jdbcUrl, List<String> jvmOptions, List<String> settings)
            throws IOException {
        Path log = Files.createTempFile("pgqueue-fault-" + id, ".log");
        List<String> command = image.command(jvmOptions);
        command.addAll(List.of("--spring.datasource.url=" + jdbcUrl, "--pgqueue.node-id=" + id));
        command.addAll(settings);
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        return new WorkerNode(id, process, log);
    }

    WorkerNode awaitStarted() {
        await("node " + this.id + " started").atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100))
            .until(() -> {
                assertThat(this.process.isAlive()).as("node %s is alive; its output:%n%s", this.id, output()).isTrue();
                return output().contains("Started FaultWorkerApplication");
            });
        return this;
    }

    /** kill -9: the node ends at once, without releasing anything. */
    void kill() throws InterruptedException {
        this.process.destroyForcibly();
        this.process.waitFor(30, TimeUnit.SECONDS);
    }

    /** SIGTERM: the node stops gracefully. */
    void terminate() {
        this.process.destroy();
    }

    boolean awaitExit(Duration timeout) throws InterruptedException {
        return this.process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    String output() throws IOException {
        return Files.readString(this.log);
    }

    @Override
    public void close() throws Exception {
        if (this.process.isAlive()) {
            this.process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
        if (System.getProperty("faults.keep-logs") == null) {
            Files.deleteIfExists(this.log);
        }
    }
}
