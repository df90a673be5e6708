package io.pgqueue.autoconfigure.console;

import io.pgqueue.autoconfigure.QueueAutoConfiguration;
import io.pgqueue.autoconfigure.QueueConfigurationFailureTests;
import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console is served in a servlet application unless turned off, and a path that is not below
 * the root stops the start with what to fix.
 */
class QueueConsoleAutoConfigurationTests {

    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
        .withInitializer(new TestDatabaseInitializer())
        .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, JacksonAutoConfiguration.class,
                QueueAutoConfiguration.class, QueueConsoleAutoConfiguration.class))
        .withPropertyValues("pgqueue.workers.enabled=false");

    @Test
    void servedByDefaultWithItsHistory() {
        this.runner.run(context -> assertThat(context).hasNotFailed().hasBean("pgqueueConsoleRoutes")
            .hasSingleBean(ConsoleHistory.class)
            .doesNotHaveBean(QueueConsoleAutoConfiguration.SECURITY_CHAIN));
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
