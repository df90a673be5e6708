package io.pgqueue.internal.worker;

import java.time.Duration;

import io.pgqueue.Retention;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.testing.TestQueue;
import io.pgqueue.worker.WorkerSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/** The janitor's removal of silent nodes from the registry. */
class MaintenanceTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(TestQueue.task("t"));

    @Test
    void aNodeSilentFor360HeartbeatIntervalsLeavesTheRegistryAndOneThatBeatsStays() {
        // 360 heartbeats of 10 ms: silent for 3.6 s.
        WorkerSettings settings = WorkerSettings.builder("janitor").heartbeatInterval(Duration.ofMillis(10)).build();
        Maintenance maintenance = new Maintenance(queue.store(), queue.stores().nodes(), Retention.defaults(), settings,
                new Rescuer(queue.store(), 100, new QueueEvents() {
                }), "");
        queue.stores().nodes().register("gone", "host-a", "{}");
        queue.stores().nodes().register("silent-a-while", "host-b", "{}");
        queue.stores().nodes().register("alive", "host-c", "{}");
        queue.jdbc().update("UPDATE pgqueue.node SET last_heartbeat = now() - interval '4 seconds' WHERE id = 'gone'");
        queue.jdbc().update("UPDATE pgqueue.node SET last_heartbeat = now() - interval '3 seconds' WHERE id = 'silent-a-while'");

        maintenance.purge();

        assertThat(queue.stores().nodes().list()).extracting(node -> node.id())
            .contains("silent-a-while", "alive").doesNotContain("gone");
    }
}
