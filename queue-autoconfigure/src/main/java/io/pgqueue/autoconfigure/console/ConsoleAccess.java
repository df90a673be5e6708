package io.pgqueue.autoconfigure.console;

import org.jspecify.annotations.Nullable;
import org.springframework.web.servlet.function.ServerRequest;

/**
 * What a console user may do: with Spring Security, users with {@code pgqueue.console.role} act
 * and see job data; users with only {@code pgqueue.console.viewer-role} read, without job data
 * (payloads, headers, results, progress, errors, attempt logs) unless
 * {@code pgqueue.console.viewers-see-job-data}. Without Spring Security the console's own
 * read-only setting decides and everything is shown.
 */
final class ConsoleAccess {

    /** What a piece of job data reads as for a user who may not see it. */
    static final String HIDDEN = "hidden: job data needs the console's admin role";

    /** {@link #HIDDEN} as a JSON value, in place of a payload, headers, a result or progress. */
    static final String HIDDEN_JSON = "\"" + HIDDEN + "\"";

    private final boolean secured;

    private final String role;

    private final String viewerRole;

    private final boolean viewersSeeJobData;

    ConsoleAccess(boolean secured, String role, String viewerRole, boolean viewersSeeJobData) {
        this.secured = secured;
        this.role = role;
        this.viewerRole = viewerRole;
        this.viewersSeeJobData = viewersSeeJobData;
    }

    /** @return whether the request's user has the admin role (every user, without Spring Security) */
    boolean admin(ServerRequest request) {
        return !this.secured || request.servletRequest().isUserInRole(this.role);
    }

    /** @return whether the request's user sees job data */
    boolean jobData(ServerRequest request) {
        return this.viewersSeeJobData || admin(request);
    }

    /**
     * @param readerRole the role whose users see encrypted payloads decrypted, or {@code null}
     * @return whether the request's user sees job data and encrypted payloads decrypted: only with
     * Spring Security, for users with that role
     */
    boolean decrypts(ServerRequest request, @Nullable String readerRole) {
        return this.secured && readerRole != null && jobData(request)
                && request.servletRequest().isUserInRole(readerRole);
    }

    /** @return why a viewer's search inside job data is refused */
    String noJobData() {
        return "Searching the payloads, headers, results and errors of jobs needs the role " + this.role
                + "; users with the role " + this.viewerRole + " see no job data unless "
                + "pgqueue.console.viewers-see-job-data=true";
    }

    /** @return why a viewer's action is refused */
    String noAction() {
        return "Actions need the role " + this.role + "; the role " + this.viewerRole + " only reads";
    }

    /** A request the user's role does not allow: answered 403. */
    static final class Refused extends RuntimeException {

        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }
    }
}
