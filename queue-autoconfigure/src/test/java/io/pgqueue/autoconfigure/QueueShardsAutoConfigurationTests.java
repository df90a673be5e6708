package io.pgqueue.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.pgqueue.EnqueueOptions;
import io.pgqueue.JobRequest;
import io.pgqueue.PgQueue;
import io.pgqueue.QueueClient;
import io.pgqueue.balance.BalancerSettings;
import io.pgqueue.observe.QueueMeterNames;
import io.pgqueue.testing.TestDatabase;
import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Shards listed under {@code pgqueue.shards}: each gets a connection pool and the queue's schema,
 * and jobs spread over them.
 */
@Order(1)
class QueueShardsAutoConfigurationTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withInitializer(new TestDatabaseInitializer())
        .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JacksonAutoConfiguration.class,
                QueueAutoConfiguration.class));

    private TestDatabase b;

    private TestDatabase c;

    @BeforeEach
    void shards() {
        this.b = TestDatabase.create("ctx_shard_b");
        this.c = TestDatabase.create("ctx_shard_c");
    }

    @AfterEach
    void drop() {
        this.b.close();
        this.c.close();
    }

    @Test
    void migratesTheShardsAndSpreadsJobsOverThem() {
        this.runner.withBean(TestHandlers.SendPush.class)
            .withPropertyValues(shard("b", this.b))
            .withPropertyValues(shard("c", this.c))
            .withPropertyValues("pgqueue.workers.enabled=false", "pgqueue.shards.b.maximum-pool-size=4")
            .run(context -> {
                assertThat(context).hasNotFailed();
                PgQueue queue = context.getBean(PgQueue.class);
                assertThat(partitionsPerShard(queue)).containsOnlyKeys("main", "b", "c");
                assertThat(context.getBean(QueueShards.class).dataSources()).containsOnlyKeys("b", "c");
                QueueClient client = context.getBean(QueueClient.class);
                for (int i = 0; i < 60; i++) {
                    client.enqueue("send-push", Map.of("user", "u" + i, "file", "f"),
                            EnqueueOptions.defaults().withPartitionKey("u" + i));
                }
                client.enqueueAll(List.of(JobRequest.of("send-push", Map.of("user", "x", "file", "f"),
                        EnqueueOptions.defaults().withPartitionKey("x")), JobRequest.of("send-push",
                                Map.of("user", "y", "file", "f"), EnqueueOptions.defaults().withPartitionKey("y"))));
                await().untilAsserted(() -> assertThat(jobs(this.b) + jobs(this.c)
                        + new JdbcTemplate(queue.dataSource()).queryForObject("SELECT count(*) FROM pgqueue.job",
                                Long.class)).isEqualTo(62));
                assertThat(jobs(this.b)).isPositive();
                assertThat(jobs(this.c)).isPositive();
            });
    }

    @Test
    void aDataSourceBeanMarkedQueueShardIsAShardBesideTheApplicationsOwnDataSource() {
        this.runner.withUserConfiguration(ShardBeans.class)
            .withBean(TestHandlers.SendPush.class)
            .withPropertyValues("test.shard.url=" + this.b.jdbcUrl(), "test.shard.username=" + nonNull(this.b.user()),
                    "test.shard.password=" + nonNull(this.b.password()))
            .withPropertyValues(shard("c", this.c))
            .withPropertyValues("pgqueue.workers.enabled=false")
            .run(context -> {
                assertThat(context).hasNotFailed();
                // The shard bean is no default candidate: the application's DataSource is still auto-configured.
                assertThat(context.getBeanNamesForType(DataSource.class)).containsExactlyInAnyOrder("dataSource", "shardB");
                PgQueue queue = context.getBean(PgQueue.class);
                assertThat(queue.dataSource()).isSameAs(context.getBean("dataSource"));
                assertThat(context.getBean(QueueShards.class).dataSources()).containsOnlyKeys("c", "b");
                assertThat(partitionsPerShard(queue)).containsOnlyKeys("main", "b", "c");
                QueueClient client = context.getBean(QueueClient.class);
                for (int i = 0; i < 60; i++) {
                    client.enqueue("send-push", Map.of("user", "u" + i, "file", "f"),
                            EnqueueOptions.defaults().withPartitionKey("u" + i));
                }
                assertThat(jobs(this.b)).isPositive();
                assertThat(jobs(this.c)).isPositive();
            });
    }

    @Test
    void aShardConfiguredTwiceFailsTheStartUp() {
        this.runner.withUserConfiguration(ShardBeans.class)
            .withPropertyValues("test.shard.url=" + this.b.jdbcUrl())
            .withPropertyValues(shard("b", this.c))
            .run(context -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).rootCause()
                    .hasMessageContaining("Shard 'b' is configured twice: as DataSource bean 'shardB' and as pgqueue.shards.b");
            });
    }

    @Test
    void aPartitionCountIsKeptOnceJobsExist() {
        TestDatabase main = TestDatabase.create("ctx_main_partitions");
        try {
            ApplicationContextRunner onMain = new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JacksonAutoConfiguration.class,
                        QueueAutoConfiguration.class))
                .withBean(TestHandlers.SendPush.class)
                .withPropertyValues("spring.datasource.url=" + main.jdbcUrl(), "spring.datasource.username="
                        + nonNull(main.user()), "spring.datasource.password=" + nonNull(main.password()),
                        "pgqueue.workers.enabled=false");
            onMain.withPropertyValues("pgqueue.partitions=128").run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(context.getBean(PgQueue.class).admin().shards().partitions()).isEqualTo(128);
                context.getBean(QueueClient.class).enqueue("send-push", Map.of("user", "u", "file", "f"));
            });
            onMain.withPropertyValues("pgqueue.partitions=256").run(context -> {
                assertThat(context).hasFailed();
                FailureAnalysis analysis = new QueueConfigurationFailureAnalyzer().analyze(context.getStartupFailure());
                assertThat(analysis.getDescription()).startsWith("pgqueue could not start: ")
                    .contains("The installation records 128 partitions, not 256");
                assertThat(analysis.getAction()).contains("pgqueue.partitions");
            });
            onMain.withPropertyValues(shard("b", this.b)).run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(partitionsPerShard(context.getBean(PgQueue.class)))
                    .containsExactly(Map.entry("main", 128));
            });
        }
        finally {
            main.close();
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void theBalancerRunsFromPropertiesAndShowsInTheEndpointAndMetrics() {
        this.runner.withConfiguration(AutoConfigurations.of(QueueEndpointAutoConfiguration.class,
                QueueMetricsAutoConfiguration.class, MetricsAutoConfiguration.class))
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .withBean(TestHandlers.SendPush.class)
            .withPropertyValues(shard("b", this.b))
            .withPropertyValues("pgqueue.workers.enabled=false", "pgqueue.balancer.enabled=true",
                    "management.endpoints.web.exposure.include=queues",
                    "pgqueue.balancer.interval=200ms", "pgqueue.balancer.gini-upper=0.4", "pgqueue.balancer.gini-lower=0.2",
                    "pgqueue.balancer.affinity[0-9]=main", "pgqueue.balancer.affinity[10]=b, main")
            .run(context -> {
                assertThat(context).hasNotFailed();
                PgQueue queue = context.getBean(PgQueue.class);
                BalancerSettings settings = queue.balancer().settings();
                assertThat(settings.giniUpper()).isEqualTo(0.4);
                assertThat(settings.interval()).isEqualTo(Duration.ofMillis(200));
                assertThat(settings.allows(3, "b")).isFalse();
                assertThat(settings.allows(10, "b")).isTrue();
                assertThat(settings.allows(11, "b")).isTrue();
                MeterRegistry registry = context.getBean(MeterRegistry.class);
                await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                    assertThat(registry.get(QueueMeterNames.BALANCER_LEADER).gauge().value()).isEqualTo(1.0);
                    assertThat(registry.get(QueueMeterNames.BALANCER_GINI).gauge().value()).isNotNaN();
                });
                assertThat(registry.get(QueueMeterNames.BALANCER_MOVES).tag("reason", "DRAIN").functionCounter().count())
                    .isZero();

                QueueEndpoint endpoint = context.getBean(QueueEndpoint.class);
                Map<String, Object> balancer = (Map<String, Object>) endpoint.queues().get("balancer");
                assertThat(balancer).containsEntry("enabledHere", true).containsEntry("leadingHere", true)
                    .containsKey("lastRound").containsEntry("draining", List.of());
                assertThat(endpoint.shardAction("shards", "shard", "b", "drain", null)).containsEntry("draining", true);
                assertThat(((Map<String, Object>) endpoint.queues().get("balancer")).get("draining")).isEqualTo(List.of("b"));
                assertThatThrownBy(() -> endpoint.shardAction("shards", "shard", "x", "drain", null))
                    .hasMessageContaining("There is no shard 'x'");
                assertThatThrownBy(() -> endpoint.shardAction("shards", "shard", "b", "explode", null))
                    .hasMessageContaining("Unknown action 'explode' for a shard; use drain or undrain");
                endpoint.shardAction("shards", "shard", "b", "undrain", null);
            });
    }

    @Test
    void badBalancerSettingsFailTheStartUp() {
        this.runner.withPropertyValues("pgqueue.balancer.affinity[x-1]=b").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                .hasMessageContaining("pgqueue.balancer.affinity[x-1]").hasMessageContaining("e.g. 17 or 0-127");
        });
        this.runner.withPropertyValues("pgqueue.balancer.gini-lower=0.5").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause()
                .hasMessageContaining("Invalid value '0.5' for 'pgqueue.balancer.gini-lower'");
        });
    }

    /** A shard declared as a DataSource bean, the way docs/sharding.md shows. */
    @Configuration(proxyBeanMethods = false)
    static class ShardBeans {

        @Bean(defaultCandidate = false)
        @QueueShard("b")
        DataSource shardB(Environment environment) {
            return new DriverManagerDataSource(environment.getRequiredProperty("test.shard.url"),
                    environment.getProperty("test.shard.username", ""), environment.getProperty("test.shard.password", ""));
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void theEndpointShowsTheShardsAndMovesAPartition() {
        this.runner.withConfiguration(AutoConfigurations.of(QueueEndpointAutoConfiguration.class))
            .withBean(TestHandlers.SendPush.class)
            .withPropertyValues(shard("b", this.b))
            .withPropertyValues("pgqueue.workers.enabled=false", "management.endpoints.web.exposure.include=queues")
            .run(context -> {
                assertThat(context).hasNotFailed();
                QueueEndpoint endpoint = context.getBean(QueueEndpoint.class);
                Map<String, Object> shards = (Map<String, Object>) endpoint.queues().get("shards");
                assertThat(shards).containsEntry("sharded", true).containsEntry("partitions", 1024);
                assertThat((Map<String, Object>) shards.get("shards")).containsOnlyKeys("main", "b");
                QueueClient client = context.getBean(QueueClient.class);
                String key = keyOfPartitionZero();
                for (int i = 0; i < 20; i++) {
                    client.enqueue("send-push", Map.of("user", "u", "file", "f"), EnqueueOptions.defaults().withPartitionKey(key));
                }

                context.getBean(io.pgqueue.internal.observe.QueueStatsPoller.class).refresh();
                Map<String, Object> before = (Map<String, Object>) endpoint.queues().get("shards");
                assertThat((Map<String, Object>) ((Map<String, Object>) before.get("shards")).get("main"))
                    .containsEntry("activeJobs", 20L);

                Map<String, Object> moved = endpoint.shardAction("shards", "partitions", "0", "move", "b");

                assertThat(moved).containsEntry("from", "main").containsEntry("to", "b").containsEntry("jobsMoved", 20L)
                    .containsEntry("messagesMoved", 0L);
                assertThat(jobs(this.b)).isEqualTo(20);
                Map<String, Object> after = (Map<String, Object>) endpoint.queues().get("shards");
                assertThat((Map<String, Object>) ((Map<String, Object>) after.get("shards")).get("b"))
                    .containsEntry("partitions", 513).containsEntry("activeJobs", 20L);
                assertThatThrownBy(() -> endpoint.shardAction("shards", "partitions", "0", "move", "b"))
                    .hasMessageContaining("Partition 0 is on shard 'b' already");
                assertThatThrownBy(() -> endpoint.shardAction("shards", "partitions", "0", "split", "b"))
                    .hasMessageContaining("Unknown action 'split' for a partition; use move");
            });
    }

    private static String keyOfPartitionZero() {
        for (int i = 0;; i++) {
            if (io.pgqueue.internal.shard.PartitionHash.partitionOf("k" + i, 1024) == 0) {
                return "k" + i;
            }
        }
    }

    private static String[] shard(String name, TestDatabase database) {
        String prefix = "pgqueue.shards." + name + ".";
        return new String[] { prefix + "url=" + database.jdbcUrl(), prefix + "username=" + nonNull(database.user()),
            prefix + "password=" + nonNull(database.password()) };
    }

    private static String nonNull(String value) {
        return value == null ? "" : value;
    }

    private static long jobs(TestDatabase shard) {
        return new JdbcTemplate(shard.dataSource()).queryForObject("SELECT count(*) FROM pgqueue.job", Long.class);
    }

    /** The shards that hold partitions, with how many, as the installation's layout says. */
    private static Map<String, Integer> partitionsPerShard(PgQueue queue) {
        Map<String, Integer> partitions = new LinkedHashMap<>();
        queue.admin().shards().shards().stream().filter(shard -> shard.partitions() > 0)
            .forEach(shard -> partitions.put(shard.name(), shard.partitions()));
        return partitions;
    }
}
