package io.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.pgqueue.InvalidSettingException;
import io.pgqueue.JobInterceptor;
import io.pgqueue.JobInterceptors;
import io.pgqueue.PayloadEncryption;
import io.pgqueue.PgQueue;
import io.pgqueue.QueueConfig;
import io.pgqueue.Retention;
import io.pgqueue.balance.BalancerSettings;
import io.pgqueue.worker.BatchSizes;
import io.pgqueue.worker.PoolSettings;
import io.pgqueue.worker.WorkerSettings;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.PropertyMapper;
import org.springframework.util.ClassUtils;

/**
 * Maps {@code pgqueue.*} properties onto the core's settings and its {@link PgQueue} builder: the
 * one place that knows both. The core checks the values and names the setting that cannot work;
 * this turns that into the property to fix. Only properties the core does not know (the deprecated
 * batch size, health) are checked here.
 */
final class QueueSettingsMapper {

    private static final String PREFIX = "pgqueue.";

    /** The text of a property as the user wrote it, to show in a report; {@code null} when unknown. */
    @FunctionalInterface
    interface RawValues {

        /** Reports values as the core holds them. */
        RawValues NONE = property -> null;

        @Nullable String of(String property);
    }

    private QueueSettingsMapper() {
    }

    static QueueConfig queueConfig(QueueProperties properties) {
        return queueConfig(properties, RawValues.NONE);
    }

    static QueueConfig queueConfig(QueueProperties properties, RawValues raw) {
        QueueProperties.Retention retention = properties.getRetention();
        long maxPayload = properties.getMaxPayloadSize() == null ? 0 : properties.getMaxPayloadSize().toBytes();
        return mapped(() -> new QueueConfig(properties.getSchema(), maxPayload, properties.getStatementTimeout(),
                new Retention(retention.getCompleted(), retention.getFailed(), retention.getCancelled())), raw);
    }

    static WorkerSettings workerSettings(QueueProperties properties) {
        return workerSettings(properties, RawValues.NONE);
    }

    static WorkerSettings workerSettings(QueueProperties properties, RawValues raw) {
        Map<String, PoolSettings> pools = new LinkedHashMap<>();
        properties.getPools().forEach((name, pool) -> pools.put(name,
                mapped(() -> pool(name, pool.getMaxPrefetch(), pool.getPrefetchWindow(),
                        pool.getMaxPrefetchBytes() == null ? 0 : pool.getMaxPrefetchBytes().toBytes()), raw)));
        BatchSizes batchSizes = batchSizes(properties, raw);
        String nodeId = properties.getNodeId();
        WorkerSettings.Builder builder = WorkerSettings
            .builder(nodeId == null || nodeId.isBlank() ? WorkerSettings.defaultNodeId() : nodeId);
        PropertyMapper map = PropertyMapper.get();
        map.from(properties.getLease()::getDuration).to(builder::lease);
        map.from(properties.getLease()::getHeartbeatInterval).to(builder::heartbeatInterval);
        map.from(properties::getPollInterval).to(builder::pollInterval);
        map.from(properties.getNotifications()::isEnabled).to(builder::notifications);
        map.from(properties.getShutdown()::getTimeout).to(builder::shutdownTimeout);
        map.from(properties.getRescue()::getInterval).to(builder::rescueInterval);
        map.from(properties.getRetention()::getInterval).to(builder::retentionInterval);
        map.from(properties.getVacuum()::getInterval).to(builder::vacuumInterval);
        map.from(batchSizes).to(builder::batchSizes);
        map.from(pools).to(builder::pools);
        return mapped(builder::build, raw);
    }

    /**
     * Applies the properties the builder takes directly (the settings records come as beans).
     * @param builder the queue's builder
     * @param properties the properties
     */
    /** A partition ({@code 17}) or a range of partitions ({@code 0-127}): a key of pgqueue.balancer.affinity. */
    private static final Pattern PARTITION_RANGE = Pattern.compile("(\\d{1,5})(?:-(\\d{1,5}))?");

    static void configure(PgQueue.Builder builder, QueueProperties properties) {
        mapped(() -> builder.statsInterval(properties.getStats().getInterval()));
        if (properties.getPartitions() != null) {
            mapped(() -> builder.partitions(properties.getPartitions()));
        }
        QueueProperties.Balancer balancer = properties.getBalancer();
        BalancerSettings settings = mapped(() -> new BalancerSettings(balancer.getInterval(), balancer.getMovesPerRound(),
                balancer.getOverloadLag(), balancer.getOverloadWindow(), balancer.getGiniUpper(), balancer.getGiniLower(),
                balancer.getFrictionMoves(), balancer.getFrictionWindow(), affinity(balancer.getAffinity())));
        mapped(() -> builder.balancer(balancer.isEnabled(), settings, balancer.getLoadWindow()));
        builder.interceptors(interceptors(properties.getInterceptors()));
    }

