package io.pgqueue.autoconfigure.console;

import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the web console ({@code pgqueue.console.*}).
 */
@ConfigurationProperties("pgqueue.console")
public class QueueConsoleProperties {

    /**
     * Whether to serve the web console (needs a Spring MVC web application).
     */
    private boolean enabled = true;

    /**
     * Path of the console: its page is at {@code <path>/}, its JSON API below {@code <path>/api/}.
     */
    private String path = "/pgqueue";

    /**
     * Role a user needs for the console when Spring Security is present (without the
     * {@code ROLE_} prefix).
     */
    private String role = "QUEUE_ADMIN";

    /**
     * Role of users who may see the console but not act (without the {@code ROLE_} prefix), when
     * Spring Security is present. They see no job data (payloads, headers, results, progress, errors,
     * logs) unless {@code viewers-see-job-data} allows it.
     */
    private String viewerRole = "QUEUE_VIEWER";

    /**
     * Whether users with only the viewer role see job data (payloads, headers, results, progress,
     * errors, attempt logs) and may search inside it.
     */
    private boolean viewersSeeJobData;

    /**
     * Whether the console only shows, without actions (pause, resume, re-run, cancel, rescue). By
     * default, read-only unless Spring Security protects it.
     */
    private Boolean readOnly;

    /**
     * Whether to serve the console to anyone who reaches the application when Spring Security is
     * not there to protect it: every job's payload, headers and errors become readable without
     * authentication. Without Spring Security and without this, the console is not served.
     */
    private boolean allowUnauthenticated;

    /**
     * Host names, besides localhost and IP addresses, that a console served without Spring Security
     * answers requests for (the Host header). Any other name is refused, so that a site whose name an
     * attacker points at this machine (DNS rebinding) cannot read or act on the console.
     */
    private List<String> allowedHosts = new ArrayList<>();

    public boolean isEnabled() {
        return this.enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public String getPath() {
        return this.path;
    }

    public void setPath(String path) {
        this.path = path;
    }

    public String getRole() {
        return this.role;
    }

    public void setRole(String role) {
        this.role = role;
    }

    public String getViewerRole() {
        return this.viewerRole;
    }

    public void setViewerRole(String viewerRole) {
        this.viewerRole = viewerRole;
    }

    public boolean isViewersSeeJobData() {
        return this.viewersSeeJobData;
    }

    public void setViewersSeeJobData(boolean viewersSeeJobData) {
        this.viewersSeeJobData = viewersSeeJobData;
    }

    public Boolean getReadOnly() {
        return this.readOnly;
    }

    public void setReadOnly(Boolean readOnly) {
        this.readOnly = readOnly;
    }

    public boolean isAllowUnauthenticated() {
        return this.allowUnauthenticated;
    }

    public void setAllowUnauthenticated(boolean allowUnauthenticated) {
        this.allowUnauthenticated = allowUnauthenticated;
    }

    public List<String> getAllowedHosts() {
        return this.allowedHosts;
    }

    public void setAllowedHosts(List<String> allowedHosts) {
        this.allowedHosts = allowedHosts;
    }
}
