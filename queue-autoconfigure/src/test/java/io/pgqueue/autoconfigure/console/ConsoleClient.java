package io.pgqueue.autoconfigure.console;

import java.net.CookieManager;
import java.net.HttpCookie;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A browser's view of the console over real HTTP: cookies kept, optional HTTP Basic credentials. */
final class ConsoleClient {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final CookieManager cookies = new CookieManager();

    private final HttpClient http = HttpClient.newBuilder().cookieHandler(this.cookies)
        .followRedirects(HttpClient.Redirect.NEVER).build();

    private final String base;

    private String authorization;

    ConsoleClient(int port) {
        this.base = "http://127.0.0.1:" + port;
    }

    ConsoleClient as(String user, String password) {
        this.authorization = "Basic " + Base64.getEncoder()
            .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
        return this;
    }

    HttpResponse<String> get(String path) throws Exception {
        return this.http.send(request(path).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /** An action as the page sends it: the console's header, and the CSRF token when a cookie holds one. */
    HttpResponse<String> act(String path) throws Exception {
        HttpRequest.Builder request = request(path).header("X-PgQueue-Console", "1");
        String token = csrfToken();
        if (token != null) {
            request.header("X-XSRF-TOKEN", token);
        }
        return this.http.send(request.POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** A POST without the console's header or a CSRF token, as a form on another site would send it. */
    HttpResponse<String> postBare(String path) throws Exception {
        return this.http.send(request(path).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    String csrfToken() {
        return this.cookies.getCookieStore().getCookies().stream().filter(cookie -> cookie.getName().equals("XSRF-TOKEN"))
            .map(HttpCookie::getValue).findFirst().orElse(null);
    }

    static JsonNode json(HttpResponse<String> response) {
        return JSON.readTree(response.body());
    }

    private HttpRequest.Builder request(String path) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(this.base + path));
        if (this.authorization != null) {
            request.header("Authorization", this.authorization);
        }
        return request;
    }
}
