package io.pgqueue.autoconfigure;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

import io.pgqueue.ChunkHandler;
import io.pgqueue.DedupPolicy;
import io.pgqueue.InvalidJobException;
import io.pgqueue.InvalidSettingException;
import io.pgqueue.JobState;
import io.pgqueue.QueueDefaults;
import io.pgqueue.QueueTask;
import io.pgqueue.RateLimit;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskGroups;
import io.pgqueue.schedule.CatchUp;
import io.pgqueue.schedule.Schedule;
import io.pgqueue.TaskHandler;
import io.pgqueue.TaskRegistry;
import io.pgqueue.retry.RetryPolicy;
import io.pgqueue.worker.WorkerTask;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.context.ApplicationEvent;
import org.springframework.core.ResolvableType;
import org.springframework.expression.EvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.expression.spel.support.SimpleEvaluationContext;
import org.springframework.util.ClassUtils;

/**
 * The task types of the application: every bean annotated {@link QueueTask}, with the settings of
 * its annotation overridden by {@code pgqueue.tasks.<name>.*}, plus tasks declared only in
 * properties (enqueue-only on this node). Built from bean definitions, without creating the
 * handler beans, so handlers may themselves inject the queue.
 */
public final class QueueTaskBindings {

    private static final Logger log = LoggerFactory.getLogger(QueueTaskBindings.class);

    private static final SpelExpressionParser PARSER = new SpelExpressionParser();

    private final Map<String, Binding> bindings;

    private QueueTaskBindings(Map<String, Binding> bindings) {
        this.bindings = bindings;
    }

    /**
     * One task type: its definition and, when a {@code @QueueTask} bean handles it here, the task
     * as this node's workers run it.
     *
     * @param definition the engine's view of the task
     * @param task the task as the workers run it, or {@code null} for a task declared only in
     * properties (enqueue-only on this node)
     * @param schedule its schedule from {@code cron}, or {@code null}
     * @param events the application event types that become its jobs ({@link QueueTask#events()})
     */
    public record Binding(TaskDefinition definition, @Nullable WorkerTask task, @Nullable Schedule schedule,
            List<Class<?>> events) {

        /**
         * Copies the event types.
         */
        public Binding {
            events = List.copyOf(events);
        }

        /**
         * A task without a schedule or events.
         * @param definition the task definition
         * @param task the worker task, or {@code null} for a task declared only in properties
         */
        public Binding(TaskDefinition definition, @Nullable WorkerTask task) {
            this(definition, task, null, List.of());
        }

        /** @return the handler bean's name, or {@code null} for a task declared only in properties */
        public @Nullable String beanName() {
            return this.task == null ? null : ((BeanTaskHandler) this.task.handler()).beanName();
        }
    }

    /**
     * @return the application event types each task turns into jobs, by task name; tasks without
     * any are left out
     */
    public Map<String, List<Class<?>>> eventTypes() {
        Map<String, List<Class<?>>> types = new java.util.TreeMap<>();
        this.bindings.forEach((name, binding) -> {
            if (!binding.events().isEmpty()) {
                types.put(name, binding.events());
            }
        });
        return types;
    }

    /**
     * Logs the tasks configured under {@code pgqueue.tasks} that no handler on this node runs: a
     * warning where the name is close to a handler's (a typo, whose settings apply to nothing).
     * @return this
     */
    QueueTaskBindings reportTasksWithoutHandler() {
        this.bindings.values().stream().filter(binding -> binding.beanName() == null).forEach(binding -> {
            String name = binding.definition().name();
            String nearest = this.bindings.values().stream().filter(other -> other.beanName() != null)
                .map(other -> other.definition().name())
                .filter(known -> QueueSettingsCheck.distance(known, name) <= 2)
                .findFirst().orElse(null);
            if (nearest != null) {
                log.warn("Task '{}' is configured under pgqueue.tasks but no @QueueTask bean handles it; did you mean "
                        + "'{}'? Its settings do not apply to '{}'", name, nearest, nearest);
            }
            else {
                log.info("Task '{}' is configured under pgqueue.tasks but no @QueueTask bean handles it; its jobs can "
                        + "be enqueued here and run on nodes that have its handler", name);
            }
        });
        return this;
    }

    /** @return the bindings by task name */
    public Map<String, Binding> all() {
        return this.bindings;
    }

    /** @return the schedules configured with the tasks ({@code cron}), named after their tasks */
    public List<Schedule> schedules() {
        return this.bindings.values().stream().map(Binding::schedule).filter(Objects::nonNull).toList();
    }

