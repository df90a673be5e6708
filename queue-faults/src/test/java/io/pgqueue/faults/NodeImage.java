package io.pgqueue.faults;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

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

    private static NodeImage previousRelease;

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

    /**
     * The previous release's node: this release's fault worker on the previous release's pgqueue
     * libraries ({@code queue-core}, {@code queue-autoconfigure}, {@code queue-spring-boot-starter},
     * built from the commit the build names, see {@code src/build/previous-release.sh}), so that its
     * recorder and producer write what the scenarios read. Without a class-data archive: it starts
     * a few times in a scenario at most.
     * @return the image, made on the first call of this JVM
     * @throws org.opentest4j.TestAbortedException when this clone lacks the previous release's commit
     */
    static synchronized NodeImage previousRelease() throws Exception {
        if (previousRelease == null) {
            Path libraries = Path.of(System.getProperty("faults.previous-release", "target/previous-release/none"));
            Path unavailable = libraries.resolveSibling("unavailable");
            assumeFalse(Files.exists(unavailable), () -> readString(unavailable));
            assertThat(libraries.resolve("built")).as("the previous release's libraries (built by the build before the "
                    + "scenarios, src/build/previous-release.sh)").exists();
            Path directory = directory("previous-release-node-");
            Path jar = extract(directory);
            try (Stream<Path> built = Files.list(libraries)) {
                for (Path library : built.filter(file -> file.toString().endsWith(".jar")).toList()) {
                    String module = library.getFileName().toString().replaceFirst("-\\d.*", "");
                    try (Stream<Path> own = Files.list(jar.resolveSibling("lib"))) {
                        Path replaced = own.filter(file -> file.getFileName().toString().replaceFirst("-\\d.*", "")
                            .equals(module)).findFirst().orElseThrow(() -> new IllegalStateException(
                                    "The worker jar has no " + module + " library to replace"));
                        Files.copy(library, replaced, StandardCopyOption.REPLACE_EXISTING);
                    }
                }
            }
            previousRelease = new NodeImage(jar, null);
        }
        return previousRelease;
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
        Path directory = directory("fault-node-");
        Path jar = extract(directory);
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

    /**
     * @return a directory next to the packaged jar, so that the build's clean removes it; one per
     * test JVM, as forks run side by side
     */
    private static Path directory(String prefix) throws IOException {
        return Files.createDirectories(Path.of(packagedJar()).resolveSibling(prefix + ProcessHandle.current().pid()));
    }

    /** Extracts the packaged worker jar into a directory; @return the extracted jar, its libraries in {@code lib} beside it */
    private static Path extract(Path directory) throws IOException, InterruptedException {
        Path packaged = Path.of(packagedJar());
        boolean extracted = run(List.of(java(), "-Djarmode=tools", "-jar", packaged.toString(), "extract", "--destination",
                directory.resolve("jar").toString()), directory.resolve("extract.log"));
        Path jar = directory.resolve("jar").resolve(packaged.getFileName());
        assertThat(extracted).as("the worker jar extracted (see %s)", directory.resolve("extract.log")).isTrue();
        assertThat(jar).as("the extracted worker jar").exists();
        return jar;
    }

    private static String readString(Path file) {
        try {
            return Files.readString(file).strip();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
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
