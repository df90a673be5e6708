package io.pgqueue;

import java.time.Duration;

import io.pgqueue.worker.BatchSizes;
import io.pgqueue.worker.PoolSettings;
import io.pgqueue.worker.WorkerSettings;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The core names the setting a refused value belongs to, as the starter's properties name it.
 */
class InvalidSettingExceptionTests {

    @Test
    void settingsRecordsNameTheSettingThatIsWrong() {
        assertThatThrownBy(() -> WorkerSettings.builder("n").lease(Duration.ofSeconds(5))
            .heartbeatInterval(Duration.ofSeconds(5)).build())
            .isInstanceOfSatisfying(InvalidSettingException.class, ex -> {
                assertThat(ex.setting()).isEqualTo("lease.heartbeat-interval");
                assertThat(ex.value()).isEqualTo(Duration.ofSeconds(5));
                assertThat(ex.rule("pgqueue.")).startsWith("must be shorter than pgqueue.lease.duration (5s)");
                assertThat(ex.getMessage())
                    .startsWith("Invalid value '5s' for 'lease.heartbeat-interval': must be shorter than lease.duration");
            });
        assertThatThrownBy(() -> new BatchSizes(1, 0, 1, 1)).isInstanceOfSatisfying(InvalidSettingException.class,
                ex -> assertThat(ex.setting()).isEqualTo("batch.heartbeat"));
        assertThatThrownBy(() -> new Retention(Duration.ZERO, Duration.ofDays(-1), Duration.ZERO))
            .isInstanceOfSatisfying(InvalidSettingException.class,
                    ex -> assertThat(ex.setting()).isEqualTo("retention.failed"));
        assertThatThrownBy(() -> QueueConfig.defaults().withSchema("Bad-Name"))
            .isInstanceOfSatisfying(InvalidSettingException.class, ex -> assertThat(ex.setting()).isEqualTo("schema"));
        assertThatThrownBy(() -> PgQueue.builder(new org.springframework.jdbc.datasource.SimpleDriverDataSource())
            .statsInterval(Duration.ZERO)).isInstanceOfSatisfying(InvalidSettingException.class,
                    ex -> assertThat(ex.setting()).isEqualTo("stats.interval"));
    }

    @Test
    void aSettingOfAGroupIsNamedWithinIt() {
        InvalidSettingException ex = catchInvalid(() -> new PoolSettings(-1, Duration.ZERO)).within("pools.fast");

        assertThat(ex.setting()).isEqualTo("pools.fast.max-prefetch");
        assertThat(ex.getMessage()).isEqualTo("Invalid value '-1' for 'pools.fast.max-prefetch': must not be negative");
    }

    @Test
    void durationsAreShownAsTheyAreWritten() {
        assertThat(InvalidSettingException.display(Duration.ofSeconds(10))).isEqualTo("10s");
        assertThat(InvalidSettingException.display(Duration.ofSeconds(60))).isEqualTo("60s");
        assertThat(InvalidSettingException.display(Duration.ofMinutes(5))).isEqualTo("300s");
        assertThat(InvalidSettingException.display(Duration.ofMillis(1500))).isEqualTo("1500ms");
        assertThat(InvalidSettingException.display(Duration.ofHours(-1))).isEqualTo("-1h");
        assertThat(InvalidSettingException.display(Duration.ofDays(7))).isEqualTo("7d");
        assertThat(InvalidSettingException.display(Duration.ZERO)).isEqualTo("0s");
        assertThat(InvalidSettingException.display(Duration.ofNanos(1500))).isEqualTo("PT0.0000015S");
        assertThat(InvalidSettingException.display(42)).isEqualTo(42);
    }

    private static InvalidSettingException catchInvalid(Runnable build) {
        try {
            build.run();
        }
        catch (InvalidSettingException ex) {
            return ex;
        }
        throw new AssertionError("no InvalidSettingException");
    }
}
