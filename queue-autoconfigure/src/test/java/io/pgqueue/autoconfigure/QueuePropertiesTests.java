package io.pgqueue.autoconfigure;

import io.pgqueue.QueueConfig;
import io.pgqueue.QueueDefaults;
import io.pgqueue.worker.BatchSizes;
import io.pgqueue.worker.PoolSettings;
import io.pgqueue.worker.WorkerSettings;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The documented defaults of the properties are the core's constants.
 */
class QueuePropertiesTests {

    @Test
    void defaultsAreTheCoresConstants() {
        QueueProperties properties = new QueueProperties();

        QueueConfig config = QueueSettingsMapper.queueConfig(properties);
        assertThat(config).isEqualTo(QueueConfig.defaults());

        WorkerSettings defaults = WorkerSettings.builder("n").build();
        WorkerSettings mapped = QueueSettingsMapper.workerSettings(properties);
        assertThat(mapped.lease()).isEqualTo(defaults.lease()).isEqualTo(QueueDefaults.LEASE);
        assertThat(mapped.heartbeatInterval()).isEqualTo(defaults.heartbeatInterval());
        assertThat(mapped.pollInterval()).isEqualTo(defaults.pollInterval());
        assertThat(mapped.notifications()).isEqualTo(defaults.notifications());
        assertThat(mapped.shutdownTimeout()).isEqualTo(defaults.shutdownTimeout());
        assertThat(mapped.rescueInterval()).isEqualTo(defaults.rescueInterval());
        assertThat(mapped.retentionInterval()).isEqualTo(defaults.retentionInterval());
        assertThat(mapped.vacuumInterval()).isEqualTo(defaults.vacuumInterval());
        assertThat(mapped.batchSizes()).isEqualTo(defaults.batchSizes()).isEqualTo(BatchSizes.defaults());
        QueueProperties.Pool pool = new QueueProperties.Pool();
        assertThat(new PoolSettings(pool.getMaxPrefetch(), pool.getPrefetchWindow(),
                pool.getMaxPrefetchBytes().toBytes())).isEqualTo(PoolSettings.defaults());
        assertThat(properties.isEnabled()).isTrue();
        assertThat(properties.getWorkers().isEnabled()).isTrue();
        assertThat(properties.getFlyway().isEnabled()).isTrue();
    }

    @Test
    void defaultNodeIdsDifferWithinOneProcess() {
        assertThat(WorkerSettings.defaultNodeId()).isNotEqualTo(WorkerSettings.defaultNodeId());
    }
}