    /**
     * Returns the tasks this node runs: those with a handler bean, the handler beans looked up (and
     * created) now.
     * @return the worker tasks
     */
    public List<WorkerTask> workerTasks() {
        return this.bindings.values().stream()
            .map(Binding::task)
            .filter(Objects::nonNull)
            .peek(task -> ((BeanTaskHandler) task.handler()).resolve())
            .toList();
    }

    /** @return the registry of task definitions */
    public TaskRegistry registry() {
        return TaskRegistry.of(this.bindings.values().stream().map(Binding::definition).toList());
    }

    /**
     * Discovers the tasks.
     * @param beans the bean factory
     * @param properties the properties
     * @return the tasks
     * @throws QueueConfigurationException if a handler or a setting is invalid
     */
    public static QueueTaskBindings discover(ListableBeanFactory beans, QueueProperties properties) {
        Map<String, Binding> bindings = new LinkedHashMap<>();
        for (String beanName : beans.getBeanNamesForAnnotation(QueueTask.class)) {
            QueueTask annotation = beans.findAnnotationOnBean(beanName, QueueTask.class);
            Class<?> type = ClassUtils.getUserClass(beans.getType(beanName));
            Binding binding = bind(beans, beanName, type, annotation,
                    properties.getTasks().getOrDefault(annotation.name(), new QueueProperties.Task()));
            Binding existing = bindings.putIfAbsent(binding.definition().name(), binding);
            if (existing != null) {
                throw new QueueConfigurationException("Task '" + annotation.name() + "' is declared by two beans: '"
                        + existing.beanName() + "' and '" + beanName + "' (" + type.getName() + ")",
                        "Give each @QueueTask a unique name; the name is stored with every job.");
            }
        }
        properties.getTasks().forEach((name, task) -> {
            if (!bindings.containsKey(name)) {
                bindings.put(name, bindPropertiesOnly(beans, name, task));
            }
        });
        return new QueueTaskBindings(Map.copyOf(bindings));
    }

