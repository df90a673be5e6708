package io.pgqueue.autoconfigure;

import java.sql.Connection;
import java.sql.SQLException;

import javax.sql.DataSource;

import org.postgresql.PGConnection;

/**
 * Checks at start-up that the queue can work through the connection pooling
 * {@code pgqueue.connection-pooling} declares: in transaction pooling a connection's session state
 * does not last from one transaction to the next, so LISTEN, named server-side prepared statements
 * and session locks do not work.
 */
final class QueuePooling {

    private QueuePooling() {
    }

    /**
     * @param properties the queue's properties
     * @param dataSource the queue's DataSource
     * @param sharded whether the queue has shards
     * @throws QueueConfigurationException naming the setting to change
     */
    static void check(QueueProperties properties, DataSource dataSource, boolean sharded) {
        if (properties.getConnectionPooling() != QueueProperties.ConnectionPooling.TRANSACTION) {
            return;
        }
        if (properties.getNotifications().isEnabled()) {
            throw new QueueConfigurationException("pgqueue.connection-pooling=TRANSACTION, but LISTEN/NOTIFY needs a "
                    + "session, which transaction pooling does not keep: notifications would never arrive",
                    "Set pgqueue.notifications.enabled=false (workers find jobs by polling every pgqueue.poll-interval), "
                            + "or use session pooling.");
        }
        if (sharded) {
            throw new QueueConfigurationException("pgqueue.connection-pooling=TRANSACTION, but a sharded queue moves "
                    + "partitions under a session lock, which transaction pooling does not keep",
                    "Give the queue and its shards direct connections (or session pooling).");
        }
        int threshold;
        try (Connection connection = dataSource.getConnection()) {
            threshold = connection.unwrap(PGConnection.class).getPrepareThreshold();
        }
        catch (SQLException ex) {
            // Not PostgreSQL's driver, or the database is not reachable: the queue's own start reports it.
            return;
        }
        if (threshold > 0) {
            throw new QueueConfigurationException("pgqueue.connection-pooling=TRANSACTION, but the JDBC driver names a "
                    + "server-side prepared statement after " + threshold + " runs of a statement, which does not exist "
                    + "on the next server connection (\"prepared statement S_1 does not exist\")",
                    "Add prepareThreshold=0 to the JDBC URL (or set "
                            + "spring.datasource.hikari.data-source-properties.prepareThreshold=0).");
        }
    }
}
