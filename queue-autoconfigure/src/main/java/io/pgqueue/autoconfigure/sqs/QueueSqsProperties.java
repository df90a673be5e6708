package io.pgqueue.autoconfigure.sqs;

import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the Amazon SQS API endpoint ({@code pgqueue.sqs.*}).
 */
@ConfigurationProperties("pgqueue.sqs")
public class QueueSqsProperties {

    /**
     * Whether to serve the Amazon SQS API over HTTP (needs a servlet web application).
     */
    private boolean enabled;

    /**
     * Path of the endpoint: clients take it as their endpoint URL, and queue URLs are
     * {@code <endpoint>/<account-id>/<queue name>}.
     */
    private String path = "/sqs";

    /**
     * URL queue URLs start with, e.g. behind a proxy ({@code https://queues.example.com/sqs}). By
     * default, the scheme, host and path of each request.
     */
    private String baseUrl;

    /**
     * Account id in queue URLs and ARNs.
     */
    private String accountId = "000000000000";

    /**
     * Region in queue ARNs.
     */
    private String region = "us-east-1";

    /**
     * Whether unsigned requests are served too when credentials are configured, or every request
     * when none are. Off by default: with no credentials configured the application does not start.
     */
    private boolean allowAnonymous;

    /**
     * Access keys whose AWS Signature Version 4 signatures are accepted.
     */
    private List<Credential> credentials = new ArrayList<>();

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

    public String getBaseUrl() {
        return this.baseUrl;
    }

    public void setBaseUrl(String baseUrl) {
        this.baseUrl = baseUrl;
    }

    public String getAccountId() {
        return this.accountId;
    }

    public void setAccountId(String accountId) {
        this.accountId = accountId;
    }

    public String getRegion() {
        return this.region;
    }

    public void setRegion(String region) {
        this.region = region;
    }

    public boolean isAllowAnonymous() {
        return this.allowAnonymous;
    }

    public void setAllowAnonymous(boolean allowAnonymous) {
        this.allowAnonymous = allowAnonymous;
    }

    public List<Credential> getCredentials() {
        return this.credentials;
    }

    public void setCredentials(List<Credential> credentials) {
        this.credentials = credentials;
    }

    /**
     * An access key clients sign requests with.
     */
    public static class Credential {

        /**
         * Access key id, as clients send it (AWS_ACCESS_KEY_ID).
         */
        private String accessKeyId;

        /**
         * Secret access key (AWS_SECRET_ACCESS_KEY).
         */
        private String secretAccessKey;

        public String getAccessKeyId() {
            return this.accessKeyId;
        }

        public void setAccessKeyId(String accessKeyId) {
            this.accessKeyId = accessKeyId;
        }

        public String getSecretAccessKey() {
            return this.secretAccessKey;
        }

        public void setSecretAccessKey(String secretAccessKey) {
            this.secretAccessKey = secretAccessKey;
        }
    }
}
