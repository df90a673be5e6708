package io.pgqueue.sample.web;

import java.io.IOException;
import java.util.UUID;
import java.util.regex.Pattern;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.MDC;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Gives every request an id in the MDC under {@value #MDC_KEY}: the caller's {@value #HEADER} when
 * it is a plain token, else a new one, echoed in the response. With
 * {@code pgqueue.interceptors.carried-mdc-keys: requestId} the jobs a request enqueues carry it, and
 * every line their handlers log shows it, on whichever node they run.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
public class RequestIds extends OncePerRequestFilter {

    /** The MDC key. */
    public static final String MDC_KEY = "requestId";

    /** The request and response header. */
    public static final String HEADER = "X-Request-Id";

    private static final Pattern TOKEN = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String given = request.getHeader(HEADER);
        String id = given != null && TOKEN.matcher(given).matches() ? given : UUID.randomUUID().toString();
        response.setHeader(HEADER, id);
        MDC.put(MDC_KEY, id);
        try {
            chain.doFilter(request, response);
        }
        finally {
            MDC.remove(MDC_KEY);
        }
    }
}
