package io.pgqueue.faults;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a worker node's JVM is launched: the fault worker's jar unpacked once per test JVM
 * ({@code java -Djarmode=tools extract}) with a class-data-sharing archive recorded from one start of
 * it ({@code -XX:ArchiveClassesAtExit}, the start ending once the context is refreshed). A scenario
 * starts two or three nodes side by side, and a node's start, most of a short scenario's time, takes
 * about a third as long from the archive.
 * <p>
 * The short run also keeps the nodes' JIT at its first tier, which halves the start again; the full
 * run's nodes compile fully, as in production, since its figures are the documented ones. Should the
 * archive not be made (another JVM, a failed training start), nodes start from the jar as it is: the
 * scenarios only take longer.
 */
final class NodeImage {

    private static NodeImage image;

    private final Path jar;

    private final Path archive;

    private NodeImage(Path jar, Path archive) {
        this.jar = jar;
        this.archive = archive;
    }

    /**
     * @param server a server the training start can migrate a database of its own on
     * @return the image, made on the first call of this JVM
     */
    static synchronized NodeImage of(FaultServer server) throws Exception {
        if (image == null) {
            image = make(server);
        }
        return image;
    }

    /** @return the start of a node's command line: the JVM, its options and the jar, before the node's arguments */
    List<String> command(List<String> jvmOptions) {
        List<String> command = new ArrayList<>(List.of(java(), "-Xmx256m", "-XX:+UseSerialGC"));
        if (!FaultRun.FULL) {
            command.add("-XX:TieredStopAtLevel=1");
        }
        if (this.archive != null) {
            command.add("-XX:SharedArchiveFile=" + this.archive);
        }
        command.addAll(jvmOptions);
        command.addAll(List.of("-jar", this.jar.toString()));
        return command;
    }

    private static NodeImage make(FaultServer server) throws Exception {
        Path packaged = Path.of(packagedJar());
        // Next to the packaged jar, so that the build's clean removes it; one per test JVM, as forks run side by side.
        Path directory = Files.createDirectories(packaged.resolveSibling("fault-node-" + ProcessHandle.current().pid()));
        boolean extracted = run(List.of(java(), "-Djarmode=tools", "-jar", packaged.toString(), "extract", "--destination",
                directory.resolve("jar").toString()), directory.resolve("extract.log"));
        Path jar = directory.resolve("jar").resolve(packaged.getFileName());
        assertThat(extracted).as("the worker jar extracted (see %s)", directory.resolve("extract.log")).isTrue();
        assertThat(jar).as("the extracted worker jar").exists();
        Path archive = directory.resolve("node.jsa");
        Files.deleteIfExists(archive);
        String database = "faults_training_" + ProcessHandle.current().pid();
        try (Connection connection = server.connect("postgres"); Statement statement = connection.createStatement()) {
            statement.execute("CREATE DATABASE " + database);
        }
        Path records = Files.createTempDirectory(directory, "records");
        try {
            boolean trained = run(List.of(java(), "-Xmx256m", "-XX:+UseSerialGC", "-XX:ArchiveClassesAtExit=" + archive,
                    "-Dspring.context.exit=onRefresh", "-jar", jar.toString(),
                    "--spring.datasource.url=" + server.jdbcUrl(database), "--pgqueue.node-id=training",
                    "--faults.record-dir=" + records), directory.resolve("training.log"));
            if (!trained || !Files.exists(archive)) {
                System.err.println("No class-data archive for the worker nodes (see " + directory.resolve("training.log")
                        + "): they start from the jar alone");
                return new NodeImage(jar, null);
            }
            return new NodeImage(jar, archive);
        }
        finally {
            try (Connection connection = server.connect("postgres"); Statement statement = connection.createStatement()) {
                statement.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
            }
            try (Stream<Path> files = Files.list(records)) {
                for (Path file : files.toList()) {
                    Files.delete(file);
                }
            }
            Files.delete(records);
        }
    }

    /** Runs a command to its end, its output in a file; @return whether it ended well within two minutes */
    private static boolean run(List<String> command, Path log) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!process.waitFor(2, TimeUnit.MINUTES)) {
            process.destroyForcibly().waitFor();
            return false;
        }
        return process.exitValue() == 0;
    }

    private static String java() {
        return ProcessHandle.current().info().command().orElse("java");
    }

    private static String packagedJar() {
        String jar = System.getProperty("faults.jar");
        assertThat(jar).as("system property faults.jar (set by the build)").isNotNull();
        assertThat(new File(jar)).exists();
        return jar;
    }
}
