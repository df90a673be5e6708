package io.pgqueue.sample;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.crypto.factory.PasswordEncoderFactories;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;

/**
 * The demo's two users, on every node: web nodes sign them in ({@link SampleSecurity}), and every
 * node that runs jobs loads the user a job runs as ({@code pgqueue.interceptors.security-context}).
 * {@code operator} reads the queue, and the console without job data (its viewer role); {@code admin}
 * also changes it and uses all of the console. A real
 * application keeps its users elsewhere (LDAP, OAuth 2, a database).
 */
@Configuration(proxyBeanMethods = false)
class SampleUsers {

    @Bean
    UserDetailsService users(@Value("${sample.security.operator-password}") String operatorPassword,
            @Value("${sample.security.admin-password}") String adminPassword) {
        PasswordEncoder encoder = PasswordEncoderFactories.createDelegatingPasswordEncoder();
        return new InMemoryUserDetailsManager(
                User.withUsername("operator").password(encoder.encode(operatorPassword)).roles("OPERATOR", "QUEUE_VIEWER").build(),
                User.withUsername("admin").password(encoder.encode(adminPassword)).roles("OPERATOR", "QUEUE_ADMIN")
                    .build());
    }
}
