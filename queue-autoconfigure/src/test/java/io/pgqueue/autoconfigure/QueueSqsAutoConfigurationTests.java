package io.pgqueue.autoconfigure;

import io.pgqueue.autoconfigure.sqs.QueueSqsAutoConfiguration;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.ServletRegistrationBean;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The SQS endpoint is registered only when asked for in a servlet application, and refuses to
 * start open to anyone unless told to.
 */
class QueueSqsAutoConfigurationTests {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
        .withInitializer(new TestDatabaseInitializer())
        .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JacksonAutoConfiguration.class,
                QueueAutoConfiguration.class, QueueSqsAutoConfiguration.class))
        .withPropertyValues("pgqueue.workers.enabled=false");

    @Test
    void messageQueuesAreABeanAndTheEndpointIsOffByDefault() {
        this.runner.run(context -> {
            assertThat(context).hasSingleBean(MessageQueues.class);
            assertThat(context).doesNotHaveBean("queueSqsServlet");
        });
    }

    @Test
    void theEndpointIsAServletAtItsPathWithAsyncSupport() {
        this.runner.withPropertyValues("pgqueue.sqs.enabled=true", "pgqueue.sqs.path=/api/sqs/",
                "pgqueue.sqs.credentials[0].access-key-id=app", "pgqueue.sqs.credentials[0].secret-access-key=secret")
            .run(context -> {
                assertThat(context).hasNotFailed();
                ServletRegistrationBean<?> registration = context.getBean("queueSqsServlet", ServletRegistrationBean.class);
                assertThat(registration.getUrlMappings()).containsExactlyInAnyOrder("/api/sqs", "/api/sqs/*");
                assertThat(registration.isAsyncSupported()).isTrue();
            });
    }

    @Test
    void notInANonWebApplication() {
        new ApplicationContextRunner().withInitializer(new TestDatabaseInitializer())
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JacksonAutoConfiguration.class,
                    QueueAutoConfiguration.class, QueueSqsAutoConfiguration.class))
            .withPropertyValues("pgqueue.workers.enabled=false", "pgqueue.sqs.enabled=true")
            .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("queueSqsServlet"));
    }

    @Test
    void noCredentialsAndNoAnonymousAccessStopTheStartUp() {
        assertFailure(this.runner.withPropertyValues("pgqueue.sqs.enabled=true"), "no access key is configured",
                "pgqueue.sqs.credentials[0].access-key-id");
    }

    @Test
    void anonymousAccessIsTakenWhenAskedFor() {
        this.runner.withPropertyValues("pgqueue.sqs.enabled=true", "pgqueue.sqs.allow-anonymous=true")
            .run(context -> assertThat(context).hasNotFailed().hasBean("queueSqsServlet"));
    }

    @Test
    void aCredentialWithoutSecretStopsTheStartUp() {
        assertFailure(this.runner.withPropertyValues("pgqueue.sqs.enabled=true",
                "pgqueue.sqs.credentials[0].access-key-id=app"), "pgqueue.sqs.credentials[0] lacks",
                "pgqueue.sqs.credentials[0].secret-access-key");
    }

    @Test
    void theRootPathIsRefused() {
        assertFailure(this.runner.withPropertyValues("pgqueue.sqs.enabled=true", "pgqueue.sqs.allow-anonymous=true",
                "pgqueue.sqs.path=/"), "is not a path below the root", "such as /sqs");
    }

    static void assertFailure(WebApplicationContextRunner runner, String description, String action) {
        runner.run(context -> {
            assertThat(context).hasFailed();
            QueueConfigurationFailureTests.assertAnalysis(context.getStartupFailure(), description, action);
        });
    }
}
