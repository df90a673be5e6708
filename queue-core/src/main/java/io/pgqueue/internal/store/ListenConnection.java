package io.pgqueue.internal.store;

import java.lang.reflect.Field;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collection;
import java.util.function.BiConsumer;

import javax.sql.DataSource;

import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.PGStream;
import org.postgresql.core.QueryExecutorBase;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.DataAccessResourceFailureException;

/**
 * One pooled connection that LISTENs on some channels, for the notification listener's thread.
 * Closing it UNLISTENs and hands the connection back to its pool as it came.
 * <p>
 * pgjdbc's {@code getNotifications(timeout)} returns a notification only after probing the socket
 * for more with a 1 ms read timeout (a probe whose back-off never engages when it times out): every
 * wake-up comes at least 1.1 ms late (a notification reaches a C libpq listener 20 µs after the
 * commit, a JDBC listener 1.3 ms after). The connection therefore turns that probe into a plain
 * check of the bytes already received, when the driver's internals allow it (checked when it opens;
 * otherwise it logs once and lives with the delay).
 */
public final class ListenConnection implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(ListenConnection.class);

    private static final Field PG_STREAM = field(QueryExecutorBase.class, "pgStream");

    private static final Field NEXT_AVAILABLE_CHECK = field(PGStream.class, "nextStreamAvailableCheckTime");

    private static volatile boolean probeWarned;

    private final Connection connection;

    private final PGConnection notifications;

    private final boolean tuned;

    private ListenConnection(Connection connection) throws SQLException {
        this.connection = connection;
        this.notifications = connection.unwrap(PGConnection.class);
        this.tuned = probeWithoutWaiting(connection, true);
    }

    /**
     * Takes a connection from the pool and LISTENs on the channels.
     * @param dataSource the pool
     * @param channels the channels
     * @return the listening connection; close it to give the connection back
     * @throws DataAccessResourceFailureException if it cannot connect or listen
     */
    public static ListenConnection open(DataSource dataSource, Collection<String> channels) {
        Connection connection = null;
        try {
            connection = dataSource.getConnection();
            if (!connection.getAutoCommit()) {
                connection.setAutoCommit(true);
            }
            try (Statement statement = connection.createStatement()) {
                for (String channel : channels) {
                    statement.execute("LISTEN \"" + channel.replace("\"", "\"\"") + "\"");
                }
            }
            return new ListenConnection(connection);
        }
        catch (SQLException | RuntimeException ex) {
            if (connection != null) {
                try {
                    connection.close();
                }
                catch (SQLException closing) {
                    ex.addSuppressed(closing);
                }
            }
            throw new DataAccessResourceFailureException("Could not LISTEN: " + ex.getMessage(), ex);
        }
    }

    /**
     * Waits up to a timeout for notifications and hands each one, channel and payload, to the callback.
     * @param timeoutMillis the longest wait
     * @param onNotification called with the channel and the payload of every notification
     * @throws DataAccessResourceFailureException if the connection broke
     */
    public void receive(int timeoutMillis, BiConsumer<String, String> onNotification) {
        PGNotification[] received;
        try {
            received = this.notifications.getNotifications(timeoutMillis);
        }
        catch (SQLException ex) {
            throw new DataAccessResourceFailureException("The LISTEN connection broke: " + ex.getMessage(), ex);
        }
        if (received != null) {
            for (PGNotification notification : received) {
                onNotification.accept(notification.getName(), notification.getParameter());
            }
        }
    }

    /** UNLISTENs, restores the driver's probe and gives the connection back to its pool. */
    @Override
    public void close() {
        try (Statement statement = this.connection.createStatement()) {
            statement.execute("UNLISTEN *");
        }
        catch (SQLException ex) {
            // the pool will find out the connection is broken
        }
        if (this.tuned) {
            probeWithoutWaiting(this.connection, false);
        }
        try {
            this.connection.close();
        }
        catch (SQLException ex) {
            // nothing left to give back
        }
    }

    /**
     * Makes pgjdbc's check for further pending messages look only at bytes already received
     * instead of waiting 1 ms on the socket, or restores the driver's behaviour before the
     * connection goes back to its pool.
     * @param connection a connection of the PostgreSQL driver
     * @param enable whether to skip the probe's wait, or to restore it
     * @return whether the change was made
     */
    static boolean probeWithoutWaiting(Connection connection, boolean enable) {
        try {
            Object executor = connection.unwrap(BaseConnection.class).getQueryExecutor();
            if (!(executor instanceof QueryExecutorBase) || PG_STREAM == null || NEXT_AVAILABLE_CHECK == null) {
                throw new NoSuchFieldException("pgStream/nextStreamAvailableCheckTime");
            }
            PGStream stream = (PGStream) PG_STREAM.get(executor);
            NEXT_AVAILABLE_CHECK.setLong(stream, enable ? Long.MAX_VALUE : 0L);
            return true;
        }
        catch (SQLException | ReflectiveOperationException | RuntimeException ex) {
            if (enable && !probeWarned) {
                probeWarned = true;
                log.info("Job notifications reach this node about 1 ms late: this PostgreSQL JDBC driver's "
                        + "notification probe cannot be adjusted ({})", ex.toString());
            }
            return false;
        }
    }

    /**
     * @param dataSource a pool of the PostgreSQL driver
     * @return whether the driver's notification probe can be made not to wait, checked on one of its connections
     */
    public static boolean probeAdjustable(DataSource dataSource) {
        try (Connection connection = dataSource.getConnection()) {
            return probeWithoutWaiting(connection, true) && probeWithoutWaiting(connection, false);
        }
        catch (SQLException ex) {
            throw new DataAccessResourceFailureException("Could not connect: " + ex.getMessage(), ex);
        }
    }

    private static Field field(Class<?> type, String name) {
        try {
            Field field = type.getDeclaredField(name);
            field.setAccessible(true);
            return field;
        }
        catch (ReflectiveOperationException | RuntimeException ex) {
            return null;
        }
    }
}
