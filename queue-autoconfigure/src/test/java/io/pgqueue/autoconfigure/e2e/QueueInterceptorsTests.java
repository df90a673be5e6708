package io.pgqueue.autoconfigure.e2e;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.pgqueue.JobInterceptor;
import io.pgqueue.JobInterceptors;
import io.pgqueue.JobRequest;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import io.pgqueue.testing.TestDatabaseInitializer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.test.context.ContextConfiguration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Interceptors through the starter: the built-in ones the properties ask for come first, then the
 * application's beans in their order, around every attempt and at every enqueue.
 */
@SpringBootTest(classes = QueueInterceptorsTests.InterceptedApplication.class,
        properties = { "pgqueue.schema=intercepted", "pgqueue.interceptors.carried-mdc-keys=requestId",
                "pgqueue.interceptors.security-context=true" })
@ContextConfiguration(initializers = TestDatabaseInitializer.class)
class QueueInterceptorsTests {

    @Autowired
    QueueClient queue;

    @Autowired
    JdbcTemplate jdbc;

    @Autowired
    List<String> calls;

    @Autowired
    Map<Long, String> users;

    @BeforeEach
    void clear() {
        this.calls.clear();
    }

    @Test
    void aJobRunsAsTheUserWhoseRequestEnqueuedItWithTheAuthoritiesTheUserServiceGivesNow() {
        SecurityContextHolder.getContext().setAuthentication(
                UsernamePasswordAuthenticationToken.authenticated("ann", null, List.of()));
        long asAnn;
        try {
            asAnn = this.queue.enqueue("whoami", "report").jobId();
        }
        finally {
            SecurityContextHolder.clearContext();
        }
        long anonymous = this.queue.enqueue("whoami", "report").jobId();

        await().atMost(Duration.ofSeconds(20)).until(() -> this.users.size() == 2);
        assertThat(this.users).containsEntry(asAnn, "ann [ROLE_AUDITOR]").containsEntry(anonymous, "nobody");
        // The outcome is written a moment after the handler returns.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(this.jdbc.queryForList(
                "SELECT headers->>'pgqueue.principal' FROM intercepted.job_finished WHERE id = ?", String.class, asAnn))
            .as("the name travels, not the authorities").containsExactly("ann"));
    }

    @Test
    void theMdcOfTheEnqueuingRequestAndTheLogContextReachTheHandlerInsideTheApplicationsInterceptors() {
        MDC.put("requestId", "req-7");
        long id;
        try {
            id = this.queue.enqueue("audit", "login").jobId();
        }
        finally {
            MDC.remove("requestId");
        }

        await().atMost(Duration.ofSeconds(20)).until(() -> this.calls.size() == 5);
        assertThat(this.calls).containsExactly("enqueue first", "enqueue second", "attempt first " + id + " req-7",
                "attempt second", "handler " + id + " audit 1 req-7");
        long job = id;
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(this.jdbc.queryForList(
                "SELECT headers->>'mdc.requestId' FROM intercepted.job_finished WHERE id = ?", String.class, job))
            .containsExactly("req-7"));
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    @Import({ Audit.class, WhoAmI.class })
    static class InterceptedApplication {

        @Bean
        List<String> calls() {
            return new CopyOnWriteArrayList<>();
        }

        @Bean
        Map<Long, String> users() {
            return new ConcurrentHashMap<>();
        }

        @Bean
        UserDetailsService userDetailsService() {
            return new InMemoryUserDetailsManager(User.withUsername("ann").password("{noop}x").roles("AUDITOR").build());
        }

        @Bean
        @Order(2)
        JobInterceptor second(List<String> calls) {
            return new JobInterceptor() {
                @Override
                public JobRequest beforeEnqueue(JobRequest request) {
                    calls.add("enqueue second");
                    return request;
                }

                @Override
                public void aroundAttempt(TaskContext context, Object payload, Attempt attempt) throws Exception {
                    calls.add("attempt second");
                    attempt.proceed();
                }
            };
        }

        @Bean
        @Order(1)
        JobInterceptor first(List<String> calls) {
            return new JobInterceptor() {
                @Override
                public JobRequest beforeEnqueue(JobRequest request) {
                    calls.add("enqueue first");
                    return request;
                }

                @Override
                public void aroundAttempt(TaskContext context, Object payload, Attempt attempt) throws Exception {
                    // The built-in ones are outside: the log context and the carried entry are set.
                    calls.add("attempt first " + MDC.get(JobInterceptors.MDC_JOB_ID) + " " + MDC.get("requestId"));
                    attempt.proceed();
                }
            };
        }
    }

    @QueueTask(name = "whoami")
    static class WhoAmI implements TaskHandler<String> {

        private final Map<Long, String> users;

        WhoAmI(Map<Long, String> users) {
            this.users = users;
        }

        @Override
        public void handle(String payload, TaskContext context) {
            Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
            this.users.put(context.jobId(), authentication == null ? "nobody"
                    : authentication.getName() + " " + authentication.getAuthorities());
        }
    }

    @QueueTask(name = "audit")
    static class Audit implements TaskHandler<String> {

        private final List<String> calls;

        Audit(List<String> calls) {
            this.calls = calls;
        }

        @Override
        public void handle(String payload, TaskContext context) {
            this.calls.add("handler " + MDC.get(JobInterceptors.MDC_JOB_ID) + " " + MDC.get(JobInterceptors.MDC_TASK) + " "
                    + MDC.get(JobInterceptors.MDC_ATTEMPT) + " " + MDC.get("requestId"));
        }
    }
}