    private static Binding bind(ListableBeanFactory beans, String beanName, Class<?> type, QueueTask annotation,
            QueueProperties.Task overrides) {
        String where = "@QueueTask bean '" + beanName + "' (" + type.getName() + ")";
        validateName(annotation.name(), where);
        String prefix = "pgqueue.tasks." + annotation.name();
        boolean chunked = ChunkHandler.class.isAssignableFrom(type);
        if (TaskHandler.class.isAssignableFrom(type) == chunked) {
            throw new QueueConfigurationException(where + (chunked ? " implements both " : " implements neither ")
                    + TaskHandler.class.getName() + " nor " + ChunkHandler.class.getName(),
                    "Implement TaskHandler<YourPayload> (one job per call) or ChunkHandler<YourPayload> (chunks of jobs) "
                            + "on the class, or remove @QueueTask.");
        }
        ResolvableType payload = ResolvableType.forClass(type).as(chunked ? ChunkHandler.class : TaskHandler.class)
            .getGeneric(0);
        if (payload.resolve() == null || payload.hasUnresolvableGenerics()) {
            throw new QueueConfigurationException(where + " does not declare a concrete payload type (found '" + payload
                    + "')", "Declare the payload type, e.g. 'implements TaskHandler<SendPushRequest>'.");
        }
        int concurrency = pick(overrides.getConcurrency(), annotation.concurrency(), QueueDefaults.CONCURRENCY);
        int chunkSize = overrides.getChunkSize() != null ? overrides.getChunkSize() : annotation.chunkSize();
        Duration chunkLinger = overrides.getChunkLinger() != null ? overrides.getChunkLinger()
                : duration(annotation.chunkLinger(), QueueDefaults.CHUNK_LINGER, prefix + ".chunk-linger", where);
        if (chunked) {
            check(chunkSize >= 1, prefix + ".chunk-size", chunkSize, where, "must be at least 1 for a ChunkHandler: the "
                    + "most jobs per call");
            check(chunkSize <= concurrency, prefix + ".chunk-size", chunkSize, where, "must be at most the task's "
                    + "concurrency (" + concurrency + "): each job of a chunk holds a handler slot; raise the concurrency");
            check(!chunkLinger.isNegative(), prefix + ".chunk-linger", chunkLinger, where, "must not be negative");
        }
        else {
            check(chunkSize == 0, prefix + ".chunk-size", chunkSize, where, "applies to a ChunkHandler only");
        }
        int maxAttempts = pick(overrides.getMaxAttempts(), annotation.maxAttempts(), QueueDefaults.MAX_ATTEMPTS);
        int priority = overrides.getPriority() != null ? overrides.getPriority() : annotation.priority();
        Duration timeout = overrides.getTimeout() != null ? overrides.getTimeout()
                : duration(annotation.timeout(), QueueDefaults.TASK_TIMEOUT, prefix + ".timeout", where);
        Duration tolerance = overrides.getDelayTolerance() != null ? overrides.getDelayTolerance()
                : duration(annotation.delayTolerance(), null, prefix + ".delay-tolerance", where);
        String dedupKey = overrides.getDedupKey() != null ? overrides.getDedupKey() : annotation.dedupKey();
        QueueTask.DedupMode dedupMode = overrides.getDedupPolicy() != null ? overrides.getDedupPolicy()
                : annotation.dedupPolicy();
        String pool = overrides.getPool() != null ? overrides.getPool() : annotation.pool();
        RetryPolicy retry = retryPolicy(beans, annotation.retry(), overrides.getRetry(), prefix + ".retry", where);
        Duration uniquePeriod = overrides.getUniquePeriod() != null ? overrides.getUniquePeriod()
                : duration(annotation.uniquePeriod(), null, prefix + ".unique-period", where);
        List<JobState> uniqueStates = overrides.getUniqueStates() != null ? overrides.getUniqueStates()
                : List.of(annotation.uniqueStates());
        DedupPolicy dedup = dedupPolicy(beans, beanName, type, dedupMode, uniquePeriod, uniqueStates, prefix, where);
        Function<Object, String> key = dedupKey(dedupKey, prefix + ".dedup-key", where);
        int globalConcurrency = overrides.getGlobalConcurrency() != null ? overrides.getGlobalConcurrency()
                : annotation.globalConcurrency();
        String rate = overrides.getRate() != null ? overrides.getRate() : annotation.rate();
        Integer burst = overrides.getRateBurst() != null ? overrides.getRateBurst()
                : annotation.rateBurst() > 0 ? Integer.valueOf(annotation.rateBurst()) : null;
        String cron = overrides.getCron() != null ? overrides.getCron() : annotation.cron();
        ZoneId zone = overrides.getZone() != null ? overrides.getZone() : zone(annotation.zone(), prefix + ".zone", where);
        CatchUp catchUp = overrides.getCatchUp() != null ? overrides.getCatchUp() : annotation.catchUp();
        TaskGroups groups = groups(overrides.getGroups() != null ? overrides.getGroups() : annotation.groups(),
                overrides.getGroupKey() != null ? overrides.getGroupKey() : annotation.groupKey(),
                overrides.getGroupConcurrency() != null ? overrides.getGroupConcurrency() : annotation.groupConcurrency(),
                overrides.getSequenceOnFailure() != null ? overrides.getSequenceOnFailure() : annotation.sequenceOnFailure(),
                prefix, where);
        return checked(where, () -> {
            TaskDefinition definition = TaskDefinition.builder(annotation.name())
                .globalConcurrency(globalConcurrency)
                .rateLimit(rateLimit(annotation.name(), rate, burst))
                .groups(groups)
                .maxAttempts(maxAttempts)
                .priority(priority)
                .delayTolerance(tolerance)
                .retryPolicy(retry)
                .dedupPolicy(dedup)
                .dedupKey(key)
                .terminalExceptions(annotation.terminal())
                .handlerType(type)
                .history(overrides.getHistory() != null ? overrides.getHistory() : annotation.history())
                .tags(overrides.getTags() != null ? overrides.getTags() : List.of(annotation.tags()))
                .encrypted(overrides.getEncrypted() != null ? overrides.getEncrypted() : annotation.encrypted())
                .build();
            return new Binding(definition, new WorkerTask(definition, new BeanTaskHandler(beans, beanName, chunkSize, chunkLinger),
                    payload.getType(), concurrency, timeout, pool), schedule(annotation.name(), cron, zone, catchUp),
                    events(annotation, payload.resolve(), where));
        });
    }

