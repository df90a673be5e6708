package io.pgqueue.testing;

import java.util.HashMap;
import java.util.Map;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;

/**
 * Gives a Spring application context its own fresh database: sets {@code spring.datasource.*} and
 * drops the database when the context closes. The drop is registered as the first disposable bean,
 * so it runs last, after the DataSource and every queue component have shut down. Works for
 * {@code @SpringBootTest} ({@code @ContextConfiguration(initializers = ...)}) and
 * {@code ApplicationContextRunner.withInitializer(...)}.
 */
public class TestDatabaseInitializer implements ApplicationContextInitializer<ConfigurableApplicationContext> {

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        TestDatabase database = TestDatabase.create("pgqueue_ctx");
        Map<String, Object> properties = new HashMap<>();
        properties.put("spring.datasource.url", database.jdbcUrl());
        if (database.user() != null) {
            properties.put("spring.datasource.username", database.user());
        }
        if (database.password() != null) {
            properties.put("spring.datasource.password", database.password());
        }
        context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("pgqueueTestDatabase", properties));
        ((DefaultListableBeanFactory) context.getBeanFactory()).registerDisposableBean("pgqueueTestDatabase",
                database::close);
    }
}
