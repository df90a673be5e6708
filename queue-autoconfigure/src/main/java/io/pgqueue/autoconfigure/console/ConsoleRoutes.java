package io.pgqueue.autoconfigure.console;

import java.net.URI;
import java.util.Optional;

import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.function.RequestPredicates;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * The console's routes: the page at {@code <path>/}, its assets from
 * {@code classpath:META-INF/pgqueue-console/}, the API below {@code <path>/api/}. Every answer,
 * errors included, comes from here, not from the application's error handling: an unknown path
 * below the console is the console's own 404.
 */
final class ConsoleRoutes {

    /** Where the page and its assets are in the jar. */
    static final String ASSETS = "META-INF/pgqueue-console/";

    /**
     * The page may load its own scripts, styles and API only: no other origin, no framing.
     */
    private static final String CONTENT_SECURITY_POLICY = "default-src 'self'; script-src 'self'; "
            + "style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; "
            + "form-action 'self'; base-uri 'self'";

    private ConsoleRoutes() {
    }

    /**
     * @param path the console's path
     * @param api its API
     * @param hosts the hosts it answers when no Spring Security protects it, or {@code null} when it does
     */
    static RouterFunction<ServerResponse> of(String path, ConsoleApi api, ConsoleHosts hosts) {
        Resource index = new ClassPathResource(ASSETS + "index.html");
        RouterFunction<ServerResponse> apiRoutes = RouterFunctions.route()
            .GET(path + "/api/overview", api::overview)
            .GET(path + "/api/jobs", api::jobs)
            .GET(path + "/api/jobs/count", api::count)
            .GET(path + "/api/history", api::history)
            .GET(path + "/api/workflows", api::workflows)
            .GET(path + "/api/queues", api::queues)
            .GET(path + "/api/queues/{name}", api::messageQueue)
            .GET(path + "/api/workflows/{id}", api::workflow)
            .GET(path + "/api/actions", api::actions)
            .GET(path + "/api/actions/{id}", api::action)
            .POST(path + "/api/bulk", request -> refusedOr(api, request, api::bulk))
            .POST(path + "/api/queues/{name}/redrive", request -> refusedOr(api, request, api::redrive))
            .GET(path + "/api/jobs/{id}", api::job)
            .POST(path + "/api/tasks/{task}/{action}", request -> refusedOr(api, request, api::taskAction))
            .POST(path + "/api/jobs/{id}/{action}", request -> refusedOr(api, request, api::jobAction))
            .POST(path + "/api/rescue", request -> refusedOr(api, request, api::rescue))
            .route(RequestPredicates.path(path + "/api/**"),
                    request -> ConsoleApi.problem(HttpStatus.NOT_FOUND, "No console API at " + request.method() + " "
                            + request.path()))
            .onError(Throwable.class, api::error)
            .build();
        RouterFunction<ServerResponse> page = RouterFunctions.route()
            .GET(path, request -> ServerResponse.permanentRedirect(URI.create(path + "/")).build())
            .GET(path + "/", request -> ServerResponse.ok().contentType(MediaType.TEXT_HTML)
                .headers(headers -> secure(headers))
                .body(index))
            .build();
        RouterFunction<ServerResponse> assets = RouterFunctions.resources(path + "/**", new ClassPathResource(ASSETS),
                (resource, headers) -> secure(headers));
        RouterFunction<ServerResponse> notFound = RouterFunctions.route(RequestPredicates.path(path + "/**"),
                request -> ConsoleApi.problem(HttpStatus.NOT_FOUND, "The console has nothing at " + request.path()));
        RouterFunction<ServerResponse> console = apiRoutes.and(page).and(assets).and(notFound);
        if (hosts == null) {
            return console;
        }
        return console.filter((request, next) -> {
            Optional<String> refused = hosts.refusal(request);
            return refused.isPresent() ? ConsoleApi.problem(HttpStatus.FORBIDDEN, refused.get()) : next.handle(request);
        });
    }

    private static void secure(org.springframework.http.HttpHeaders headers) {
        headers.setCacheControl("no-cache");
        headers.set("Content-Security-Policy", CONTENT_SECURITY_POLICY);
        headers.set("X-Content-Type-Options", "nosniff");
        headers.set("Referrer-Policy", "same-origin");
    }

    private static ServerResponse refusedOr(ConsoleApi api, org.springframework.web.servlet.function.ServerRequest request,
            org.springframework.web.servlet.function.HandlerFunction<ServerResponse> action) throws Exception {
        Optional<ServerResponse> refused = api.refuseAction(request);
        return refused.isPresent() ? refused.get() : action.handle(request);
    }
}
