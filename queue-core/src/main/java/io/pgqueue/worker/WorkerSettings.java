package io.pgqueue.worker;

import java.io.IOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

import io.pgqueue.InvalidSettingException;
import io.pgqueue.QueueDefaults;

/**
 * Settings of a node's worker runtime. Defaults come from {@link QueueDefaults}; build with
 * {@link #builder(String)}.
 *
 * @param nodeId this node's id, recorded as lease owner and in the node registry
 * @param lease how long a claim (and each renewal) holds a job
 * @param heartbeatInterval how often leases of claimed jobs and the node's registration are renewed
 * @param pollInterval how often pools look for due jobs when no notification arrives
 * @param notifications whether pools are woken by LISTEN/NOTIFY (polling still runs as a fallback)
 * @param shutdownTimeout how long running handlers get to finish when the node stops
 * @param rescueInterval how often expired leases are rescued
 * @param retentionInterval how often finished jobs past their retention are deleted
 * @param vacuumInterval how often the queue VACUUMs its active-job table; zero to leave it to autovacuum
 * @param batchSizes the most rows one claim, heartbeat, write or maintenance statement handles
 * @param pools settings per pool, by name; pools not listed use {@link PoolSettings#defaults()}
 */
public record WorkerSettings(String nodeId, Duration lease, Duration heartbeatInterval, Duration pollInterval,
        boolean notifications, Duration shutdownTimeout, Duration rescueInterval, Duration retentionInterval,
        Duration vacuumInterval, BatchSizes batchSizes, Map<String, PoolSettings> pools) {

    /**
     * Validates the settings.
     */
    public WorkerSettings {
        InvalidSettingException.require(nodeId != null && !nodeId.isBlank(), "node-id", nodeId, "must not be blank");
        InvalidSettingException.positive(lease, "lease.duration");
        InvalidSettingException.positive(heartbeatInterval, "lease.heartbeat-interval");
        InvalidSettingException.require(heartbeatInterval.compareTo(lease) < 0, "lease.heartbeat-interval",
                heartbeatInterval, "must be shorter than {lease.duration} (" + InvalidSettingException.display(lease)
                        + "), or leases expire between heartbeats");
        InvalidSettingException.positive(pollInterval, "poll-interval");
        InvalidSettingException.notNegative(shutdownTimeout, "shutdown.timeout");
        InvalidSettingException.positive(rescueInterval, "rescue.interval");
        InvalidSettingException.positive(retentionInterval, "retention.interval");
        InvalidSettingException.notNegative(vacuumInterval, "vacuum.interval");
        Objects.requireNonNull(batchSizes, "batchSizes");
        pools = Map.copyOf(pools);
    }

    /**
     * Starts settings with the defaults.
     * @param nodeId this node's id
     * @return a builder
     */
    public static Builder builder(String nodeId) {
        return new Builder(nodeId);
    }

    /**
     * Returns a node id unique even for two nodes in one JVM: host name, process id and a random suffix.
     * @return the id
     */
    public static String defaultNodeId() {
        String pid = Long.toString(ProcessHandle.current().pid());
        return hostName() + "-" + pid + "-" + UUID.randomUUID().toString().substring(0, 4);
    }

    /**
     * Returns this machine's host name, as nodes register it.
     * @return the host name, or {@code unknown} when it cannot be resolved
     */
    public static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        }
        catch (IOException ex) {
            return "unknown";
        }
    }

    /**
     * Returns the settings of a pool.
     * @param name the pool name
     * @return its settings, or the defaults
     */
    public PoolSettings pool(String name) {
        return this.pools.getOrDefault(name, PoolSettings.defaults());
    }

    /**
     * Builds {@link WorkerSettings}.
     */
    public static final class Builder {

        private final String nodeId;
        private Duration lease = QueueDefaults.LEASE;
        private Duration heartbeatInterval = QueueDefaults.HEARTBEAT_INTERVAL;
        private Duration pollInterval = QueueDefaults.POLL_INTERVAL;
        private boolean notifications = true;
        private Duration shutdownTimeout = QueueDefaults.SHUTDOWN_TIMEOUT;
        private Duration rescueInterval = QueueDefaults.RESCUE_INTERVAL;
        private Duration retentionInterval = QueueDefaults.RETENTION_INTERVAL;
        private Duration vacuumInterval = QueueDefaults.VACUUM_INTERVAL;
        private BatchSizes batchSizes = BatchSizes.defaults();
        private Map<String, PoolSettings> pools = Map.of();

        private Builder(String nodeId) {
            this.nodeId = nodeId;
        }

        /**
         * @param lease the lease
         * @return this builder
         */
        public Builder lease(Duration lease) {
            this.lease = lease;
            return this;
        }

        /**
         * @param heartbeatInterval the heartbeat interval
         * @return this builder
         */
        public Builder heartbeatInterval(Duration heartbeatInterval) {
            this.heartbeatInterval = heartbeatInterval;
            return this;
        }

        /**
         * @param pollInterval the poll interval
         * @return this builder
         */
        public Builder pollInterval(Duration pollInterval) {
            this.pollInterval = pollInterval;
            return this;
        }

        /**
         * @param notifications whether to LISTEN for notifications
         * @return this builder
         */
        public Builder notifications(boolean notifications) {
            this.notifications = notifications;
            return this;
        }

        /**
         * @param shutdownTimeout the shutdown timeout
         * @return this builder
         */
        public Builder shutdownTimeout(Duration shutdownTimeout) {
            this.shutdownTimeout = shutdownTimeout;
            return this;
        }

        /**
         * @param rescueInterval the rescue interval
         * @return this builder
         */
        public Builder rescueInterval(Duration rescueInterval) {
            this.rescueInterval = rescueInterval;
            return this;
        }

        /**
         * @param retentionInterval the retention interval
         * @return this builder
         */
        public Builder retentionInterval(Duration retentionInterval) {
            this.retentionInterval = retentionInterval;
            return this;
        }

        /**
         * @param vacuumInterval the vacuum interval, zero to disable
         * @return this builder
         */
        public Builder vacuumInterval(Duration vacuumInterval) {
            this.vacuumInterval = vacuumInterval;
            return this;
        }

        /**
         * @param batchSizes the most rows per statement, by statement
         * @return this builder
         */
        public Builder batchSizes(BatchSizes batchSizes) {
            this.batchSizes = batchSizes;
            return this;
        }

        /**
         * @param pools settings per pool
         * @return this builder
         */
        public Builder pools(Map<String, PoolSettings> pools) {
            this.pools = pools;
            return this;
        }

        /** @return the settings */
        public WorkerSettings build() {
            return new WorkerSettings(this.nodeId, this.lease, this.heartbeatInterval, this.pollInterval,
                    this.notifications, this.shutdownTimeout, this.rescueInterval, this.retentionInterval,
                    this.vacuumInterval, this.batchSizes, this.pools);
        }
    }
}
