package io.pgqueue.sample;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.security.autoconfigure.actuate.web.servlet.EndpointRequest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;

/**
 * Who may see and change the queue. Two users: {@code operator} reads the queues endpoint and
 * metrics, {@code admin} also writes through the endpoint and uses the web console (pgqueue's
 * console chain asks for its role, {@code QUEUE_ADMIN}). The SQS API checks its own AWS signatures
 * and the sample's REST API is open, as a demo's. A real application keeps its users elsewhere
 * (LDAP, OAuth 2, a database); the chains stay the same. A node started without a web server
 * (a worker-only node) has nothing to protect; its users ({@link SampleUsers}) it still has, to run
 * jobs as the users who enqueued them.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
class SampleSecurity {

    /** The endpoint's chain exactly as docs/monitoring.md shows it. */
    @Bean
    @Order(1)
    SecurityFilterChain actuator(HttpSecurity http) throws Exception {
        return http
            .securityMatcher(EndpointRequest.toAnyEndpoint())
            .authorizeHttpRequests(requests -> requests
                .requestMatchers(EndpointRequest.to("health")).permitAll()
                .requestMatchers(HttpMethod.GET, "/actuator/queues/**").hasRole("OPERATOR")
                .requestMatchers(HttpMethod.POST, "/actuator/queues/**").hasRole("QUEUE_ADMIN")
                .anyRequest().hasRole("OPERATOR"))
            .httpBasic(Customizer.withDefaults())
            // Its callers are scripts and tools with HTTP Basic, not a browser session: no CSRF token,
            // which would otherwise refuse every write, the admin's too.
            .csrf(csrf -> csrf.disable())
            .build();
    }

    /** SQS clients sign every request (pgqueue.sqs.credentials); they carry no session or CSRF token. */
    @Bean
    @Order(2)
    SecurityFilterChain sqs(HttpSecurity http, @Value("${pgqueue.sqs.path:/sqs}") String path) throws Exception {
        return http.securityMatcher(path, path + "/**")
            .authorizeHttpRequests(requests -> requests.anyRequest().permitAll())
            .csrf(csrf -> csrf.disable())
            .build();
    }

    /**
     * Everything else: the sample's own REST API, open to curl as a demo's, and a sign-in page whose
     * session the console accepts too (a browser can also answer the console's HTTP Basic prompt).
     * A request signed in (a session, or {@code curl -u admin:...}) enqueues jobs that run as its user
     * ({@code pgqueue.interceptors.security-context}).
     */
    @Bean
    SecurityFilterChain application(HttpSecurity http) throws Exception {
        return http
            .authorizeHttpRequests(requests -> requests.anyRequest().permitAll())
            .httpBasic(Customizer.withDefaults())
            .formLogin(form -> form.defaultSuccessUrl("/pgqueue/"))
            .csrf(csrf -> csrf.ignoringRequestMatchers("/files", "/files/**", "/folders/**", "/memories", "/users/**",
                    "/jobs/**", "/orders", "/orders/**"))
            .build();
    }
}
