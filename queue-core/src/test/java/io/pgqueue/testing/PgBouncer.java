package io.pgqueue.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/**
 * A real PgBouncer (Debian's {@code pgbouncer} package) started in front of a test database, in
 * session or transaction pooling mode. Run as root, it runs as the {@code postgres} user (PgBouncer
 * refuses to run as root).
 */
public final class PgBouncer implements AutoCloseable {

    /** Where Debian installs it. */
    public static final Path BINARY = Path.of("/usr/sbin/pgbouncer");

    private final Path directory;

    private final Process process;

    private final int port;

    private final TestDatabase database;

    /** The user the test database is reached as, which PgBouncer's auth file lists. */
    private final String user;

    private PgBouncer(Path directory, Process process, int port, TestDatabase database, String user) {
        this.directory = directory;
        this.process = process;
        this.port = port;
        this.database = database;
        this.user = user;
    }

    /** @return whether PgBouncer is installed here */
    public static boolean installed() {
        return Files.isExecutable(BINARY);
    }

    /**
     * Starts PgBouncer in front of a database's server.
     * @param database the database
     * @param poolMode {@code session} or {@code transaction}
     * @param poolSize the server connections per database and user
     * @return the running PgBouncer
     * @throws IOException if it cannot be started
     */
    public static PgBouncer start(TestDatabase database, String poolMode, int poolSize) throws IOException {
        URI server = URI.create(database.jdbcUrl().substring("jdbc:".length()));
        String user;
        try (Connection connection = database.dataSource().getConnection()) {
            user = connection.getMetaData().getUserName();
        }
        catch (SQLException ex) {
            throw new IOException("Cannot read the test database's user", ex);
        }
        Path directory = Files.createTempDirectory("pgbouncer", PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxrwxrwx")));
        Files.setPosixFilePermissions(directory, PosixFilePermissions.fromString("rwxrwxrwx"));
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        Files.writeString(directory.resolve("users.txt"), "\"" + user + "\" \"" + (database.password() == null ? ""
                : database.password()) + "\"\n");
        Files.writeString(directory.resolve("pgbouncer.ini"), """
                [databases]
                * = host=%s port=%d
                [pgbouncer]
                listen_addr = 127.0.0.1
                listen_port = %d
                unix_socket_dir =
                auth_type = trust
                auth_file = %s
                pool_mode = %s
                default_pool_size = %d
                max_client_conn = 500
                ignore_startup_parameters = extra_float_digits,options
                logfile = %s
                """.formatted(server.getHost(), server.getPort(), port, directory.resolve("users.txt"), poolMode, poolSize,
                directory.resolve("pgbouncer.log")));
        try (Stream<Path> files = Files.list(directory)) {
            for (Path file : files.toList()) {
                Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-rw-"));
            }
        }
        ProcessBuilder builder = "root".equals(System.getProperty("user.name"))
                ? new ProcessBuilder(BINARY.toString(), "-u", "postgres", directory.resolve("pgbouncer.ini").toString())
                : new ProcessBuilder(BINARY.toString(), directory.resolve("pgbouncer.ini").toString());
        Process process = builder.redirectErrorStream(true).redirectOutput(directory.resolve("stdout.txt").toFile()).start();
        PgBouncer bouncer = new PgBouncer(directory, process, port, database, user);
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            try (Socket socket = new Socket("127.0.0.1", port)) {
                return bouncer;
            }
            catch (IOException ex) {
                if (!process.isAlive() || System.nanoTime() > deadline) {
                    String log = Files.exists(directory.resolve("pgbouncer.log"))
                            ? Files.readString(directory.resolve("pgbouncer.log")) : Files.readString(directory.resolve("stdout.txt"));
                    bouncer.close();
                    throw new IOException("PgBouncer did not start: " + log, ex);
                }
                try {
                    Thread.sleep(50);
                }
                catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new IOException("Interrupted while PgBouncer started", interrupted);
                }
            }
        }
    }

    /**
     * A connection pool to the database through PgBouncer.
     * @param parameters JDBC URL parameters, e.g. {@code prepareThreshold=0}, or empty
     * @param size the pool's size
     * @return the pool
     */
    public HikariDataSource dataSource(String parameters, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:postgresql://127.0.0.1:" + this.port + "/" + this.database.name()
                + (parameters.isEmpty() ? "" : "?" + parameters));
        config.setUsername(this.user);
        if (this.database.password() != null) {
            config.setPassword(this.database.password());
        }
        config.setMaximumPoolSize(size);
        config.setPoolName("pgbouncer-" + this.port);
        return new HikariDataSource(config);
    }

    @Override
    public void close() throws IOException {
        this.process.destroy();
        try {
            if (!this.process.waitFor(5, TimeUnit.SECONDS)) {
                this.process.destroyForcibly();
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        try (Stream<Path> files = Files.walk(this.directory)) {
            for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(file);
            }
        }
    }
}
