package io.pgqueue.internal.worker;

import java.lang.reflect.Field;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Collection;
import java.util.function.BiConsumer;

import javax.sql.DataSource;

import io.pgqueue.internal.lifecycle.BackgroundService;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.PGStream;
import org.postgresql.core.QueryExecutorBase;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds one connection that LISTENs on some channels (a node's tasks, the message queues) and
 * hands every notification, channel and payload, to a callback on its own thread. When the connection breaks (e.g. a database restart) it reconnects with
 * backoff and calls its reconnect callback, since notifications sent meanwhile were lost. An
 * internal type of the queue.
 * <p>
 * pgjdbc's {@code getNotifications(timeout)} returns a notification only after probing the socket
 * for more with a 1 ms read timeout (a probe whose back-off never engages when it times out): every
 * wake-up comes at least 1.1 ms late (a notification reaches a C libpq listener 20 µs after the
 * commit, a JDBC listener 1.3 ms after). The listener
 * therefore turns that probe into a plain check of the bytes already received, when the driver's
 * internals allow it (checked at start-up; otherwise it logs once and lives with the delay).
 */
public final class NotificationListener extends BackgroundService {

    private static final Logger log = LoggerFactory.getLogger(NotificationListener.class);

    private static final int RECEIVE_TIMEOUT_MILLIS = 500;

    private static final Field PG_STREAM = field(QueryExecutorBase.class, "pgStream");

    private static final Field NEXT_AVAILABLE_CHECK = field(PGStream.class, "nextStreamAvailableCheckTime");

    private static volatile boolean probeWarned;

    private final DataSource dataSource;

    private final Collection<String> channels;

    private final BiConsumer<String, String> onNotification;

    private final Runnable onReconnect;

    /**
     * Creates a listener; it listens once started.
     * @param dataSource where it takes its connection
     * @param channels the channels
     * @param onNotification called with the channel and the payload of every notification
     * @param onReconnect called when it listens again after the connection broke
     * @param threadSuffix appended to its thread's name
     */
    public NotificationListener(DataSource dataSource, Collection<String> channels,
            BiConsumer<String, String> onNotification, Runnable onReconnect, String threadSuffix) {
        super("pgqueue-listener" + threadSuffix, Duration.ofMillis(RECEIVE_TIMEOUT_MILLIS * 4L));
        this.dataSource = dataSource;
        this.channels = channels;
        this.onNotification = onNotification;
        this.onReconnect = onReconnect;
    }

    /** Listens until stopped; with notifications switched off (no channels) the thread ends at once. */
    @Override
    protected void run() {
        long backoff = 0;
        boolean connectedBefore = false;
        while (isRunning() && !this.channels.isEmpty()) {
            try (Connection connection = this.dataSource.getConnection()) {
                listen(connection);
                boolean tuned = probeWithoutWaiting(connection, true);
                if (connectedBefore || backoff > 0) {
                    log.info("Listening for job notifications again");
                    this.onReconnect.run();
                }
                connectedBefore = true;
                backoff = 0;
                receive(connection.unwrap(PGConnection.class));
                unlisten(connection);
                if (tuned) {
                    probeWithoutWaiting(connection, false);
                }
            }
            catch (SQLException | RuntimeException ex) {
                if (!isRunning()) {
                    return;
                }
                if (backoff == 0) {
                    log.warn("Job notifications interrupted, reconnecting every {} ms until it can (polling "
                            + "continues): {}", MAX_RETRY_PAUSE.toMillis(), ex.toString());
                }
                else {
                    log.debug("Job notifications still interrupted: {}", ex.toString());
                }
                backoff = retryPause(backoff);
                pause(Duration.ofMillis(backoff));
            }
        }
    }

    private void listen(Connection connection) throws SQLException {
        if (!connection.getAutoCommit()) {
            connection.setAutoCommit(true);
        }
        try (Statement statement = connection.createStatement()) {
            for (String channel : this.channels) {
                statement.execute("LISTEN \"" + channel.replace("\"", "\"\"") + "\"");
            }
        }
    }

    private void receive(PGConnection connection) throws SQLException {
        while (isRunning()) {
            PGNotification[] notifications = connection.getNotifications(RECEIVE_TIMEOUT_MILLIS);
            if (notifications != null) {
                for (PGNotification notification : notifications) {
                    this.onNotification.accept(notification.getName(), notification.getParameter());
                }
            }
        }
    }

    /**
     * Makes pgjdbc's check for further pending messages look only at bytes already received
     * instead of waiting 1 ms on the socket, or restores the driver's behaviour before the
     * connection goes back to its pool.
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

    /** The connection goes back to a pool: it must not keep receiving notifications there. */
    private static void unlisten(Connection connection) {
        try (Statement statement = connection.createStatement()) {
            statement.execute("UNLISTEN *");
        }
        catch (SQLException ex) {
            // the pool will find out the connection is broken
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
