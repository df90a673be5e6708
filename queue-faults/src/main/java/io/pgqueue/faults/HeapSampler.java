package io.pgqueue.faults;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.pgqueue.worker.WorkerSettings;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * With {@code faults.heap-sample-interval} set, runs a full GC at that interval and records the
 * heap still used after it in {@code fault_heap}, for the soak's slope.
 */
@Component
@ConditionalOnProperty("faults.heap-sample-interval")
class HeapSampler implements DisposableBean {

    static final String TABLE_DDL = """
            CREATE TABLE IF NOT EXISTS fault_heap (
                node       text        NOT NULL,
                sampled_at timestamptz NOT NULL DEFAULT clock_timestamp(),
                used_bytes bigint      NOT NULL
            )""";

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "fault-heap-sampler");
        thread.setDaemon(true);
        return thread;
    });

    HeapSampler(JdbcTemplate jdbc, WorkerSettings settings, @Value("${faults.heap-sample-interval}") Duration interval) {
        this.timer.scheduleAtFixedRate(() -> {
            System.gc();
            long used = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
            try {
                jdbc.update("INSERT INTO fault_heap (node, used_bytes) VALUES (?, ?)", settings.nodeId(), used);
            }
            catch (RuntimeException ex) {
                // a scenario may have the server down; the next sample is written
            }
        }, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void destroy() {
        this.timer.shutdownNow();
    }
}
