package io.pgqueue.internal.enqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.pgqueue.EnqueueOptions;
import io.pgqueue.InvalidJobException;
import io.pgqueue.JobRequest;
import io.pgqueue.JobTags;
import io.pgqueue.QueueDefaults;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskGroups;
import io.pgqueue.TaskHandler;
import io.pgqueue.internal.store.NewJob;
import org.springframework.core.ResolvableType;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.ObjectMapper;

/**
 * Turns a job request into the row to insert, checking everything first so that bad input writes
 * nothing: options against the task's defaults (priority, delay, delay tolerance, attempts, dedup
 * key), the payload as JSON within the size limit and readable as the handler's payload type, and
 * the headers with the trace context and the job's group.
 */
public final class JobPreparer {

    private final PayloadWriter payloads;

    private final ObjectMapper mapper;

    /** The handler's payload type of each task, {@code Object} where it is not known. */
    private final Map<String, Class<?>> payloadTypes = new ConcurrentHashMap<>();

    /**
     * @param payloads writes payloads as JSON within the size limit
     */
    public JobPreparer(PayloadWriter payloads) {
        this.payloads = payloads;
        this.mapper = payloads.mapper();
    }

    /**
     * Checks a job and turns it into the row to insert: options against the task's defaults, the
     * payload written as JSON (within the size limit) and readable as the handler's payload type,
     * the headers with the propagated trace context and the job's group.
     * @param task the job's task
     * @param request the job
     * @param propagated the trace context's headers, which the job's own headers override
     * @return the row, in no partition yet
     * @throws InvalidJobException (or a subclass) if the job could not be enqueued
     */
    public NewJob prepare(TaskDefinition task, JobRequest request, Map<String, String> propagated) {
        EnqueueOptions options = request.options();
        String name = task.name();
        if (request.payload() == null) {
            throw new InvalidJobException("The payload of a '" + name + "' job must not be null: its handler would "
                    + "get null");
        }
        int priority = options.priority() != null ? options.priority() : task.priority();
        TaskDefinition.validatePriority(priority, "Priority of a '" + name + "' job");
        if (options.runAt() != null && options.delay() != null) {
            throw new InvalidJobException("A '" + name + "' job has both a run-at time and a delay; give one");
        }
        long delay = requireNonNegative(options.delay(), name, "delay");
        Duration tolerance = options.delayTolerance() != null ? options.delayTolerance() : task.delayTolerance();
        Long toleranceMillis = tolerance == null ? null : requireNonNegative(tolerance, name, "delay tolerance");
        int maxAttempts = options.maxAttempts() != null ? options.maxAttempts() : task.maxAttempts();
        if (maxAttempts < 1) {
            throw new InvalidJobException("Max attempts of a '" + name + "' job must be at least 1, was " + maxAttempts);
        }
        String dedupKey = options.dedupKey();
        if (dedupKey == null && task.dedupKey() != null) {
            dedupKey = deriveDedupKey(task, request.payload());
        }
        if (dedupKey != null && (dedupKey.isBlank() || dedupKey.length() > QueueDefaults.MAX_DEDUP_KEY_LENGTH)) {
            throw new InvalidJobException("Dedup key of a '" + name + "' job must be non-blank and at most "
                    + QueueDefaults.MAX_DEDUP_KEY_LENGTH + " characters");
        }
        if (dedupKey != null && dedupKey.indexOf('\u0000') >= 0) {
            throw new InvalidJobException("Dedup key of a '" + name + "' job holds the character U+0000, which "
                    + "PostgreSQL cannot store");
        }
        String json = this.payloads.write(name, request.payload());
        requireReadable(task, request.payload(), json);
        String payload = this.payloads.seal(task, json);
        Map<String, String> allHeaders = options.headers();
        if (!propagated.isEmpty()) {
            // Explicit headers win over the propagated trace context.
            allHeaders = new LinkedHashMap<>(propagated);
            allHeaders.putAll(options.headers());
        }
        allHeaders = withGroup(task, request.payload(), allHeaders);
        allHeaders = withTags(task, allHeaders);
        String headers = allHeaders.isEmpty() ? "{}" : this.mapper.writeValueAsString(allHeaders);
        PayloadWriter.requireNoNul(headers, "A header (or the group key) of a '" + name + "' job");
        return new NewJob(name, payload, headers, priority, options.runAt(), delay, toleranceMillis, maxAttempts,
                dedupKey);
    }

    /**
     * Puts the task's tags before the job's own, each once.
     * @throws InvalidJobException if a tag given as a header is not valid, or there are too many
     */
    private static Map<String, String> withTags(TaskDefinition task, Map<String, String> headers) {
        String given = headers.get(QueueDefaults.TAGS_HEADER);
        if (task.tags().isEmpty() && given == null) {
            return headers;
        }
        List<String> tags = new ArrayList<>(task.tags());
        tags.addAll(JobTags.parse(given));
        Map<String, String> all = new LinkedHashMap<>(headers);
        all.put(QueueDefaults.TAGS_HEADER, JobTags.join(JobTags.check(tags, "a '" + task.name() + "' job")));
        return all;
    }