    /**
     * @return how the task's claims treat groups, or {@code null} for not at all: a group key or a
     * concurrency per group without a mode makes them fair
     */
    private static TaskGroups groups(QueueTask.GroupMode mode, String key, int concurrency, TaskGroups.OnFailure onFailure,
            String prefix, String where) {
        Function<Object, String> keyFunction = payloadKey(key, prefix + ".group-key", where, "groupKey", "tenantId");
        QueueTask.GroupMode effective = mode == QueueTask.GroupMode.NONE && (keyFunction != null || concurrency != 0)
                ? QueueTask.GroupMode.FAIR : mode;
        if (effective == QueueTask.GroupMode.NONE) {
            return null;
        }
        check(effective == QueueTask.GroupMode.FAIR || concurrency == 0, prefix + ".group-concurrency", concurrency, where,
                "applies to fair groups; a sequence runs one job of a group at a time");
        TaskGroups groups = effective == QueueTask.GroupMode.SEQUENCE ? TaskGroups.sequence(onFailure)
                : TaskGroups.fair(concurrency);
        return groups.withKey(keyFunction);
    }

    /** @return the task's schedule (named after the task, payload {@code {}}), or {@code null} without a cron expression */
    private static Schedule schedule(String task, String cron, ZoneId zone, CatchUp catchUp) {
        if (cron == null || cron.isBlank()) {
            return null;
        }
        try {
            return Schedule.of(task, task, cron.trim()).withZone(zone).withCatchUp(catchUp);
        }
        catch (InvalidSettingException ex) {
            throw ex.within("tasks." + task);
        }
    }

    private static ZoneId zone(String zone, String property, String where) {
        if (zone.isBlank()) {
            return ZoneOffset.UTC;
        }
        try {
            return ZoneId.of(zone);
        }
        catch (DateTimeException ex) {
            throw new QueueConfigurationException(where + ": '" + zone + "' is not a time zone: " + ex.getMessage(),
                    "Fix @QueueTask(zone = ...) or '" + property + "': a region such as Europe/Amsterdam, or UTC.");
        }
    }

    /** @return the task's rate limit, or {@code null} when the rate is empty */
    private static RateLimit rateLimit(String task, String rate, Integer burst) {
        if (rate.isBlank()) {
            InvalidSettingException.require(burst == null, "tasks." + task + ".rate-burst", burst,
                    "needs a rate ({tasks." + task + ".rate})");
            return null;
        }
        try {
            return RateLimit.parse(rate, burst);
        }
        catch (InvalidSettingException ex) {
            throw ex.within("tasks." + task);
        }
    }

    /**
     * Builds a task's records; a value the core refuses is reported as the property (or the
     * annotation attribute) to fix.
     */
    private static Binding checked(String where, Supplier<Binding> build) {
        try {
            return build.get();
        }
        catch (InvalidSettingException ex) {
            String property = "pgqueue." + ex.setting();
            throw new QueueConfigurationException(where + ": invalid value '" + InvalidSettingException.display(ex.value())
                    + "' for '" + property + "': " + ex.rule("pgqueue."), "Fix the value on @QueueTask or under '"
                            + property + "'.");
        }
    }

    private static Binding bindPropertiesOnly(ListableBeanFactory beans, String name, QueueProperties.Task task) {
        String where = "Task '" + name + "' declared under pgqueue.tasks without a @QueueTask handler";
        validateName(name, where);
        String prefix = "pgqueue.tasks." + name;
        int maxAttempts = task.getMaxAttempts() != null ? task.getMaxAttempts() : QueueDefaults.MAX_ATTEMPTS;
        int priority = task.getPriority() != null ? task.getPriority() : QueueDefaults.PRIORITY;
        QueueTask.DedupMode mode = task.getDedupPolicy() != null ? task.getDedupPolicy() : QueueTask.DedupMode.KEEP_EXISTING;
        check(mode != QueueTask.DedupMode.MERGE_IF_READY, prefix + ".dedup-policy", mode, where,
                "needs a handler bean that implements DedupPolicy.PayloadMerger");
        DedupPolicy dedup = dedupPolicy(beans, null, Object.class, mode, task.getUniquePeriod(),
                task.getUniqueStates() != null ? task.getUniqueStates() : List.of(JobState.COMPLETED), prefix, where);
        Function<Object, String> key = dedupKey(task.getDedupKey(), prefix + ".dedup-key", where);
        return checked(where, () -> new Binding(TaskDefinition.builder(name)
            .maxAttempts(maxAttempts)
            .priority(priority)
            // Enforced where handlers run; known here for the health, the endpoint and the gauges.
            .globalConcurrency(task.getGlobalConcurrency() != null ? task.getGlobalConcurrency() : 0)
            .rateLimit(rateLimit(name, task.getRate() != null ? task.getRate() : "", task.getRateBurst()))
            .groups(groups(task.getGroups() != null ? task.getGroups() : QueueTask.GroupMode.NONE, task.getGroupKey(),
                    task.getGroupConcurrency() != null ? task.getGroupConcurrency() : 0,
                    task.getSequenceOnFailure() != null ? task.getSequenceOnFailure() : TaskGroups.OnFailure.SKIP, prefix,
                    where))
            .delayTolerance(task.getDelayTolerance())
            // Retries are decided on the nodes that run the handler, with its own settings.
            .retryPolicy(QueueDefaults.RETRY_POLICY)
            .dedupPolicy(dedup)
            .dedupKey(key)
            // Known here for the rescues this node makes of the task's jobs.
            .history(Boolean.TRUE.equals(task.getHistory()))
            // The task's tags go on the jobs this node enqueues.
            .tags(task.getTags() != null ? task.getTags() : List.of())
            // Its payloads are encrypted by the nodes that enqueue it, too.
            .encrypted(Boolean.TRUE.equals(task.getEncrypted()))
            .build(), null));
    }

