package io.pgqueue.autoconfigure.sqs;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.pgqueue.autoconfigure.QueueConfigurationException;
import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;

/**
 * Who may call which SQS action on which queue, and how often.
 * <p>
 * Permissions: an access key may call the actions its credential lists on the queues it lists
 * (names or patterns with {@code *}; an empty list allows every one), and besides, on a declared
 * queue, the actions that queue grants it. Unsigned requests (anonymous access) are not limited by
 * permissions.
 * <p>
 * Quotas: calls per second, kept apart for writes (sends), reads (receives) and deletes (deletes
 * and visibility changes), per queue (its declared quota, else {@code pgqueue.sqs.quotas}) and per
 * access key, as token buckets holding a second's worth of calls, on this node. A call takes a
 * token from its queue's bucket and its key's; when either is empty it is refused with
 * {@code RequestThrottled}, saying after how many seconds a token is back.
 */
final class SqsAccess {

    /** The quota a send call counts against. */
    static final String WRITE = "write";

    /** The quota a receive call counts against. */
    static final String READ = "read";

    /** The quota a delete or visibility call counts against. */
    static final String DELETE = "delete";

    private final Map<String, Permission> permissions;

    /** Per queue, per access key, the actions the queue grants. */
    private final Map<String, Map<String, List<Pattern>>> grants;

    private final Map<String, Double> defaultQueueQuotas;

    private final Map<String, Map<String, Double>> queueQuotas;

    private final Map<String, Map<String, Double>> keyQuotas;

    private final ConcurrentMap<String, Bucket> buckets = new ConcurrentHashMap<>();

    private final LongSupplier nanoTime;

    private SqsAccess(Map<String, Permission> permissions, Map<String, Map<String, List<Pattern>>> grants,
            Map<String, Double> defaultQueueQuotas, Map<String, Map<String, Double>> queueQuotas,
            Map<String, Map<String, Double>> keyQuotas, LongSupplier nanoTime) {
        this.permissions = permissions;
        this.grants = grants;
        this.defaultQueueQuotas = defaultQueueQuotas;
        this.queueQuotas = queueQuotas;
        this.keyQuotas = keyQuotas;
        this.nanoTime = nanoTime;
    }

    /**
     * Reads the permissions and quotas of the endpoint's properties.
     * @throws QueueConfigurationException naming the property, for an action no pattern of which
     * names a known action, a quota not above 0, or a queue's grant to a key that is not configured
     */
    static SqsAccess of(QueueSqsProperties properties, LongSupplier nanoTime) {
        Map<String, Permission> permissions = new HashMap<>();
        Map<String, Map<String, Double>> keyQuotas = new HashMap<>();
        for (int i = 0; i < properties.getCredentials().size(); i++) {
            QueueSqsProperties.Credential credential = properties.getCredentials().get(i);
            String property = "pgqueue.sqs.credentials[" + i + "]";
            permissions.put(credential.getAccessKeyId(), new Permission(
                    credential.getQueues().stream().map(SqsAccess::glob).toList(),
                    actions(credential.getActions(), property + ".actions")));
            keyQuotas.put(credential.getAccessKeyId(), quotas(credential.getQuotas(), property + ".quotas"));
        }
        Map<String, Map<String, List<Pattern>>> grants = new HashMap<>();
        Map<String, Map<String, Double>> queueQuotas = new HashMap<>();
        properties.getQueues().forEach((queue, declared) -> {
            String property = "pgqueue.sqs.queues." + queue;
            declared.getPermissions().forEach((key, actions) -> {
                if (!permissions.containsKey(key)) {
                    throw new QueueConfigurationException(property + ".permissions grants actions to access key '" + key
                            + "', which is not configured", "Configure the key under pgqueue.sqs.credentials, or remove "
                                    + "the grant");
                }
                grants.computeIfAbsent(queue, any -> new HashMap<>()).put(key,
                        actions(actions, property + ".permissions." + key));
            });
            if (declared.getQuotas() != null) {
                queueQuotas.put(queue, quotas(declared.getQuotas(), property + ".quotas"));
            }
        });
        return new SqsAccess(permissions, grants, quotas(properties.getQuotas(), "pgqueue.sqs.quotas"), queueQuotas,
                keyQuotas, nanoTime);
    }

    /** @return the quota an action counts against ({@link #WRITE}, {@link #READ}, {@link #DELETE}), or {@code null} */
    static String quotaOf(String action) {
        return switch (action) {
            case "SendMessage", "SendMessageBatch" -> WRITE;
            case "ReceiveMessage" -> READ;
            case "DeleteMessage", "DeleteMessageBatch", "ChangeMessageVisibility", "ChangeMessageVisibilityBatch" -> DELETE;
            default -> null;
        };
    }

    /**
     * Refuses a call its access key may not make.
     * @param key the access key that signed it, or {@code null} for an unsigned one
     * @param action the action
     * @param queue the queue it acts on, or {@code null} for one that acts on none (ListQueues)
     * @throws MessageQueueException {@code AccessDenied}
     */
    void authorize(String key, String action, String queue) {
        if (key == null || allows(key, action, queue)) {
            return;
        }
        throw new MessageQueueException(MessageQueueError.ACCESS_DENIED, "The access key " + key + " may not call "
                + action + (queue == null ? "" : " on the queue " + queue) + ".");
    }

    /** @return whether a listing shows a queue to an access key: it may call some action on it */
    boolean shows(String key, String queue) {
        if (key == null) {
            return true;
        }
        Permission permission = this.permissions.get(key);
        return permission == null || permission.reaches(queue)
                || this.grants.getOrDefault(queue, Map.of()).containsKey(key);
    }