    /**
     * Adds the job's group, derived from its payload when the enqueue gave none and the task has a
     * key function, and the mark of a sequence that blocks on failure.
     * @throws InvalidJobException if the group key is blank or too long
     */
    private static Map<String, String> withGroup(TaskDefinition task, Object payload, Map<String, String> headers) {
        String group = group(task, payload, headers);
        TaskGroups groups = task.groups();
        if (group == null) {
            return headers;
        }
        if (group.isBlank() || group.length() > QueueDefaults.MAX_GROUP_KEY_LENGTH) {
            throw new InvalidJobException("Group key of a '" + task.name() + "' job must be non-blank and at most "
                    + QueueDefaults.MAX_GROUP_KEY_LENGTH + " characters, was '" + group + "'");
        }
        Map<String, String> all = new LinkedHashMap<>(headers);
        all.put(QueueDefaults.GROUP_HEADER, group);
        if (groups != null && groups.mode() == TaskGroups.Mode.SEQUENCE && groups.onFailure() == TaskGroups.OnFailure.BLOCK) {
            all.put(QueueDefaults.SEQUENCE_HEADER, "block");
        }
        return all;
    }

    /**
     * @param task the job's task
     * @param payload its payload
     * @param headers its headers
     * @return a job's group: the header given at enqueue, else the task's key function's, else for
     * a task with groups {@value QueueDefaults#DEFAULT_GROUP}; {@code null} for none
     */
    public static String group(TaskDefinition task, Object payload, Map<String, String> headers) {
        String group = headers.get(QueueDefaults.GROUP_HEADER);
        TaskGroups groups = task.groups();
        if (group == null && groups != null && groups.key() != null) {
            group = groups.key().apply(payload);
        }
        if (group == null && groups != null) {
            // Without a group of its own a job of a grouped task takes its turn with the others.
            group = QueueDefaults.DEFAULT_GROUP;
        }
        return group;
    }

    /**
     * A payload that is not of the handler's payload type (e.g. enqueued by task name) must at
     * least be readable as it, or the job could only fail when it runs.
     */
    private void requireReadable(TaskDefinition task, Object payload, String json) {
        Class<?> expected = this.payloadTypes.computeIfAbsent(task.name(), name -> payloadType(task));
        if (expected == Object.class || expected.isInstance(payload)) {
            return;
        }
        try {
            this.mapper.readValue(json, expected);
        }
        catch (JacksonException ex) {
            throw new InvalidJobException("Payload of a '" + task.name() + "' job (" + payload.getClass().getName()
                    + ") cannot be read as " + expected.getName() + ", the payload type of its handler: "
                    + ex.getOriginalMessage(), ex);
        }
    }

    private static Class<?> payloadType(TaskDefinition task) {
        if (task.handlerType() == null) {
            return Object.class;
        }
        Class<?> type = ResolvableType.forClass(task.handlerType()).as(TaskHandler.class).resolveGeneric(0);
        return type == null ? Object.class : type;
    }

    private static String deriveDedupKey(TaskDefinition task, Object payload) {
        try {
            return task.dedupKey().apply(payload);
        }
        catch (RuntimeException ex) {
            throw new InvalidJobException("Dedup key of a '" + task.name() + "' job cannot be derived from its payload: "
                    + ex.getMessage(), ex);
        }
    }

    private static long requireNonNegative(Duration value, String task, String what) {
        if (value == null) {
            return 0;
        }
        if (value.isNegative()) {
            throw new InvalidJobException("The " + what + " of a '" + task + "' job must not be negative, was " + value);
        }
        return value.toMillis();
    }
    /**
     * Prepares a job of a workflow or with dependencies: as any job, without a dedup key.
     * @param task the job's task
     * @param request the job
     * @param propagated the trace context's headers
     * @param what names the job in the error
     * @return the row
     * @throws InvalidJobException if it could not be enqueued, or has a dedup key
     */
    public NewJob prepareDependent(TaskDefinition task, JobRequest request, Map<String, String> propagated, String what) {
        NewJob job = prepare(task, request, propagated);
        if (job.dedupKey() != null) {
            throw new InvalidJobException(what + " has a dedup key; jobs in a workflow cannot have one");
        }
        return job;
    }

    /**
     * Rejects the headers only workflows set: a job cannot claim a workflow's membership or step, or
     * the counts of its dependencies, by hand.
     * @param request the job
     * @throws InvalidJobException if it sets one of them
     */
    public static void requireNoWorkflowHeaders(JobRequest request) {
        for (String name : request.options().headers().keySet()) {
            if (name.equals(QueueDefaults.WORKFLOW_HEADER) || name.startsWith(QueueDefaults.WORKFLOW_HEADER + ".")
                    || name.startsWith("pgqueue.dependencies.") || name.equals(QueueDefaults.PARENT_HEADER)
                    || name.startsWith(QueueDefaults.PARENT_HEADER + ".")) {
                throw new InvalidJobException("The header '" + name + "' of a '" + request.task() + "' job is set by "
                        + "pgqueue's workflows and child jobs; leave it out (copying a running job's headers would copy it)");
            }
        }
    }
}
