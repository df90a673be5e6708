package io.pgqueue.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;

import io.pgqueue.QueueConfig;
import io.pgqueue.QueueDefaults;
import io.pgqueue.worker.BatchSizes;
import io.pgqueue.worker.PoolSettings;
import io.pgqueue.worker.WorkerSettings;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.core.annotation.AnnotationUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The defaults of the properties are the core's constants, and the configuration metadata that IDEs
 * show states each of them.
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

    @Test
    void theMetadataStatesEveryDefaultAsItBinds() throws Exception {
        List<JsonNode> properties = pgqueueMetadata();
        assertThat(properties).extracting(p -> p.get("name").asString()).contains("pgqueue.poll-interval",
                "pgqueue.console.read-only", "pgqueue.sqs.base-url");
        List<String> checked = new ArrayList<>();
        for (JsonNode property : properties) {
            if (property.has("deprecation")) {
                continue;
            }
            String name = property.get("name").asString();
            // The source type of a nested property is the nested class: bind its outermost one.
            Class<?> type = Class.forName(property.get("sourceType").asString());
            while (AnnotationUtils.findAnnotation(type, ConfigurationProperties.class) == null) {
                type = type.getEnclosingClass();
            }
            String prefix = AnnotationUtils.findAnnotation(type, ConfigurationProperties.class).prefix();
            String path = beanPath(name.substring(prefix.length() + 1));
            Object unset = new BeanWrapperImpl(type.getDeclaredConstructor().newInstance()).getPropertyValue(path);
            if (property.has("defaultValue")) {
                Object bound = new Binder(new MapConfigurationPropertySource(
                        Map.of(name, property.get("defaultValue").asString())))
                    .bind(prefix, Bindable.ofInstance(type.getDeclaredConstructor().newInstance()))
                    .map(instance -> new BeanWrapperImpl(instance).getPropertyValue(path))
                    .get();
                assertThat(bound).as("%s bound from the metadata's default", name).isEqualTo(unset);
                checked.add(name);
            }
            else {
                assertThat(unset).as("%s has a default the metadata does not state", name)
                    .satisfiesAnyOf(value -> assertThat(value).isNull(),
                            value -> assertThat(value).isInstanceOfSatisfying(Map.class, map -> assertThat(map).isEmpty()),
                            value -> assertThat(value).isInstanceOfSatisfying(Collection.class,
                                    list -> assertThat(list).isEmpty()));
            }
        }
        assertThat(checked).contains("pgqueue.lease.duration", "pgqueue.max-payload-size", "pgqueue.balancer.gini-upper");
    }

    /** The pgqueue entries of every configuration metadata file on the class path. */
    private static List<JsonNode> pgqueueMetadata() throws IOException {
        List<JsonNode> properties = new ArrayList<>();
        Enumeration<URL> files = QueuePropertiesTests.class.getClassLoader()
            .getResources("META-INF/spring-configuration-metadata.json");
        JsonMapper json = JsonMapper.builder().build();
        while (files.hasMoreElements()) {
            try (InputStream in = files.nextElement().openStream()) {
                for (JsonNode property : json.readTree(in).path("properties")) {
                    if (property.get("name").asString().startsWith("pgqueue.")) {
                        properties.add(property);
                    }
                }
            }
        }
        return properties;
    }

    /** {@code lease.heartbeat-interval} as the bean path {@code lease.heartbeatInterval}. */
    private static String beanPath(String relaxedName) {
        StringBuilder path = new StringBuilder();
        boolean upper = false;
        for (char c : relaxedName.toCharArray()) {
            if (c == '-') {
                upper = true;
            }
            else {
                path.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        return path.toString();
    }
}
