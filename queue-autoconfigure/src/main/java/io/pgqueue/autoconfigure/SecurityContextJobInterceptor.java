package io.pgqueue.autoconfigure;

import io.pgqueue.JobInterceptor;
import io.pgqueue.JobRequest;
import io.pgqueue.TaskContext;
import io.pgqueue.TerminalTaskException;
import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.core.context.SecurityContextHolder;
import org.springframework.security.core.userdetails.UserDetails;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.core.userdetails.UsernameNotFoundException;

/**
 * Runs each job as the user whose request enqueued it ({@code pgqueue.interceptors.security-context}):
 * at enqueue, the authenticated user's name goes into the header {@value #HEADER}; while an attempt
 * runs, the Spring Security context holds that user as the application's {@link UserDetailsService}
 * gives it now — its current authorities, never rights read from the header. A job of a user who
 * no longer exists fails for good.
 */
final class SecurityContextJobInterceptor implements JobInterceptor {

    /** The header that carries the user's name. */
    static final String HEADER = "pgqueue.principal";

    private final UserDetailsService users;

    SecurityContextJobInterceptor(UserDetailsService users) {
        this.users = users;
    }

    @Override
    public JobRequest beforeEnqueue(JobRequest request) {
        Authentication authentication = SecurityContextHolder.getContext().getAuthentication();
        if (authentication == null || !authentication.isAuthenticated()
                || authentication instanceof AnonymousAuthenticationToken
                || request.options().headers().containsKey(HEADER)) {
            return request;
        }
        return request.withHeader(HEADER, authentication.getName());
    }

    @Override
    public void aroundAttempt(TaskContext context, Object payload, Attempt attempt) throws Exception {
        String name = context.headers().get(HEADER);
        if (name == null) {
            attempt.proceed();
            return;
        }
        UserDetails user;
        try {
            user = this.users.loadUserByUsername(name);
        }
        catch (UsernameNotFoundException ex) {
            throw new TerminalTaskException("Job " + context.jobId() + " runs as user '" + name
                    + "', who no longer exists", ex);
        }
        SecurityContext previous = SecurityContextHolder.getContext();
        SecurityContext running = SecurityContextHolder.createEmptyContext();
        running.setAuthentication(UsernamePasswordAuthenticationToken.authenticated(user, null, user.getAuthorities()));
        SecurityContextHolder.setContext(running);
        try {
            attempt.proceed();
        }
        finally {
            SecurityContextHolder.setContext(previous);
        }
    }

    @Override
    public String toString() {
        return "the security context interceptor";
    }
}