    private static RetryPolicy retryPolicy(ListableBeanFactory beans, QueueTask.Backoff backoff,
            QueueProperties.Retry overrides, String prefix, String where) {
        QueueTask.Backoff.Kind kind = overrides.getKind() != null ? overrides.getKind() : backoff.kind();
        Duration delay = overrides.getDelay() != null ? overrides.getDelay()
                : duration(backoff.delay(), QueueDefaults.RETRY_DELAY, prefix + ".delay", where);
        Duration step = overrides.getStep() != null ? overrides.getStep()
                : duration(backoff.step(), delay, prefix + ".step", where);
        Duration maxDelay = overrides.getMaxDelay() != null ? overrides.getMaxDelay()
                : duration(backoff.maxDelay(), QueueDefaults.RETRY_MAX_DELAY, prefix + ".max-delay", where);
        double multiplier = overrides.getMultiplier() != null ? overrides.getMultiplier() : backoff.multiplier();
        double jitter = overrides.getJitter() != null ? overrides.getJitter() : backoff.jitter();
        String policyBean = overrides.getPolicyBean() != null ? overrides.getPolicyBean() : backoff.policyBean();
        if (kind == QueueTask.Backoff.Kind.CUSTOM) {
            check(policyBean != null && !policyBean.isBlank(), prefix + ".policy-bean", policyBean, where,
                    "must name a RetryPolicy bean for a CUSTOM backoff");
            check(beans.containsBean(policyBean) && beans.isTypeMatch(policyBean, RetryPolicy.class),
                    prefix + ".policy-bean", policyBean, where, "is not the name of a RetryPolicy bean");
            // Looked up when first needed, so the policy bean may depend on the queue.
            return attempt -> beans.getBean(policyBean, RetryPolicy.class).delayAfter(attempt);
        }
        try {
            return switch (kind) {
                case FIXED -> RetryPolicy.fixed(delay);
                case LINEAR -> RetryPolicy.linear(delay, step, maxDelay);
                case EXPONENTIAL -> RetryPolicy.exponential(delay, multiplier, maxDelay, jitter);
                case CUSTOM -> throw new IllegalStateException("handled above");
            };
        }
        catch (IllegalArgumentException ex) {
            throw new QueueConfigurationException(where + ": invalid retry backoff: " + ex.getMessage(),
                    "Fix the backoff on @QueueTask(retry = ...) or under '" + prefix + "'.");
        }
    }

    /** The event types of a task, each one its payload type can hold and none a Spring ApplicationEvent. */
    private static List<Class<?>> events(QueueTask annotation, Class<?> payloadType, String where) {
        for (Class<?> event : annotation.events()) {
            if (!ClassUtils.isAssignable(payloadType, event)) {
                throw new QueueConfigurationException(where + " turns events of type " + event.getName() + " into jobs, "
                        + "but its payload type " + payloadType.getName() + " cannot hold them",
                        "List in @QueueTask(events = ...) only types the handler's payload type can hold, or change "
                                + "the payload type.");
            }
            if (ApplicationEvent.class.isAssignableFrom(event)) {
                throw new QueueConfigurationException(where + " turns events of type " + event.getName() + " into jobs, "
                        + "but it is a Spring ApplicationEvent, which carries its source and does not travel as JSON",
                        "Publish a plain object (a record) with ApplicationEventPublisher.publishEvent(Object) and list "
                                + "its type.");
            }
        }
        return List.of(annotation.events());
    }

