package io.pgqueue.autoconfigure;

import io.pgqueue.PayloadEncryption;
import io.pgqueue.PgQueue;
import io.pgqueue.QueueAdmin;
import io.pgqueue.observe.QueueStatistics;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;
import org.springframework.web.servlet.HandlerExceptionResolver;

/**
 * The {@code queues} Actuator endpoint, when Actuator is present and the endpoint is exposed.
 */
@AutoConfiguration(after = QueueAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(QueueAdmin.class)
@ConditionalOnAvailableEndpoint(QueueEndpoint.class)
public final class QueueEndpointAutoConfiguration {

    /** Every write operation of the endpoint, as the start-up warning names them. */
    static final String WRITES = "pause, resume, re-run, re-run of all failed jobs, cancel, rescue, schedule (which "
            + "enqueues jobs), unschedule, partition moves, shard drains and bulk actions on the jobs a search matches";

    @Bean
    @ConditionalOnMissingBean
    LocalDeadlineMisses queueLocalDeadlineMisses() {
        return new LocalDeadlineMisses();
    }

    @Bean
    @ConditionalOnMissingBean
    QueueEndpoint queueEndpoint(QueueAdmin admin, QueueStatistics stats, QueueTaskBindings tasks,
            ObjectProvider<QueueWorkerNode> workers, LocalDeadlineMisses misses, PgQueue queue, QueueProperties properties,
            ApplicationContext context, PayloadEncryption encryption) {
        // Without Spring Security nothing protects the reads: job data (errors, payloads) only on request.
        boolean secured = securityPresent(context.getClassLoader());
        boolean showJobData = secured || properties.getEndpoint().isAllowUnauthenticatedJobData();
        if (!secured && showJobData) {
            LoggerFactory.getLogger(QueueEndpointAutoConfiguration.class).warn("The queues endpoint shows job data "
                    + "(handlers' errors, schedule payloads) and this application has no Spring Security "
                    + "(pgqueue.endpoint.allow-unauthenticated-job-data=true): anyone who reaches the management port "
                    + "reads it");
        }
        return new QueueEndpoint(admin, stats, tasks, workers, misses, queue.balancer(), queue.messages(), showJobData,
                new RedactedFields(properties.getRedactedFields()),
                new EncryptedPayloads(encryption, properties.getEncryption().getReaderRole()), false);
    }

    private static boolean securityPresent(ClassLoader classLoader) {
        return ClassUtils.isPresent("org.springframework.security.web.SecurityFilterChain", classLoader);
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnAvailableEndpoint(exposure = EndpointExposure.WEB)
    QueueEndpointWebExtension queueEndpointWebExtension(QueueEndpoint endpoint, Environment environment,
            ApplicationContext context) {
        warnIfWritesAreOpen(environment, context.getClassLoader());
        return new QueueEndpointWebExtension(endpoint);
    }

    /** Over Spring MVC: the reason for a body Actuator could not read. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnClass(HandlerExceptionResolver.class)
    @ConditionalOnAvailableEndpoint(value = QueueEndpoint.class, exposure = EndpointExposure.WEB)
    static class BodyErrorsConfiguration {

        @Bean
        QueueEndpointBodyErrors queueEndpointBodyErrors(Environment environment) {
            return new QueueEndpointBodyErrors(environment.getProperty("management.endpoints.web.base-path", "/actuator"));
        }
    }

    /**
     * Write operations exposed over HTTP without Spring Security on the classpath are open to
     * anyone who reaches the management port: say so once at start-up.
     */
    private static void warnIfWritesAreOpen(Environment environment, ClassLoader classLoader) {
        String access = environment.getProperty("management.endpoint.queues.access",
                environment.getProperty("management.endpoints.access.default", "read-only"));
        boolean writable = "unrestricted".equalsIgnoreCase(access.trim());
        if (writable && !securityPresent(classLoader)) {
            LoggerFactory.getLogger(QueueEndpointAutoConfiguration.class).warn("The queues endpoint's write operations "
                    + "(" + WRITES + ") are exposed over HTTP and this application has no Spring Security: anyone who "
                    + "reaches the management port can use them, and a schedule enqueues jobs of any task with any "
                    + "payload. Protect them, or set management.endpoint.queues.access=read-only");
        }
    }
}
