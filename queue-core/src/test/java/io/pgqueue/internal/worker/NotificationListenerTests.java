package io.pgqueue.internal.worker;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import io.pgqueue.internal.store.ListenConnection;
import io.pgqueue.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The LISTEN connection: every notification arrives, also with the driver's pending-message probe
 * turned into a non-blocking check, and the connection goes back to its pool as it came.
 */
class NotificationListenerTests {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.perClass();

    @Test
    void theShippedDriverLetsTheListenerSkipItsOneMillisecondProbe() throws Exception {
        // Fails when a driver upgrade renames the internals the listener adjusts: then every
        // wake-up would come about a millisecond late again (the listener logs it, too).
        assertThat(ListenConnection.probeAdjustable(db.dataSource())).isTrue();
    }

    @Test
    void receivesEveryNotificationOfABurst() {
        Map<String, AtomicInteger> received = new ConcurrentHashMap<>();
        AtomicInteger reconnects = new AtomicInteger();
        NotificationListener listener = new NotificationListener(db.dataSource(), List.of("pgqueue_test_probe",
                "pgqueue_test_a", "pgqueue_test_b"), (channel, payload) -> received.computeIfAbsent(channel, key -> new AtomicInteger())
                    .incrementAndGet(), reconnects::incrementAndGet, "");
        listener.start();
        try {
            JdbcTemplate jdbc = new JdbcTemplate(db.dataSource());
            // LISTEN is in place once a notification gets through.
            await().untilAsserted(() -> {
                jdbc.execute("NOTIFY pgqueue_test_probe");
                assertThat(received).containsKey("pgqueue_test_probe");
            });
            // Each in its own transaction: PostgreSQL folds equal notifications of one transaction.
            for (int i = 0; i < 500; i++) {
                jdbc.execute("NOTIFY pgqueue_test_" + (i % 2 == 0 ? "a" : "b") + ", '" + i + "'");
            }
            await().untilAsserted(() -> {
                assertThat(received.get("pgqueue_test_a")).hasValue(250);
                assertThat(received.get("pgqueue_test_b")).hasValue(250);
            });
            assertThat(reconnects).hasValue(0);
        }
        finally {
            listener.stop();
        }
    }
}
