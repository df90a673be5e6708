package io.pgqueue.autoconfigure.console;

import java.util.List;
import java.util.Optional;

import io.pgqueue.autoconfigure.QueueAutoConfiguration;
import io.pgqueue.autoconfigure.QueueConfigurationFailureTests;
import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;
import org.springframework.web.util.ServletRequestPathUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console is served in a servlet application unless turned off (without Spring Security only
 * when allowed unauthenticated), and a path that is not below the root stops the start with what to fix.
 */
class QueueConsoleAutoConfigurationTests {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
        .withInitializer(new TestDatabaseInitializer())
        .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JacksonAutoConfiguration.class,
                QueueAutoConfiguration.class, QueueConsoleAutoConfiguration.class))
        .withPropertyValues("pgqueue.workers.enabled=false");

    @Test
    void registeredByDefault() {
        this.runner.run(context -> assertThat(context).hasNotFailed().hasBean("pgqueueConsoleRoutes")
            .doesNotHaveBean(QueueConsoleAutoConfiguration.SECURITY_CHAIN));
    }

    @Test
    void withoutSpringSecurityItIsServedOnlyWhenAllowedUnauthenticated() {
        this.runner.run(context -> assertThat(route(context, "/pgqueue/api/overview")).as("not allowed").isEmpty());
        this.runner.withPropertyValues("pgqueue.console.allow-unauthenticated=true")
            .run(context -> assertThat(route(context, "/pgqueue/api/overview")).as("allowed").isPresent());
    }

    @SuppressWarnings("unchecked")
    private static Optional<HandlerFunction<ServerResponse>> route(ApplicationContext context, String path) {
        MockHttpServletRequest request = new MockHttpServletRequest("GET", path);
        ServletRequestPathUtils.parseAndCache(request);
        return context.getBean("pgqueueConsoleRoutes", RouterFunction.class)
            .route(ServerRequest.create(request, List.of()));
    }

    @Test
    void turnedOff() {
        this.runner.withPropertyValues("pgqueue.console.enabled=false")
            .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("pgqueueConsoleRoutes"));
    }

    @Test
    void notInANonWebApplication() {
        new ApplicationContextRunner().withInitializer(new TestDatabaseInitializer())
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JacksonAutoConfiguration.class,
                    QueueAutoConfiguration.class, QueueConsoleAutoConfiguration.class))
            .withPropertyValues("pgqueue.workers.enabled=false")
            .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("pgqueueConsoleRoutes"));
    }

    @Test
    void theRootPathIsRefused() {
        for (String path : new String[] { "/", "", "pgqueue", "/a b" }) {
            this.runner.withPropertyValues("pgqueue.console.path=" + path).run(context -> {
                assertThat(context).hasFailed();
                QueueConfigurationFailureTests.assertAnalysis(context.getStartupFailure(), "is not a path below the root",
                        "such as /pgqueue");
            });
        }
    }
}