    /** The payload keys, checked; none when no key is configured. */
    static PayloadEncryption encryption(QueueProperties.Encryption properties) {
        if (properties.getKeys().isEmpty()) {
            require(properties.getKey() == null || properties.getKey().isBlank(), PREFIX + "encryption.key",
                    properties.getKey(), "names a key, but pgqueue.encryption.keys is empty");
            return PayloadEncryption.NONE;
        }
        return mapped(() -> PayloadEncryption.of(properties.getKey(), properties.getKeys()));
    }

    /** The built-in interceptors the properties ask for, in the order the properties list them. */
    static List<JobInterceptor> interceptors(QueueProperties.Interceptors properties) {
        List<JobInterceptor> interceptors = new ArrayList<>();
        if (properties.isLogContext()) {
            interceptors.add(JobInterceptors.logContext());
        }
        List<String> keys = properties.getCarriedMdcKeys();
        if (!keys.isEmpty()) {
            require(keys.stream().allMatch(key -> key != null && !key.isBlank()), PREFIX + "interceptors.carried-mdc-keys",
                    keys, "an MDC key must not be blank");
            interceptors.add(JobInterceptors.carryMdc(keys));
        }
        // The user's context is an interceptor bean (QueueSecurityContextConfiguration), made only with Spring Security.
        require(!properties.isSecurityContext() || ClassUtils.isPresent(
                "org.springframework.security.core.userdetails.UserDetailsService", QueueSettingsMapper.class.getClassLoader()),
                PREFIX + "interceptors.security-context", true, "needs Spring Security on the class path");
        return interceptors;
    }

    /** Partitions (a number or a range {@code from-to}) mapped to the shards they may live on. */
    private static Map<Integer, Set<String>> affinity(Map<String, List<String>> ranges) {
        Map<Integer, Set<String>> affinity = new HashMap<>();
        ranges.forEach((range, shards) -> {
            String property = PREFIX + "balancer.affinity[" + range + "]";
            Matcher matcher = PARTITION_RANGE.matcher(range.trim());
            require(matcher.matches(), property, range, "the key must be a partition or a range of partitions, "
                    + "e.g. 17 or 0-127");
            int from = Integer.parseInt(matcher.group(1));
            int to = matcher.group(2) == null ? from : Integer.parseInt(matcher.group(2));
            require(from <= to, property, range, "a range runs from the lower partition to the higher");
            require(shards != null && !shards.isEmpty(), property, shards, "list at least one shard");
            for (int partition = from; partition <= to; partition++) {
                affinity.put(partition, Set.copyOf(shards.stream().map(String::trim).toList()));
            }
        });
        return affinity;
    }

    /** @return the statistics interval, checked */
    static Duration statsInterval(QueueProperties properties, RawValues raw) {
        return mapped(() -> InvalidSettingException.positive(properties.getStats().getInterval(), "stats.interval"), raw);
    }

    private static PoolSettings pool(String name, int maxPrefetch, Duration prefetchWindow, long maxPrefetchBytes) {
        try {
            return new PoolSettings(maxPrefetch, prefetchWindow, maxPrefetchBytes);
        }
        catch (InvalidSettingException ex) {
            throw ex.within("pools." + name);
        }
    }

    @SuppressWarnings("deprecation")
    private static BatchSizes batchSizes(QueueProperties properties, RawValues raw) {
        Integer legacy = properties.getRetention().getBatchSize();
        if (legacy != null) {
            require(legacy > 0, "pgqueue.retention.batch-size", legacy, "must be positive");
            return new BatchSizes(legacy, legacy, legacy, legacy);
        }
        QueueProperties.Batch batch = properties.getBatch();
        return mapped(() -> new BatchSizes(batch.getClaim(), batch.getHeartbeat(), batch.getWrite(),
                batch.getMaintenance()), raw);
    }

    /**
     * Builds core settings, reporting a value the core refuses as the property to fix.
     * @param build builds the settings
     * @return the settings
     * @throws QueueConfigurationException naming the property
     */
    static <T> T mapped(Supplier<T> build) {
        return mapped(build, RawValues.NONE);
    }

    private static <T> T mapped(Supplier<T> build, RawValues raw) {
        try {
            return build.get();
        }
        catch (InvalidSettingException ex) {
            String property = PREFIX + ex.setting();
            String written = raw.of(property);
            throw invalid(property, written != null ? written : ex.value(), ex.rule(PREFIX));
        }
    }

    static void positive(Duration value, String property) {
        require(value != null && !value.isZero() && !value.isNegative(), property, value, "must be positive");
    }

    static void require(boolean condition, String property, Object value, String rule) {
        if (!condition) {
            throw invalid(property, value, rule);
        }
    }

    static QueueConfigurationException invalid(String property, Object value, String rule) {
        return new QueueConfigurationException("Invalid value '" + InvalidSettingException.display(value) + "' for '"
                + property + "': " + rule, "Update '" + property + "' in your application configuration.");
    }
}
