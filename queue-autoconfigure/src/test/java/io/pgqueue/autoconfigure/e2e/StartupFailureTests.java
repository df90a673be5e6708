package io.pgqueue.autoconfigure.e2e;

import io.pgqueue.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Isolated;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A misconfigured application fails fast, and Spring Boot prints pgqueue's failure analysis
 * (registered in META-INF/spring.factories) instead of a stack trace.
 */
@ExtendWith(OutputCaptureExtension.class)
@Isolated
class StartupFailureTests {

    @Test
    void printsWhatToFix(CapturedOutput output) {
        try (TestDatabase database = TestDatabase.create("pgqueue_fail")) {
            assertThatThrownBy(() -> new SpringApplicationBuilder(E2eApplication.class).web(WebApplicationType.NONE)
                .properties("spring.datasource.url=" + database.jdbcUrl(), "pgqueue.lease.duration=30s",
                        "pgqueue.lease.heartbeat-interval=1m")
                .run()).isNotNull();

            assertThat(output).contains("APPLICATION FAILED TO START")
                .contains("pgqueue could not start: Invalid value '1m' for 'pgqueue.lease.heartbeat-interval': "
                        + "must be shorter than pgqueue.lease.duration (30s)")
                .contains("Update 'pgqueue.lease.heartbeat-interval' in your application configuration.");
        }
    }
}
