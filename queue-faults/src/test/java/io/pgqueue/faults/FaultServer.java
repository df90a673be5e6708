package io.pgqueue.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

/**
 * A PostgreSQL server of the scenarios' own (embedded binaries from Maven Central), which they
 * stop in {@code fast} or {@code immediate} mode and start again on the same port and data. The
 * server a build's other tests use is never touched.
 */
final class FaultServer implements AutoCloseable {

    private final EmbeddedPostgres embedded;

    private final Path dataDirectory;

    private final Path pgCtl;

    private final String options;

    private FaultServer(EmbeddedPostgres embedded, Path dataDirectory, boolean fsync) throws IOException {
        this.embedded = embedded;
        this.dataDirectory = dataDirectory;
        // The server's own record of how it was started: the binary, then its options (the embedded
        // server's include -F, no fsync).
        List<String> words = words(Files.readString(dataDirectory.resolve("postmaster.opts")).strip());
        this.pgCtl = Path.of(words.get(0)).resolveSibling("pg_ctl");
        this.options = words.subList(1, words.size()).stream().filter(word -> !fsync || !word.equals("-F"))
            .map(FaultServer::quoted).reduce((a, b) -> a + " " + b).orElse("");
    }

    /**
     * Starts a server.
     * @param fsync whether it flushes its writes to disk as a production server does (it is started
     * a second time without the embedded server's {@code -F}); without, a crash loses the same
     * unflushed WAL but the writes are cheaper
     */
    static FaultServer start(boolean fsync) throws IOException, InterruptedException {
        Path data = Files.createTempDirectory("pgqueue-faults-data");
        EmbeddedPostgres embedded = EmbeddedPostgres.builder()
            .setDataDirectory(data)
            .setServerConfig("max_connections", "200")
            // Durable commits: an immediate stop must not take acknowledged transactions with it.
            .setServerConfig("synchronous_commit", "on")
            .start();
        FaultServer server = new FaultServer(embedded, data, fsync);
        if (fsync) {
            server.stop("fast");
            server.startAgain();
        }
        return server;
    }

    /** @return whether the server runs with fsync on */
    boolean fsync() throws SQLException {
        try (Connection connection = connect("postgres"); Statement statement = connection.createStatement();
                ResultSet rs = statement.executeQuery("SHOW fsync")) {
            rs.next();
            return rs.getString(1).equals("on");
        }
    }

    /** @return the port the server listens on */
    int port() {
        return this.embedded.getPort();
    }

    /** @return the JDBC URL of a database on this server */
    String jdbcUrl(String database) {
        return this.embedded.getJdbcUrl("postgres", database);
    }

    Connection connect(String database) throws SQLException {
        return DriverManager.getConnection(jdbcUrl(database) + "&ApplicationName=faults-harness");
    }

    /**
     * Stops the server by signalling its postmaster (pg_ctl refuses to run as root, where the
     * embedded binaries run the server as an unprivileged user).
     * @param mode {@code fast} (sessions are ended, a checkpoint is written) or {@code immediate}
     * (processes are killed; the next start recovers from the WAL)
     */
    void stop(String mode) throws IOException, InterruptedException {
        long pid = Long.parseLong(Files.readAllLines(this.dataDirectory.resolve("postmaster.pid")).get(0).strip());
        String signal = switch (mode) {
            case "fast" -> "INT";
            case "immediate" -> "QUIT";
            default -> throw new IllegalArgumentException("mode " + mode + " is not fast or immediate");
        };
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IllegalStateException("Could not signal the postmaster " + pid);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("The postmaster " + pid + " did not stop within 60 s");
            }
            Thread.sleep(20);
        }
    }

    /** Starts the stopped server again, with the options it first started with. */
    void startAgain() throws IOException, InterruptedException {
        // The log goes inside the data directory, which is deleted with the server.
        pgCtl("start", "-o", this.options, "-l", this.dataDirectory.resolve("restart.log").toString());
    }

    private void pgCtl(String... arguments) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        if ("root".equals(System.getProperty("user.name"))) {
            // PostgreSQL refuses to run as root; in a user namespace it runs unprivileged (as the
            // embedded server's first start did).
            command.addAll(List.of("unshare", "-U"));
        }
        command.addAll(List.of(this.pgCtl.toString(), "-D", this.dataDirectory.toString(), "-w", "-t", "60"));
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(90, TimeUnit.SECONDS) || process.exitValue() != 0) {
            throw new IllegalStateException("pg_ctl " + String.join(" ", arguments) + " failed: " + output);
        }
    }

    @Override
    public void close() throws IOException {
        this.embedded.close();
    }

    /** Splits postmaster.opts: words in double quotes, separated by spaces. */
    private static List<String> words(String line) {
        List<String> words = new ArrayList<>();
        StringBuilder word = new StringBuilder();
        boolean quoted = false;
        for (char c : line.toCharArray()) {
            if (c == '"') {
                quoted = !quoted;
            }
            else if (c == ' ' && !quoted) {
                if (!word.isEmpty()) {
                    words.add(word.toString());
                    word.setLength(0);
                }
            }
            else {
                word.append(c);
            }
        }
        if (!word.isEmpty()) {
            words.add(word.toString());
        }
        return words;
    }

    private static String quoted(String word) {
        return "'" + word.replace("'", "'\\''") + "'";
    }
}
