package io.pgqueue.autoconfigure.console;

import java.util.Optional;

import io.pgqueue.PayloadEncryption;
import io.pgqueue.QueueAdmin;
import io.pgqueue.autoconfigure.EncryptedPayloads;
import io.pgqueue.autoconfigure.LocalDeadlineMisses;
import io.pgqueue.autoconfigure.QueueAutoConfiguration;
import io.pgqueue.autoconfigure.QueueConfigurationException;
import io.pgqueue.autoconfigure.QueueEndpointAutoConfiguration;
import io.pgqueue.autoconfigure.QueueProperties;
import io.pgqueue.autoconfigure.QueueWorkerNode;
import io.pgqueue.autoconfigure.RedactedFields;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.observe.QueueStatistics;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * Serves the web console at {@code pgqueue.console.path} (default {@code /pgqueue}) in a Spring
 * MVC application: its page and assets from the jar, its JSON API below {@code api/}. With Spring
 * Security present, {@link QueueConsoleSecurityConfiguration} requires {@code pgqueue.console.role}
 * for it; without, it is not served unless {@code pgqueue.console.allow-unauthenticated=true}, then
 * read-only unless {@code pgqueue.console.read-only=false}, and says so at start-up. Runs after Boot's web and security auto-configurations, so that the application's
 * default security is in place before the console adds its own filter chain.
 */
@AutoConfiguration(after = { QueueAutoConfiguration.class, QueueEndpointAutoConfiguration.class },
        afterName = { "org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration",
                "org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration",
                "org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration" })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(RouterFunction.class)
@ConditionalOnBean(QueueAdmin.class)
@ConditionalOnBooleanProperty(name = "pgqueue.console.enabled", matchIfMissing = true)
@EnableConfigurationProperties(QueueConsoleProperties.class)
@Import(QueueConsoleSecurityConfiguration.class)
public final class QueueConsoleAutoConfiguration {

    /** The bean name of the console's security filter chain, when Spring Security is present. */
    static final String SECURITY_CHAIN = "pgqueueConsoleSecurityFilterChain";

    @Bean
    @ConditionalOnMissingBean
    LocalDeadlineMisses queueLocalDeadlineMisses() {
        return new LocalDeadlineMisses();
    }

    @Bean
    @ConditionalOnMissingBean(name = "pgqueueConsoleRoutes")
    RouterFunction<ServerResponse> pgqueueConsoleRoutes(QueueConsoleProperties properties, QueueAdmin admin,
            QueueStatistics stats, ObjectProvider<QueueWorkerNode> workers,
            ObjectProvider<LocalDeadlineMisses> misses, ConfigurableListableBeanFactory beans, QueueProperties queue,
            MessageQueues messages, PayloadEncryption encryption) {
        String path = path(properties.getPath());
        boolean secured = beans.containsBeanDefinition(SECURITY_CHAIN);
        boolean readOnly = properties.getReadOnly() != null ? properties.getReadOnly() : !secured;
        if (!secured && !properties.isAllowUnauthenticated()) {
            LoggerFactory.getLogger(QueueConsoleAutoConfiguration.class).warn("The pgqueue console is not served at "
                    + "{}/: no Spring Security protects it, and it shows every job's payload. Add "
                    + "spring-boot-starter-security (the console then needs role {}), or set "
                    + "pgqueue.console.allow-unauthenticated=true to serve it to anyone who reaches this application",
                    path, properties.getRole());
            return request -> Optional.empty();
        }
        if (!secured) {
            LoggerFactory.getLogger(QueueConsoleAutoConfiguration.class).warn("The pgqueue console at {}/ has no "
                    + "Spring Security to protect it (pgqueue.console.allow-unauthenticated=true): anyone who reaches "
                    + "this application sees its jobs and their payloads{}. Add spring-boot-starter-security (the "
                    + "console then needs role {}), or set pgqueue.console.enabled=false", path, readOnly
                            ? "; it is read-only"
                            : ", and pause, re-run and cancel them (pgqueue.console.read-only=false)", properties.getRole());
        }
        ConsoleAccess access = new ConsoleAccess(secured, properties.getRole(), properties.getViewerRole(),
                properties.isViewersSeeJobData());
        return ConsoleRoutes.of(path, new ConsoleApi(admin, stats, workers, misses, readOnly, access,
                new RedactedFields(queue.getRedactedFields()),
                new EncryptedPayloads(encryption, queue.getEncryption().getReaderRole()), messages),
                secured ? null : new ConsoleHosts(properties.getAllowedHosts()));
    }

    /** The configured path without trailing slashes; anything but a path below the root stops the start. */
    static String path(String configured) {
        return QueueConfigurationException.requirePathBelowRoot("pgqueue.console.path", configured,
                "a path such as /pgqueue (the console's page is at <path>/)");
    }
}
