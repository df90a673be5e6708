package io.pgqueue.autoconfigure.sqs;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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

    /**
     * Request quotas of every queue, each queue on its own, on each node serving the API: a queue
     * declared under {@code pgqueue.sqs.queues} may set its own. Unlimited by default.
     */
    private Quotas quotas = new Quotas();

    /**
     * Queues created at start-up, or updated to these settings when they exist, by queue name.
     */
    private Map<String, DeclaredQueue> queues = new LinkedHashMap<>();

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

    public Quotas getQuotas() {
        return this.quotas;
    }

    public void setQuotas(Quotas quotas) {
        this.quotas = quotas;
    }

    public Map<String, DeclaredQueue> getQueues() {
        return this.queues;
    }

    public void setQueues(Map<String, DeclaredQueue> queues) {
        this.queues = queues;
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

        /**
         * Queues this key may act on: names, with * as a wildcard (e.g. orders-*). Every queue when
         * empty.
         */
        private List<String> queues = new ArrayList<>();

        /**
         * SQS actions this key may call, with * as a wildcard (e.g. SendMessage, Get*); an sqs:
         * prefix is allowed. Every action when empty.
         */
        private List<String> actions = new ArrayList<>();

        /**
         * Request quotas of this key, over all the queues it calls.
         */
        private Quotas quotas = new Quotas();

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

        public List<String> getQueues() {
            return this.queues;
        }

        public void setQueues(List<String> queues) {
            this.queues = queues;
        }

        public List<String> getActions() {
            return this.actions;
        }

        public void setActions(List<String> actions) {
            this.actions = actions;
        }

        public Quotas getQuotas() {
            return this.quotas;
        }

        public void setQuotas(Quotas quotas) {
            this.quotas = quotas;
        }
    }

    /**
     * Request quotas, in calls per second, kept apart for writes, reads and deletes (a batch call
     * counts once). Each node serving the API keeps its own: behind a load balancer over n nodes,
     * the calls a queue takes add up to n times its quota. A call over a quota is answered with
     * SQS's {@code RequestThrottled} and a {@code Retry-After} header, which the AWS SDKs retry.
     */
    public static class Quotas {

        /**
         * SendMessage and SendMessageBatch calls per second; unlimited when not set.
         */
        private Double write;

        /**
         * ReceiveMessage calls per second; unlimited when not set.
         */
        private Double read;

        /**
         * DeleteMessage, DeleteMessageBatch, ChangeMessageVisibility and ChangeMessageVisibilityBatch
         * calls per second; unlimited when not set.
         */
        private Double delete;

        public Double getWrite() {
            return this.write;
        }

        public void setWrite(Double write) {
            this.write = write;
        }

        public Double getRead() {
            return this.read;
        }

        public void setRead(Double read) {
            this.read = read;
        }

        public Double getDelete() {
            return this.delete;
        }

        public void setDelete(Double delete) {
            this.delete = delete;
        }
    }

    /**
     * A queue created at start-up, or updated to these settings when it exists (its messages stay).
     */
    public static class DeclaredQueue {

        /**
         * Queue attributes by their SQS names, as CreateQueue takes them: VisibilityTimeout,
         * DelaySeconds, MessageRetentionPeriod, MaximumMessageSize, ReceiveMessageWaitTimeSeconds,
         * FifoQueue (the name must then end in .fifo), ContentBasedDeduplication, RedrivePolicy.
         * Those not given keep the queue's current value, or the default for a new queue.
         */
        private Map<String, String> attributes = new LinkedHashMap<>();

        /**
         * Dead-letter queue of this queue, by name (declared here or existing): a message received
         * max-receive-count times moves there. Instead of a RedrivePolicy attribute.
         */
        private String deadLetterQueue;

        /**
         * Receives after which a message moves to the dead-letter queue.
         */
        private Integer maxReceiveCount;

        /**
         * Tags the queue carries (added to the ones it has).
         */
        private Map<String, String> tags = new LinkedHashMap<>();

        /**
         * Request quotas of this queue, instead of pgqueue.sqs.quotas.
         */
        private Quotas quotas;

        /**
         * Actions access keys may call on this queue besides what their own permissions allow, by
         * access key id: SQS action names, with * as a wildcard (e.g. SendMessage, Get*, *).
         */
        private Map<String, List<String>> permissions = new LinkedHashMap<>();

        public Map<String, String> getAttributes() {
            return this.attributes;
        }

        public void setAttributes(Map<String, String> attributes) {
            this.attributes = attributes;
        }

        public String getDeadLetterQueue() {
            return this.deadLetterQueue;
        }

        public void setDeadLetterQueue(String deadLetterQueue) {
            this.deadLetterQueue = deadLetterQueue;
        }

        public Integer getMaxReceiveCount() {
            return this.maxReceiveCount;
        }

        public void setMaxReceiveCount(Integer maxReceiveCount) {
            this.maxReceiveCount = maxReceiveCount;
        }

        public Map<String, String> getTags() {
            return this.tags;
        }

        public void setTags(Map<String, String> tags) {
            this.tags = tags;
        }

        public Quotas getQuotas() {
            return this.quotas;
        }

        public void setQuotas(Quotas quotas) {
            this.quotas = quotas;
        }

        public Map<String, List<String>> getPermissions() {
            return this.permissions;
        }

        public void setPermissions(Map<String, List<String>> permissions) {
            this.permissions = permissions;
        }
    }
}