    private boolean allows(String key, String action, String queue) {
        Permission permission = this.permissions.get(key);
        if (permission == null || permission.allows(action, queue)) {
            return true;
        }
        List<Pattern> granted = queue == null ? null : this.grants.getOrDefault(queue, Map.of()).get(key);
        return granted != null && matches(granted, action);
    }

    /**
     * Takes a call from its queue's and its access key's quotas.
     * @throws RequestThrottledException when either has no call left this second
     */
    void throttle(String key, String action, String queue) {
        String quota = quotaOf(action);
        if (quota == null) {
            return;
        }
        Double queueRate = queue == null ? null
                : this.queueQuotas.getOrDefault(queue, this.defaultQueueQuotas).get(quota);
        Double keyRate = key == null ? null : this.keyQuotas.getOrDefault(key, Map.of()).get(quota);
        long now = this.nanoTime.getAsLong();
        Bucket byQueue = queueRate == null ? null : bucket("queue " + queue + " " + quota, queueRate);
        long wait = byQueue == null ? 0 : byQueue.take(now);
        if (wait > 0) {
            throw throttled("the " + quota + " quota of the queue " + queue, queueRate, wait);
        }
        Bucket byKey = keyRate == null ? null : bucket("key " + key + " " + quota, keyRate);
        wait = byKey == null ? 0 : byKey.take(now);
        if (wait > 0) {
            if (byQueue != null) {
                byQueue.giveBack();
            }
            throw throttled("the " + quota + " quota of the access key " + key, keyRate, wait);
        }
    }

    private Bucket bucket(String name, double rate) {
        return this.buckets.computeIfAbsent(name, any -> new Bucket(rate, this.nanoTime.getAsLong()));
    }

    private static RequestThrottledException throttled(String quota, double rate, long waitNanos) {
        long seconds = Math.max(1, (waitNanos + TimeUnit.SECONDS.toNanos(1) - 1) / TimeUnit.SECONDS.toNanos(1));
        return new RequestThrottledException("Request rate exceeds " + quota + " (" + rate + " calls per second). "
                + "Retry after " + seconds + " s.", seconds);
    }

    private static List<Pattern> actions(List<String> patterns, String property) {
        List<Pattern> actions = new ArrayList<>();
        for (String text : patterns) {
            String name = text == null ? "" : text.strip();
            Pattern pattern = glob(name.regionMatches(true, 0, "sqs:", 0, 4) ? name.substring(4) : name);
            if (name.isEmpty() || SqsActions.ACTIONS.stream().noneMatch(action -> pattern.matcher(action).matches())) {
                throw new QueueConfigurationException(property + " names '" + text + "', which is no SQS action the "
                        + "endpoint serves", "Name actions such as SendMessage, ReceiveMessage, DeleteMessage, Get* or *; "
                                + "the endpoint serves " + String.join(", ", SqsActions.ACTIONS.stream().sorted().toList()));
            }
            actions.add(pattern);
        }
        return actions;
    }

    private static Map<String, Double> quotas(QueueSqsProperties.Quotas quotas, String property) {
        Map<String, Double> rates = new HashMap<>();
        putQuota(rates, WRITE, quotas.getWrite(), property);
        putQuota(rates, READ, quotas.getRead(), property);
        putQuota(rates, DELETE, quotas.getDelete(), property);
        return rates;
    }

    private static void putQuota(Map<String, Double> rates, String quota, Double rate, String property) {
        if (rate == null) {
            return;
        }
        if (!(rate > 0) || rate.isInfinite()) {
            throw new QueueConfigurationException(property + "." + quota + " is " + rate + ": a quota is calls per second "
                    + "above 0", "Set " + property + "." + quota + " to a rate above 0 (e.g. 100, or 0.5 for one call in "
                            + "two seconds), or leave it out for no limit");
        }
        rates.put(quota, rate);
    }

    private static Pattern glob(String text) {
        return Pattern.compile(Arrays.stream(text.split("\\*", -1)).map(Pattern::quote).collect(Collectors.joining(".*")));
    }

    private static boolean matches(List<Pattern> patterns, String name) {
        return patterns.stream().anyMatch(pattern -> pattern.matcher(name).matches());
    }

    /** What a credential allows: its queues and actions, each list empty for all. */
    private record Permission(List<Pattern> queues, List<Pattern> actions) {

        boolean reaches(String queue) {
            return this.queues.isEmpty() || matches(this.queues, queue);
        }

        boolean allows(String action, String queue) {
            return (this.actions.isEmpty() || matches(this.actions, action)) && (queue == null || reaches(queue));
        }
    }

    /** Calls per second with a second's worth of burst, refilled continuously. */
    private static final class Bucket {

        private final double perNano;

        private final double capacity;

        private double tokens;

        private long refilled;

        Bucket(double rate, long now) {
            this.perNano = rate / TimeUnit.SECONDS.toNanos(1);
            this.capacity = Math.max(1, rate);
            this.tokens = this.capacity;
            this.refilled = now;
        }

        /** @return 0 when a call was taken, else the nanoseconds until one is back */
        synchronized long take(long now) {
            this.tokens = Math.min(this.capacity, this.tokens + (now - this.refilled) * this.perNano);
            this.refilled = now;
            if (this.tokens >= 1) {
                this.tokens -= 1;
                return 0;
            }
            return (long) Math.ceil((1 - this.tokens) / this.perNano);
        }

        synchronized void giveBack() {
            this.tokens = Math.min(this.capacity, this.tokens + 1);
        }
    }
}
