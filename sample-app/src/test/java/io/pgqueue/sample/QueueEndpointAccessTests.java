package io.pgqueue.sample;

import java.util.List;

import io.pgqueue.autoconfigure.QueueAutoConfiguration;
import io.pgqueue.autoconfigure.QueueEndpointAutoConfiguration;
import io.pgqueue.autoconfigure.QueueEndpointWebExtension;
import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.OperationType;
import org.springframework.boot.actuate.endpoint.web.ExposableWebEndpoint;
import org.springframework.boot.actuate.endpoint.web.WebEndpointsSupplier;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The queues endpoint over HTTP is read-only unless the application opens its write operations,
 * and then, without Spring Security, pgqueue says at start-up that they are open to anyone.
 */
@ExtendWith(OutputCaptureExtension.class)
class QueueEndpointAccessTests {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
        .withInitializer(new TestDatabaseInitializer())
        .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JacksonAutoConfiguration.class,
                QueueAutoConfiguration.class, QueueEndpointAutoConfiguration.class, EndpointAutoConfiguration.class,
                WebEndpointAutoConfiguration.class))
        .withPropertyValues("pgqueue.workers.enabled=false", "management.endpoints.web.exposure.include=queues");

    @Test
    void writeOperationsAreOffByDefault(CapturedOutput output) {
        this.runner.run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(QueueEndpointWebExtension.class);
            assertThat(operations(context.getBean(WebEndpointsSupplier.class))).containsOnly(OperationType.READ);
        });
        assertThat(output).doesNotContain("write operations");
    }

    @Test
    void openedWriteOperationsWithoutSecurityAreWarnedAbout(CapturedOutput output) {
        // As an application without Spring Security (the sample has it).
        this.runner.withClassLoader(new FilteredClassLoader("org.springframework.security"))
            .withPropertyValues("management.endpoint.queues.access=UNRESTRICTED").run(context -> {
                assertThat(context).hasNotFailed();
                assertThat(operations(context.getBean(WebEndpointsSupplier.class))).contains(OperationType.WRITE);
            });
        assertThat(output).contains("The queues endpoint's write operations", "has no Spring Security",
                "management.endpoint.queues.access=read-only", "schedule (which enqueues jobs)", "partition moves");
    }

    private static List<OperationType> operations(WebEndpointsSupplier endpoints) {
        ExposableWebEndpoint queues = endpoints.getEndpoints().stream()
            .filter(endpoint -> endpoint.getEndpointId().equals(EndpointId.of("queues")))
            .findFirst().orElseThrow();
        return queues.getOperations().stream().map(operation -> operation.getType()).toList();
    }
}
