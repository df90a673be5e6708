package io.pgqueue.autoconfigure;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.core.Ordered;
import org.springframework.http.MediaType;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;
import tools.jackson.databind.json.JsonMapper;

/**
 * Says why the {@code queues} endpoint refused a request body Actuator could not read. Actuator reads
 * the body of a write operation as string values, so a JSON object or array in a field (a schedule's
 * payload written as an object) fails before the endpoint sees it, and Spring MVC answers a bare 400;
 * this answers the same 400 with the reason and the form that works. Requests to other paths are left
 * to the application's own handling.
 */
final class QueueEndpointBodyErrors implements HandlerExceptionResolver, Ordered {

    static final String MESSAGE = "Every field of a queues endpoint request body is a string (Actuator reads a write "
            + "operation's body as string values): give a schedule's payload as JSON written in a string, "
            + "e.g. \"payload\": \"{\\\"all\\\": true}\"";

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final String path;

    /** @param basePath the management endpoints' base path ({@code management.endpoints.web.base-path}) */
    QueueEndpointBodyErrors(String basePath) {
        this.path = (basePath.endsWith("/") ? basePath.substring(0, basePath.length() - 1) : basePath) + "/queues";
    }

    @Override
    public ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response, Object handler,
            Exception ex) {
        String uri = request.getRequestURI().substring(request.getContextPath().length());
        if (!(ex instanceof HttpMessageNotReadableException) || !(uri.equals(this.path) || uri.startsWith(this.path + "/"))) {
            return null;
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", 400);
        body.put("error", "Bad Request");
        body.put("message", MESSAGE);
        body.put("path", uri);
        try {
            response.setStatus(HttpServletResponse.SC_BAD_REQUEST);
            response.setContentType(MediaType.APPLICATION_JSON_VALUE);
            response.setCharacterEncoding("UTF-8");
            response.getWriter().write(JSON.writeValueAsString(body));
        }
        catch (IOException writeFailed) {
            return null;
        }
        return new ModelAndView();
    }

    @Override
    public int getOrder() {
        // After Spring Boot's DefaultErrorAttributes, which only records the exception; before Spring MVC's own.
        return Ordered.HIGHEST_PRECEDENCE + 1;
    }
}
