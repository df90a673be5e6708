package io.pgqueue.autoconfigure;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

import io.pgqueue.QueueConfig;
import io.pgqueue.Retention;
import io.pgqueue.worker.BatchSizes;
import io.pgqueue.worker.PoolSettings;
import io.pgqueue.worker.WorkerSettings;
import org.springframework.boot.convert.DurationStyle;

/**
 * Maps {@code pgqueue.*} properties onto the core's settings, checking each value and naming the
 * property when one cannot work.
 */
final class QueueSettingsMapper {

    private QueueSettingsMapper() {
    }

    static QueueConfig queueConfig(QueueProperties properties) {
        try {
            QueueConfig.validateSchema(properties.getSchema());
        }
        catch (IllegalArgumentException ex) {
            throw invalid("pgqueue.schema", properties.getSchema(), ex.getMessage());
        }
        long maxPayload = properties.getMaxPayloadSize() == null ? 0 : properties.getMaxPayloadSize().toBytes();
        require(maxPayload > 0, "pgqueue.max-payload-size", properties.getMaxPayloadSize(), "must be positive");
        notNegative(properties.getStatementTimeout(), "pgqueue.statement-timeout");
        QueueProperties.Retention retention = properties.getRetention();
        notNegative(retention.getCompleted(), "pgqueue.retention.completed");
        notNegative(retention.getFailed(), "pgqueue.retention.failed");
        notNegative(retention.getCancelled(), "pgqueue.retention.cancelled");
        return new QueueConfig(properties.getSchema(), maxPayload, properties.getStatementTimeout(),
                new Retention(retention.getCompleted(), retention.getFailed(), retention.getCancelled()));
    }

    static WorkerSettings workerSettings(QueueProperties properties) {
        QueueProperties.Lease lease = properties.getLease();
        positive(lease.getDuration(), "pgqueue.lease.duration");
        positive(lease.getHeartbeatInterval(), "pgqueue.lease.heartbeat-interval");
        require(lease.getHeartbeatInterval().compareTo(lease.getDuration()) < 0, "pgqueue.lease.heartbeat-interval",
                lease.getHeartbeatInterval(), "must be shorter than pgqueue.lease.duration ("
                        + display(lease.getDuration()) + "), or leases expire between heartbeats");
        positive(properties.getPollInterval(), "pgqueue.poll-interval");
        notNegative(properties.getShutdown().getTimeout(), "pgqueue.shutdown.timeout");
        positive(properties.getRescue().getInterval(), "pgqueue.rescue.interval");
        QueueProperties.Retention retention = properties.getRetention();
        positive(retention.getInterval(), "pgqueue.retention.interval");
        BatchSizes batchSizes = batchSizes(properties);
        notNegative(properties.getVacuum().getInterval(), "pgqueue.vacuum.interval");
        Map<String, PoolSettings> pools = new LinkedHashMap<>();
        properties.getPools().forEach((name, pool) -> {
            String prefix = "pgqueue.pools." + name;
            require(pool.getMaxPrefetch() >= 0, prefix + ".max-prefetch", pool.getMaxPrefetch(), "must not be negative");
            notNegative(pool.getPrefetchWindow(), prefix + ".prefetch-window");
            pools.put(name, new PoolSettings(pool.getMaxPrefetch(), pool.getPrefetchWindow()));
        });
        String nodeId = properties.getNodeId();
        if (nodeId == null || nodeId.isBlank()) {
            nodeId = defaultNodeId();
        }
        return WorkerSettings.builder(nodeId)
            .lease(lease.getDuration())
            .heartbeatInterval(lease.getHeartbeatInterval())
            .pollInterval(properties.getPollInterval())
            .notifications(properties.getNotifications().isEnabled())
            .shutdownTimeout(properties.getShutdown().getTimeout())
            .rescueInterval(properties.getRescue().getInterval())
            .retentionInterval(retention.getInterval())
            .vacuumInterval(properties.getVacuum().getInterval())
            .batchSizes(batchSizes)
            .pools(pools)
            .build();
    }

    static Duration statsInterval(QueueProperties properties) {
        positive(properties.getStats().getInterval(), "pgqueue.stats.interval");
        return properties.getStats().getInterval();
    }

    @SuppressWarnings("deprecation")
    private static BatchSizes batchSizes(QueueProperties properties) {
        Integer legacy = properties.getRetention().getBatchSize();
        if (legacy != null) {
            require(legacy > 0, "pgqueue.retention.batch-size", legacy, "must be positive");
            return new BatchSizes(legacy, legacy, legacy, legacy);
        }
        QueueProperties.Batch batch = properties.getBatch();
        require(batch.getClaim() > 0, "pgqueue.batch.claim", batch.getClaim(), "must be positive");
        require(batch.getHeartbeat() > 0, "pgqueue.batch.heartbeat", batch.getHeartbeat(), "must be positive");
        require(batch.getWrite() > 0, "pgqueue.batch.write", batch.getWrite(), "must be positive");
        require(batch.getMaintenance() > 0, "pgqueue.batch.maintenance", batch.getMaintenance(), "must be positive");
        return new BatchSizes(batch.getClaim(), batch.getHeartbeat(), batch.getWrite(), batch.getMaintenance());
    }

    /** Host name, process id and a random suffix: unique even for two contexts in one JVM. */
    static String defaultNodeId() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        }
        catch (java.io.IOException ex) {
            host = "node";
        }
        String pid = ManagementFactory.getRuntimeMXBean().getName().split("@")[0];
        return host + "-" + pid + "-" + UUID.randomUUID().toString().substring(0, 4);
    }

    static void positive(Duration value, String property) {
        require(value != null && !value.isZero() && !value.isNegative(), property, value, "must be positive");
    }

    static void notNegative(Duration value, String property) {
        require(value != null && !value.isNegative(), property, value, "must not be negative");
    }

    static void require(boolean condition, String property, Object value, String rule) {
        if (!condition) {
            throw invalid(property, value, rule);
        }
    }

    /** Shows durations as they are written in properties ("10s", not "PT10S"). */
    static Object display(Object value) {
        if (!(value instanceof Duration duration)) {
            return value;
        }
        for (ChronoUnit unit : new ChronoUnit[] { ChronoUnit.DAYS, ChronoUnit.HOURS, ChronoUnit.MINUTES, ChronoUnit.SECONDS }) {
            if (!duration.isZero() && duration.toNanos() % unit.getDuration().toNanos() == 0) {
                return DurationStyle.SIMPLE.print(duration, unit);
            }
        }
        return DurationStyle.SIMPLE.print(duration);
    }

    static QueueConfigurationException invalid(String property, Object value, String rule) {
        return new QueueConfigurationException("Invalid value '" + display(value) + "' for '" + property + "': " + rule,
                "Update '" + property + "' in your application configuration.");
    }
}
