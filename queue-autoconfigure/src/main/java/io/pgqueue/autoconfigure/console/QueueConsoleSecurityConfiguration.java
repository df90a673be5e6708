package io.pgqueue.autoconfigure.console;

import java.io.IOException;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.csrf.CsrfFilter;
import org.springframework.security.web.csrf.CsrfToken;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The console's own security filter chain, when Spring Security is present: reading the console
 * below {@code pgqueue.console.path} needs {@code pgqueue.console.role} or
 * {@code pgqueue.console.viewer-role}, acting needs {@code pgqueue.console.role}, signed in through the
 * application's session or HTTP Basic; actions need the CSRF token the page reads from the
 * {@code XSRF-TOKEN} cookie. Ordered before a chain without a matcher (the application's default
 * one), so the console's rules apply to its path; a chain of the application's with a higher
 * precedence that matches the path decides instead.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ HttpSecurity.class, SecurityFilterChain.class })
@ConditionalOnBean(HttpSecurity.class)
class QueueConsoleSecurityConfiguration {

    @Bean(QueueConsoleAutoConfiguration.SECURITY_CHAIN)
    @Order(Ordered.LOWEST_PRECEDENCE - 100)
    SecurityFilterChain pgqueueConsoleSecurityFilterChain(HttpSecurity http, QueueConsoleProperties properties)
            throws Exception {
        String path = QueueConsoleAutoConfiguration.path(properties.getPath());
        http.securityMatcher(path, path + "/**")
            .authorizeHttpRequests(requests -> requests
                .requestMatchers(HttpMethod.GET, path, path + "/**").hasAnyRole(properties.getRole(), properties.getViewerRole())
                .anyRequest().hasRole(properties.getRole()))
            .httpBasic(Customizer.withDefaults())
            .csrf(csrf -> csrf.spa())
            .addFilterAfter(new CsrfCookieFilter(), CsrfFilter.class);
        return http.build();
    }

    /** Loads the deferred CSRF token on every request, so that its cookie is set before the first action. */
    static final class CsrfCookieFilter extends OncePerRequestFilter {

        @Override
        protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                throws ServletException, IOException {
            if (request.getAttribute(CsrfToken.class.getName()) instanceof CsrfToken token) {
                token.getToken();
            }
            chain.doFilter(request, response);
        }
    }
}
