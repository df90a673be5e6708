package io.pgqueue.autoconfigure.sqs;

import java.time.Clock;
import java.util.HashMap;
import java.util.Map;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.pgqueue.autoconfigure.QueueAutoConfiguration;
import io.pgqueue.autoconfigure.QueueConfigurationException;
import io.pgqueue.message.MessageQueues;
import jakarta.servlet.http.HttpServlet;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;

/**
 * Serves the Amazon SQS API ({@link MessageQueues} over HTTP, both wire protocols) at
 * {@code pgqueue.sqs.path} when {@code pgqueue.sqs.enabled=true} in a servlet web application.
 * The endpoint is a servlet of its own, apart from Spring MVC's dispatcher and error handling.
 */
@AutoConfiguration(after = QueueAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({ HttpServlet.class, ServletRegistrationBean.class })
@ConditionalOnBean(MessageQueues.class)
@ConditionalOnBooleanProperty("pgqueue.sqs.enabled")
@EnableConfigurationProperties(QueueSqsProperties.class)
public final class QueueSqsAutoConfiguration {

    /** Checks the credentials, permissions and quotas: a bad one stops the start-up before a declared queue is written. */
    @Bean
    SqsAccess queueSqsAccess(QueueSqsProperties properties) {
        path(properties.getPath());
        secrets(properties);
        return SqsAccess.of(properties, System::nanoTime);
    }

    @Bean
    SqsDeclaredQueues queueSqsDeclaredQueues(MessageQueues messages, QueueSqsProperties properties, SqsAccess access) {
        return new SqsDeclaredQueues(messages, properties.getQueues());
    }

    @Bean
    @ConditionalOnMissingBean(name = "queueSqsServlet")
    ServletRegistrationBean<HttpServlet> queueSqsServlet(MessageQueues messages, QueueSqsProperties properties,
            SqsAccess access, ObjectProvider<MeterRegistry> registry) {
        String path = path(properties.getPath());
        Map<String, String> secrets = secrets(properties);
        if (secrets.isEmpty()) {
            LoggerFactory.getLogger(QueueSqsAutoConfiguration.class).warn("The SQS API at {} serves every request "
                    + "without checking signatures (pgqueue.sqs.allow-anonymous=true and no credentials)", path);
        }
        SigV4Verifier verifier = secrets.isEmpty() ? null
                : new SigV4Verifier(secrets::get, "sqs", Clock.systemUTC());
        SqsMetrics metrics = new SqsMetrics(registry.getIfAvailable(CompositeMeterRegistry::new));
        SqsActions actions = new SqsActions(messages, properties.getAccountId(), properties.getRegion(),
                access, metrics);
        String baseUrl = properties.getBaseUrl() == null ? null : properties.getBaseUrl().replaceAll("/+$", "");
        ServletRegistrationBean<HttpServlet> registration = new ServletRegistrationBean<>(
                new SqsServlet(actions, metrics, verifier, properties.isAllowAnonymous(), baseUrl), path, path + "/*");
        registration.setName("pgqueueSqs");
        registration.setAsyncSupported(true);
        registration.setLoadOnStartup(1);
        return registration;
    }

    private static String path(String configured) {
        return QueueConfigurationException.requirePathBelowRoot("pgqueue.sqs.path", configured,
                "a path such as /sqs (the endpoint gets its own servlet, so it cannot be /)");
    }

    private static Map<String, String> secrets(QueueSqsProperties properties) {
        Map<String, String> secrets = new HashMap<>();
        for (int i = 0; i < properties.getCredentials().size(); i++) {
            QueueSqsProperties.Credential credential = properties.getCredentials().get(i);
            if (credential.getAccessKeyId() == null || credential.getAccessKeyId().isBlank()
                    || credential.getSecretAccessKey() == null || credential.getSecretAccessKey().isEmpty()) {
                throw new QueueConfigurationException("pgqueue.sqs.credentials[" + i + "] lacks an access key id or a "
                        + "secret access key", "Set both pgqueue.sqs.credentials[" + i + "].access-key-id and "
                                + "pgqueue.sqs.credentials[" + i + "].secret-access-key");
            }
            if (secrets.put(credential.getAccessKeyId(), credential.getSecretAccessKey()) != null) {
                throw new QueueConfigurationException("pgqueue.sqs.credentials names access key "
                        + credential.getAccessKeyId() + " twice", "Configure each access key once");
            }
        }
        if (secrets.isEmpty() && !properties.isAllowAnonymous()) {
            throw new QueueConfigurationException("pgqueue.sqs.enabled=true serves the SQS API, but no access key is "
                    + "configured and anonymous access is off",
                    "Configure pgqueue.sqs.credentials[0].access-key-id and pgqueue.sqs.credentials[0].secret-access-key "
                            + "(the keys clients sign with), or set pgqueue.sqs.allow-anonymous=true to serve every request");
        }
        return secrets;
    }
}
