package io.pgqueue.test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.test.context.TestContextAnnotationUtils;

/**
 * Applies {@link AutoConfigurePgQueueTest} to a test's application context: the fresh database, no
 * background workers and the mode.
 */
class QueueTestContextCustomizerFactory implements ContextCustomizerFactory {

    @Override
    public ContextCustomizer createContextCustomizer(Class<?> testClass,
            List<ContextConfigurationAttributes> configAttributes) {
        AutoConfigurePgQueueTest settings = TestContextAnnotationUtils.findMergedAnnotation(testClass,
                AutoConfigurePgQueueTest.class);
        return settings == null ? null : new Customizer(settings.mode(), settings.database());
    }

    /** Equal for equal settings, so that test classes with the same settings share a cached context. */
    private record Customizer(QueueTestMode mode, boolean database) implements ContextCustomizer {

        @Override
        public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration config) {
            Map<String, Object> properties = new HashMap<>();
            properties.put("pgqueue.workers.enabled", "false");
            properties.put(QueueTestAutoConfiguration.MODE_PROPERTY, this.mode.name());
            if (this.database) {
                TestPostgres server = TestPostgres.server();
                String name = server.createDatabase("pgqueue_test");
                properties.put("spring.datasource.url", server.jdbcUrl(name));
                properties.put(QueueTestAutoConfiguration.DATABASE_PROPERTY, name);
                if (server.user() != null) {
                    properties.put("spring.datasource.username", server.user());
                }
                if (server.password() != null) {
                    properties.put("spring.datasource.password", server.password());
                }
                // Registered first, so destroyed last: after the queue and the DataSource closed.
                ((DefaultListableBeanFactory) context.getBeanFactory()).registerDisposableBean("pgqueueTestDatabase",
                        () -> server.dropDatabase(name));
            }
            context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("pgqueueTest", properties));
        }
    }
}
