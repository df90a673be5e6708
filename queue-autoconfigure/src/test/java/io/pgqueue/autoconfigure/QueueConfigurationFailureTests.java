package io.pgqueue.autoconfigure;

import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Misconfiguration fails the start-up with a report that says what to fix.
 */
public class QueueConfigurationFailureTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withInitializer(new TestDatabaseInitializer())
        .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JacksonAutoConfiguration.class,
                QueueAutoConfiguration.class));

    @Test
    void twoBeansWithOneTaskName() {
        assertFailure(this.runner.withBean(TestHandlers.SendPush.class).withBean(TestHandlers.AnotherSendPush.class),
                "Task 'send-push' is declared by two beans", "unique name");
    }

    @Test
    void aTaskBeanThatIsNoHandler() {
        assertFailure(this.runner.withBean(TestHandlers.NotAHandler.class),
                "implements neither io.pgqueue.TaskHandler nor io.pgqueue.ChunkHandler", "Implement TaskHandler<YourPayload>");
    }

    @Test
    void aHandlerWithoutPayloadType() {
        assertFailure(this.runner.withBean(TestHandlers.RawHandler.class), "does not declare a concrete payload type",
                "implements TaskHandler<SendPushRequest>");
    }

    @Test
    void anInvalidTaskName() {
        assertFailure(this.runner.withBean(TestHandlers.BadName.class), "Task name 'bad name!' is invalid",
                "stable task name");
    }

    @Test
    void anUnparsableDuration() {
        assertFailure(this.runner.withBean(TestHandlers.BadTimeout.class), "'soon' is not a duration",
                "pgqueue.tasks.bad-timeout.timeout");
    }

    @Test
    void invalidSpel() {
        assertFailure(this.runner.withBean(TestHandlers.BadSpel.class), "is not valid SpEL", "evaluated against the payload");
    }

    @Test
    void mergeWithoutMerger() {
        assertFailure(this.runner.withBean(TestHandlers.MergeWithoutMerger.class), "does not implement DedupPolicy.PayloadMerger",
                "Implement DedupPolicy.PayloadMerger");
    }

    @Test
    void customBackoffWithoutPolicyBean() {
        assertFailure(this.runner.withBean(TestHandlers.CustomWithoutBean.class), "is not the name of a RetryPolicy bean",
                "pgqueue.tasks.custom-without-bean.retry.policy-bean");
    }

    @Test
    void invalidTaskOverride() {
        assertFailure(this.runner.withBean(TestHandlers.SendPush.class).withPropertyValues("pgqueue.tasks.send-push.concurrency=0"),
                "invalid value '0' for 'pgqueue.tasks.send-push.concurrency': must be at least 1",
                "Fix the value on @QueueTask or under 'pgqueue.tasks.send-push.concurrency'");
    }

    @Test
    void anUnreadableRateLimit() {
        assertFailure(this.runner.withBean(TestHandlers.SendPush.class).withPropertyValues("pgqueue.tasks.send-push.rate=fast"),
                "invalid value 'fast' for 'pgqueue.tasks.send-push.rate': must be permits/period, e.g. 100/1s",
                "Fix the value on @QueueTask or under 'pgqueue.tasks.send-push.rate'");
    }

    @Test
    void aBurstLargerThanTheRate() {
        assertFailure(this.runner.withBean(TestHandlers.SendPush.class).withPropertyValues(
                "pgqueue.tasks.send-push.rate=10/1s", "pgqueue.tasks.send-push.rate-burst=20"),
                "invalid value '20' for 'pgqueue.tasks.send-push.rate-burst': must be between 1 and the permits per period (10)",
                "under 'pgqueue.tasks.send-push.rate-burst'");
    }

    @Test
    void aNegativeGlobalConcurrency() {
        assertFailure(this.runner.withBean(TestHandlers.SendPush.class).withPropertyValues(
                "pgqueue.tasks.send-push.global-concurrency=-1"),
                "invalid value '-1' for 'pgqueue.tasks.send-push.global-concurrency': must be at least 1, or 0 for no limit",
                "under 'pgqueue.tasks.send-push.global-concurrency'");
    }

    @Test
    void aConcurrencyPerGroupOfASequence() {
        assertFailure(this.runner.withBean(TestHandlers.SendPush.class).withPropertyValues(
                "pgqueue.tasks.send-push.groups=sequence", "pgqueue.tasks.send-push.group-concurrency=3"),
                "group-concurrency 3 applies to fair groups; a sequence runs one job of a group at a time",
                "under 'pgqueue.tasks.send-push.group-concurrency'");
    }

    @Test
    void anUnreadableCronExpressionOrZone() {
        assertFailure(this.runner.withBean(TestHandlers.SendPush.class).withPropertyValues("pgqueue.tasks.send-push.cron=nightly"),
                "invalid value 'nightly' for 'pgqueue.tasks.send-push.cron': is not a cron expression of six fields",
                "under 'pgqueue.tasks.send-push.cron'");
    }

    @Test
    void heartbeatNotShorterThanTheLease() {
        assertFailure(this.runner.withPropertyValues("pgqueue.lease.duration=10s", "pgqueue.lease.heartbeat-interval=10s"),
                "Invalid value '10s' for 'pgqueue.lease.heartbeat-interval': must be shorter than pgqueue.lease.duration",
                "Update 'pgqueue.lease.heartbeat-interval'");
        // Values are shown as written, not normalised (60s, not 1m).
        assertFailure(this.runner.withPropertyValues("pgqueue.lease.duration=60s", "pgqueue.lease.heartbeat-interval=60s"),
                "Invalid value '60s' for 'pgqueue.lease.heartbeat-interval': must be shorter than pgqueue.lease.duration "
                        + "(60s)", "Update 'pgqueue.lease.heartbeat-interval'");
    }

    @Test
    void invalidSchema() {
        assertFailure(this.runner.withPropertyValues("pgqueue.schema=Queue-Jobs"),
                "Invalid value 'Queue-Jobs' for 'pgqueue.schema'", "Update 'pgqueue.schema'");
    }

    @Test
    void nonPositivePollInterval() {
        assertFailure(this.runner.withPropertyValues("pgqueue.poll-interval=0s"), "'pgqueue.poll-interval': must be positive",
                "Update 'pgqueue.poll-interval'");
    }

    @Test
    void negativePrefetch() {
        assertFailure(this.runner.withPropertyValues("pgqueue.pools.fast.max-prefetch=-1"),
                "'pgqueue.pools.fast.max-prefetch': must not be negative", "Update 'pgqueue.pools.fast.max-prefetch'");
    }

    @Test
    void nonPositivePrefetchBudget() {
        assertFailure(this.runner.withPropertyValues("pgqueue.pools.fast.max-prefetch-bytes=0"),
                "Invalid value '0' for 'pgqueue.pools.fast.max-prefetch-bytes': must be positive",
                "Update 'pgqueue.pools.fast.max-prefetch-bytes'");
    }

    @Test
    void aUniqueDedupPolicyWithoutAPeriodOrWithAStateThatCannotHoldAKey() {
        assertFailure(this.runner.withBean(TestHandlers.SendPush.class)
            .withPropertyValues("pgqueue.tasks.send-push.dedup-policy=unique"),
                "uses the dedup policy UNIQUE without a period", "'pgqueue.tasks.send-push.unique-period'");
        assertFailure(this.runner.withBean(TestHandlers.SendPush.class)
            .withPropertyValues("pgqueue.tasks.send-push.dedup-policy=unique", "pgqueue.tasks.send-push.unique-period=10m",
                    "pgqueue.tasks.send-push.unique-states=completed,running"),
                "RUNNING is not one: active jobs hold their key always", "'pgqueue.tasks.send-push.unique-states'");
        assertFailure(this.runner.withBean(TestHandlers.SendPush.class)
            .withPropertyValues("pgqueue.tasks.send-push.unique-period=10m"),
                "applies to the dedup policy UNIQUE", "'pgqueue.tasks.send-push.unique-period'");
    }

    @Test
    void aChunkSizeThatCannotWork() {
        assertFailure(this.runner.withBean(TestHandlers.IndexPushes.class).withPropertyValues("pgqueue.tasks.index-push.chunk-size=0"),
                "chunk-size 0 must be at least 1 for a ChunkHandler", "'pgqueue.tasks.index-push.chunk-size'");
        assertFailure(this.runner.withBean(TestHandlers.IndexPushes.class).withPropertyValues("pgqueue.tasks.index-push.chunk-size=9"),
                "chunk-size 9 must be at most the task's concurrency (8)", "'pgqueue.tasks.index-push.chunk-size'");
        assertFailure(this.runner.withBean(TestHandlers.SendPush.class).withPropertyValues("pgqueue.tasks.send-push.chunk-size=5"),
                "chunk-size 5 applies to a ChunkHandler only", "'pgqueue.tasks.send-push.chunk-size'");
    }

    @Test
    void theSecurityContextWithoutAUserService() {
        assertFailure(this.runner.withPropertyValues("pgqueue.interceptors.security-context=true"),
                "pgqueue.interceptors.security-context=true needs one UserDetailsService bean", "Declare the UserDetailsService");
    }

    @Test
    void aBlankMdcKeyToCarry() {
        assertFailure(this.runner.withPropertyValues("pgqueue.interceptors.carried-mdc-keys[0]=requestId",
                "pgqueue.interceptors.carried-mdc-keys[1]= "),
                "for 'pgqueue.interceptors.carried-mdc-keys': an MDC key must not be blank",
                "Update 'pgqueue.interceptors.carried-mdc-keys'");
    }

    @Test
    void nonPositiveBatchSize() {
        assertFailure(this.runner.withPropertyValues("pgqueue.batch.claim=0"),
                "Invalid value '0' for 'pgqueue.batch.claim': must be positive", "Update 'pgqueue.batch.claim'");
    }

    @Test
    void negativeRetention() {
        assertFailure(this.runner.withPropertyValues("pgqueue.retention.failed=-1h"),
                "Invalid value '-1h' for 'pgqueue.retention.failed': must not be negative",
                "Update 'pgqueue.retention.failed'");
    }

    @Test
    void nonPositiveStatsInterval() {
        assertFailure(this.runner.withPropertyValues("pgqueue.stats.interval=0ms"),
                "Invalid value '0ms' for 'pgqueue.stats.interval': must be positive", "Update 'pgqueue.stats.interval'");
    }

    @Test
    void aMistypedTaskSetting() {
        assertFailure(this.runner.withBean(TestHandlers.SendPush.class)
            .withPropertyValues("pgqueue.tasks.send-push.concurency=3"),
                "'pgqueue.tasks.send-push.concurency' is not a task setting; did you mean "
                        + "'pgqueue.tasks.send-push.concurrency'?", "The settings of a task are pool, concurrency");
        assertFailure(this.runner.withPropertyValues("pgqueue.tasks.remote.retry.max-dealy=1m"),
                "did you mean 'pgqueue.tasks.remote.retry.max-delay'?", "Fix the key");
    }

    @Test
    void transactionPoolingWithSettingsThatCannotWorkThroughIt() {
        assertFailure(this.runner.withPropertyValues("pgqueue.connection-pooling=TRANSACTION"),
                "pgqueue.connection-pooling=TRANSACTION, but LISTEN/NOTIFY needs a session",
                "Set pgqueue.notifications.enabled=false");
        assertFailure(this.runner.withPropertyValues("pgqueue.connection-pooling=TRANSACTION",
                "pgqueue.notifications.enabled=false"),
                "names a server-side prepared statement after 5 runs of a statement",
                "Add prepareThreshold=0 to the JDBC URL");
        this.runner.withPropertyValues("pgqueue.connection-pooling=TRANSACTION", "pgqueue.notifications.enabled=false",
                "spring.datasource.hikari.data-source-properties.prepareThreshold=0")
            .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void anEncryptedTaskWithoutAKeyOrAKeyThatCannotWork() {
        assertFailure(this.runner.withPropertyValues("pgqueue.tasks.charge.encrypted=true"),
                "Invalid value 'true' for 'pgqueue.tasks.charge.encrypted': needs a key to encrypt with: set "
                        + "pgqueue.encryption.keys", "Update 'pgqueue.tasks.charge.encrypted'");
        assertFailure(this.runner.withPropertyValues("pgqueue.encryption.keys.k1=c2hvcnQ="),
                "Invalid value '(not shown)' for 'pgqueue.encryption.keys.k1': must be 16, 24 or 32 bytes",
                "Update 'pgqueue.encryption.keys.k1'");
        assertFailure(this.runner.withPropertyValues("pgqueue.encryption.keys.k1=c2hvcnQ=c2hvcnQ=",
                "pgqueue.encryption.keys.k2=MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="),
                "for 'pgqueue.encryption.keys.k1': must be base64", "Update 'pgqueue.encryption.keys.k1'");
        assertFailure(this.runner.withPropertyValues("pgqueue.encryption.keys.k1=MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
                "pgqueue.encryption.key=k9"),
                "Invalid value 'k9' for 'pgqueue.encryption.key': must be one of the configured keys [k1]",
                "Update 'pgqueue.encryption.key'");
    }

    @Test
    void workersOnASchemaThatWasNotMigrated() {
        // The schema is left to separate tooling, which has not run: the workers must not start
        // and then fail every claim.
        assertFailure(this.runner.withBean(TestHandlers.SendPush.class).withPropertyValues("pgqueue.flyway.enabled=false",
                "pgqueue.schema=never_migrated"),
                "The queue schema 'never_migrated' is not migrated to version 32 (missing: function never_migrated.claim_jobs(",
                "apply the migrations in classpath:io/pgqueue/db/migration to schema 'never_migrated'");
    }

    @Test
    void aShardWithoutAUrl() {
        assertFailure(this.runner.withPropertyValues("pgqueue.shards.b.username=postgres"),
                "Shard 'b' has no database URL", "Set pgqueue.shards.b.url");
    }

    @Test
    void aShardNamedLikeTheMainOne() {
        assertFailure(this.runner.withPropertyValues("pgqueue.shards.main.url=jdbc:postgresql://localhost/x"),
                "'main' cannot name a shard", "other than 'main'");
    }

    @Test
    void aPartitionCountOutOfRange() {
        assertFailure(this.runner.withPropertyValues("pgqueue.partitions=0"), "Invalid value '0' for 'pgqueue.partitions'",
                "Update 'pgqueue.partitions'");
    }

    private static void assertFailure(ApplicationContextRunner runner, String description, String action) {
        runner.run(context -> {
            assertThat(context).hasFailed();
            assertAnalysis(context.getStartupFailure(), description, action);
        });
    }

    /** Checks the report the failure analyzer makes of a start-up failure. */
    public static void assertAnalysis(Throwable failure, String description, String action) {
        FailureAnalysis analysis = new QueueConfigurationFailureAnalyzer().analyze(failure);
        assertThat(analysis).as("failure analysis of %s", failure).isNotNull();
        assertThat(analysis.getDescription()).startsWith("pgqueue could not start: ").contains(description);
        assertThat(analysis.getAction()).contains(action);
    }
}