    private static DedupPolicy dedupPolicy(ListableBeanFactory beans, String beanName, Class<?> type,
            QueueTask.DedupMode mode, Duration uniquePeriod, List<JobState> uniqueStates, String prefix, String where) {
        check(mode == QueueTask.DedupMode.UNIQUE || uniquePeriod == null, prefix + ".unique-period", uniquePeriod, where,
                "applies to the dedup policy UNIQUE");
        return switch (mode) {
            case UNIQUE -> {
                if (uniquePeriod == null) {
                    throw new QueueConfigurationException(where + " uses the dedup policy UNIQUE without a period",
                            "Set @QueueTask(uniquePeriod = \"10m\") or '" + prefix + ".unique-period': how long after "
                                    + "its enqueue a finished job holds its dedup key.");
                }
                try {
                    yield DedupPolicy.unique(uniquePeriod, uniqueStates.toArray(JobState[]::new));
                }
                catch (InvalidJobException ex) {
                    throw new QueueConfigurationException(where + ": " + ex.getMessage(), "Fix '" + prefix
                            + ".unique-period' or '" + prefix + ".unique-states' (or the annotation's uniquePeriod and "
                            + "uniqueStates).");
                }
            }
            case KEEP_EXISTING -> DedupPolicy.keepExisting();
            case REPLACE_IF_READY -> DedupPolicy.replaceIfReady();
            case RERUN -> DedupPolicy.rerun();
            case MERGE_IF_READY -> {
                if (beanName == null || !DedupPolicy.PayloadMerger.class.isAssignableFrom(type)) {
                    throw new QueueConfigurationException(where + " uses MERGE_IF_READY but does not implement "
                            + "DedupPolicy.PayloadMerger", "Implement DedupPolicy.PayloadMerger on the handler to say "
                            + "how two payloads merge, or choose another dedup policy.");
                }
                yield DedupPolicy.mergeIfReady((existing, incoming) -> beans
                    .getBean(beanName, DedupPolicy.PayloadMerger.class)
                    .merge(existing, incoming));
            }
        };
    }

    private static Function<Object, String> dedupKey(String expression, String property, String where) {
        return payloadKey(expression, property, where, "dedupKey", "'folder-' + folderId");
    }

    /**
     * Compiles a SpEL expression evaluated against the payload that gives a key (dedup key, group).
     * @return the function, or {@code null} when the expression is empty
     */
    private static Function<Object, String> payloadKey(String expression, String property, String where, String attribute,
            String example) {
        if (expression == null || expression.isBlank()) {
            return null;
        }
        Expression parsed;
        try {
            parsed = PARSER.parseExpression(expression);
        }
        catch (ParseException ex) {
            throw new QueueConfigurationException(where + ": " + attribute + " expression '" + expression
                    + "' is not valid SpEL: " + ex.getMessage(), "Fix the expression on @QueueTask(" + attribute
                    + " = ...) or '" + property + "'; it is evaluated against the payload, e.g. \"" + example + "\".");
        }
        EvaluationContext context = SimpleEvaluationContext.forReadOnlyDataBinding().withInstanceMethods().build();
        return payload -> {
            Object key = parsed.getValue(context, payload);
            return key == null ? null : key.toString();
        };
    }

    private static void validateName(String name, String where) {
        try {
            TaskDefinition.validateName(name);
        }
        catch (InvalidJobException ex) {
            throw new QueueConfigurationException(where + ": " + ex.getMessage(),
                    "Choose a stable task name of letters, digits and . _ : -");
        }
    }

    private static int pick(Integer override, int annotated, int fallback) {
        if (override != null) {
            return override;
        }
        return annotated == -1 ? fallback : annotated;
    }

    private static Duration duration(String text, Duration fallback, String property, String where) {
        if (text == null || text.isBlank()) {
            return fallback;
        }
        try {
            return DurationStyle.detectAndParse(text);
        }
        catch (IllegalArgumentException ex) {
            throw new QueueConfigurationException(where + ": '" + text + "' is not a duration",
                    "Write durations as in Spring Boot properties (\"500ms\", \"30s\", \"5m\", \"PT5M\"), on the "
                            + "annotation or under '" + property + "'.");
        }
    }

    private static void check(boolean condition, String property, Object value, String where, String rule) {
        if (!condition) {
            throw new QueueConfigurationException(where + ": " + property.substring(property.lastIndexOf('.') + 1)
                    + " " + InvalidSettingException.display(value) + " " + rule, "Fix the value on @QueueTask or under '" + property + "'.");
        }
    }
}
