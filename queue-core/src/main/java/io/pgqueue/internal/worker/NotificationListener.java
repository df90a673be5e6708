package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.Collection;
import java.util.function.BiConsumer;

import javax.sql.DataSource;

import io.pgqueue.internal.lifecycle.BackgroundService;
import io.pgqueue.internal.store.ListenConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds one connection that LISTENs on some channels (a node's tasks, the message queues,
 * {@link ListenConnection}) and hands every notification, channel and payload, to a callback on its
 * own thread. When the connection breaks (e.g. a database restart) it reconnects with backoff and
 * calls its reconnect callback, since notifications sent meanwhile were lost. An internal type of
 * the queue.
 */
public final class NotificationListener extends BackgroundService {

    private static final Logger log = LoggerFactory.getLogger(NotificationListener.class);

    private static final int RECEIVE_TIMEOUT_MILLIS = 500;

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
            try (ListenConnection connection = ListenConnection.open(this.dataSource, this.channels)) {
                if (connectedBefore || backoff > 0) {
                    log.info("Listening for job notifications again");
                    this.onReconnect.run();
                }
                connectedBefore = true;
                backoff = 0;
                while (isRunning()) {
                    connection.receive(RECEIVE_TIMEOUT_MILLIS, this.onNotification);
                }
            }
            catch (RuntimeException ex) {
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
}
