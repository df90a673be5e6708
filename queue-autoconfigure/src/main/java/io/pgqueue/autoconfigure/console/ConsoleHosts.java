package io.pgqueue.autoconfigure.console;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.web.servlet.function.ServerRequest;

/**
 * Which requests a console without Spring Security answers: those for {@code localhost}, an IP
 * address or a host named in {@code pgqueue.console.allowed-hosts}, and actions only from its own
 * page. A site whose name an attacker points at this machine (DNS rebinding) is the same origin
 * for the browser, so its page may read the console and send the console's action header; the
 * {@code Host} header, which no page can set, still names the attacker's domain.
 */
final class ConsoleHosts {

    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

    private final Set<String> allowed;

    /**
     * @param allowed the host names besides localhost and IP addresses, any case
     */
    ConsoleHosts(List<String> allowed) {
        this.allowed = allowed.stream().map(host -> host.strip().toLowerCase(Locale.ROOT)).collect(Collectors.toSet());
    }

    /**
     * Says why a request is refused.
     * @param request the request
     * @return the reason, or empty when it may be answered
     */
    Optional<String> refusal(ServerRequest request) {
        String host = request.headers().firstHeader(HttpHeaders.HOST);
        if (host != null && !isAllowed(host)) {
            return Optional.of("The console has no Spring Security and answers requests for localhost, an IP address "
                    + "or a host in pgqueue.console.allowed-hosts, not for '" + host + "': another site's name "
                    + "pointed at this machine would reach it");
        }
        String origin = request.headers().firstHeader(HttpHeaders.ORIGIN);
        if (request.method() != HttpMethod.GET && origin != null && host != null
                && !origin.equalsIgnoreCase("http://" + host) && !origin.equalsIgnoreCase("https://" + host)) {
            return Optional.of("An action comes from the console's own page, not from '" + origin + "'");
        }
        return Optional.empty();
    }

    private boolean isAllowed(String hostHeader) {
        if (hostHeader.startsWith("[")) {
            return true;
        }
        int colon = hostHeader.lastIndexOf(':');
        String name = (colon < 0 ? hostHeader : hostHeader.substring(0, colon)).toLowerCase(Locale.ROOT);
        return name.equals("localhost") || IPV4.matcher(name).matches() || this.allowed.contains(name);
    }
}
