package io.pgqueue.autoconfigure;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

import io.pgqueue.BulkAction;
import io.pgqueue.DedupPolicy;
import io.pgqueue.DoctorCheck;
import io.pgqueue.InvalidSettingException;
import io.pgqueue.JobAttempt;
import io.pgqueue.JobPage;
import io.pgqueue.JobQuery;
import io.pgqueue.JobSnapshot;
import io.pgqueue.JobStep;
import io.pgqueue.NodeInfo;
import io.pgqueue.QueueAction;
import io.pgqueue.QueueAdmin;
import io.pgqueue.QueueAdminException;
import io.pgqueue.RateLimit;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskGroups;
import io.pgqueue.WorkflowInfo;
import io.pgqueue.balance.PartitionBalancer;
import io.pgqueue.message.MessageQueueException;
import io.pgqueue.message.MessageQueueInfo;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.observe.LimitStatus;
import io.pgqueue.observe.QueueStatistics;
import io.pgqueue.observe.QueueStats;
import io.pgqueue.observe.TaskStats;
import io.pgqueue.schedule.CatchUp;
import io.pgqueue.schedule.Schedule;
import io.pgqueue.schedule.ScheduleInfo;
import io.pgqueue.shard.PartitionMoveResult;
import io.pgqueue.shard.ShardException;
import io.pgqueue.shard.ShardLayout;
import io.pgqueue.worker.PoolState;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code queues} Actuator endpoint: what is queued, running, stuck and failing, per task, pool
 * and node — read from the cached statistics, never a query per request — and the operator's
 * controls. Write operations change the queue: they are off unless
 * {@code management.endpoint.queues.access=unrestricted}; protect them like any Actuator write
 * access. A rejected request is an {@link InvalidEndpointRequestException}; over HTTP,
 * {@link QueueEndpointWebExtension} answers it 404, 409 or 400 by the {@link QueueAdminException.Reason}
 * it carries as its cause.
 * <ul>
 * <li>{@code GET /actuator/queues}: tasks, pools, nodes;</li>
 * <li>{@code GET /actuator/queues/{task}}: one task with its most recent failures;</li>
 * <li>{@code GET /actuator/queues/doctor}: what makes the queue slow or stuck (see {@link QueueAdmin#doctor()});</li>
 * <li>{@code GET /actuator/queues/{task}/{jobId}}: one job with its payload and result;</li>
 * <li>{@code GET /actuator/queues/workflows/{id}}: one workflow with its jobs and their results;</li>
 * <li>{@code GET /actuator/queues/jobs/{group}?task=&tag=&match=...}: one page of a search, as the console's;</li>
 * <li>{@code GET /actuator/queues/actions/latest}, {@code GET /actuator/queues/actions/{id}}: the audit trail, one action;</li>
 * <li>{@code GET /actuator/queues/history/{window}}: what each task did over {@code 1h}, {@code 24h} or {@code 7d};</li>
 * <li>{@code GET /actuator/queues/message-queues/{name}?limit=&window=}: one message queue, its oldest messages and history;</li>
 * <li>{@code POST /actuator/queues/{task}} with {@code {"action": "pause" | "resume" | "rerun-failed" | "rescue"}};</li>
 * <li>{@code POST /actuator/queues/{task}/{jobId}} with {@code {"action": "rerun" | "cancel"}};</li>
 * <li>{@code POST /actuator/queues/jobs/{group}} with {@code {"action": ..., <filters>}}: a bulk action;</li>
 * <li>{@code POST /actuator/queues/message-queues/{name}} with {@code {"action": "redrive", "to": <queue>}}:
 * moves a dead-letter queue's visible messages back.</li>
 * </ul>
 */
@Endpoint(id = "queues", defaultAccess = Access.READ_ONLY)
public class QueueEndpoint {

    private static final int RECENT_FAILURES = 20;

    /** What job data reads as when it is not shown. */
    static final String HIDDEN = "hidden: without Spring Security the endpoint shows no job data unless "
            + "pgqueue.endpoint.allow-unauthenticated-job-data=true";

    /** The read of {@link #task} that runs {@link QueueAdmin#doctor()} instead of describing a task. */
    private static final String DOCTOR = "doctor";

    /** {@link #HIDDEN} as a JSON value, in place of a message's attributes. */
    static final String HIDDEN_JSON = "\"" + HIDDEN + "\"";

    /** Running workflows, and finished ones, listed by {@link #queues()}: at most this many of each. */
    private static final int WORKFLOWS_LISTED = 20;

    /** Writes the payload of a {@code schedule} action given as a JSON object rather than as text. */
    private static final JsonMapper PAYLOADS = JsonMapper.builder().build();

    private static final int RECENT_DECISIONS = 20;

    private final QueueAdmin admin;

    private final QueueStatistics stats;

    private final QueueTaskBindings tasks;

    private final ObjectProvider<QueueWorkerNode> workers;

    private final LocalDeadlineMisses misses;

    private final PartitionBalancer balancer;

    private final MessageQueues messages;

    /** Whether reads carry job data: with Spring Security, or when the application allows it unauthenticated. */
    private final boolean showJobData;

    private final RedactedFields redacted;

    private final EncryptedPayloads payloads;

    /** Whether encrypted payloads are shown decrypted: to the reader role over HTTP, see {@link #as(String, boolean)}. */
    private final boolean decrypts;

    QueueEndpoint(QueueAdmin admin, QueueStatistics stats, QueueTaskBindings tasks,
            ObjectProvider<QueueWorkerNode> workers, LocalDeadlineMisses misses, PartitionBalancer balancer,
            MessageQueues messages, boolean showJobData, RedactedFields redacted, EncryptedPayloads payloads,
            boolean decrypts) {
        this.showJobData = showJobData;
        this.redacted = redacted;
        this.payloads = payloads;
        this.decrypts = decrypts;
        this.balancer = balancer;
        this.messages = messages;
        this.admin = admin;
        this.stats = stats;
        this.tasks = tasks;
        this.workers = workers;
        this.misses = misses;
    }

    /**
     * @param actor who acts, or {@code null}
     * @param decrypts whether they see encrypted payloads decrypted
     * @return this endpoint acting through {@link QueueAdmin#as}, so that its actions are recorded as
     * theirs, showing encrypted payloads decrypted or not
     */
    QueueEndpoint as(@Nullable String actor, boolean decrypts) {
        return new QueueEndpoint(this.admin.as(actor), this.stats, this.tasks, this.workers, this.misses, this.balancer,
                this.messages, this.showJobData, this.redacted, this.payloads, decrypts);
    }

    /** @return the role whose users see encrypted payloads decrypted, or {@code null} */
    @Nullable String readerRole() {
        return this.payloads.readerRole();
    }

    /**
     * Describes every task, the pools of this node and the registered nodes.
     * @return the description
     */
    @ReadOperation
    public Map<String, Object> queues() {
        QueueStats latest = this.stats.latest();
        Map<String, Object> tasks = new LinkedHashMap<>();
        for (String task : this.admin.knownTasks()) {
            tasks.put(task, describe(task, latest.task(task)));
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("statsTakenAt", latest.takenAt());
        if (latest.error() != null) {
            body.put("statsError", latest.error().toString());
        }
        body.put("tasks", tasks);
        body.put("schedules", this.admin.schedules().stream().map(this::schedule).toList());
        body.put("workflows", this.admin.workflows(WORKFLOWS_LISTED).stream().map(QueueEndpoint::workflow).toList());
        body.put("pools", pools());
        body.put("nodes", this.admin.nodes().stream().map(NodeInfo::describe).toList());
        body.put("shards", shards());
        if (this.balancer.sharded()) {
            body.put("balancer", balancer());
        }
        if (this.messages != null) {
            this.messages.latestCounts().filter(counted -> !counted.counts().isEmpty()).ifPresent(counted -> {
                Map<String, Object> section = new LinkedHashMap<>();
                section.put("countedAt", counted.takenAt());
                section.put("queues", QueueHealthIndicator.messageQueues(counted));
                body.put("messageQueues", section);
            });
        }
        return body;
    }

    /**
     * Acts on the shards of a sharded queue: {@code shards/partitions/<partition>} with
     * {@code move} moves the partition to the shard named in {@code shard};
     * {@code shards/shard/<name>} with {@code drain} has the balancer move every partition off the
     * shard, and {@code undrain} lets it take partitions again.
     * @param scope {@code shards}
     * @param kind {@code partitions} or {@code shard}
     * @param target the partition, or the shard's name
     * @param action {@code move}; {@code drain} or {@code undrain}
     * @param shard the shard to move a partition to
     * @return what changed
     */
    @WriteOperation
    public Map<String, Object> shardAction(@Selector String scope, @Selector String kind, @Selector String target,
            @Nullable String action, @Nullable String shard) {
        if ("shards".equals(scope) && "shard".equals(kind)) {
            String drain = normalize(action);
            if (!"drain".equals(drain) && !"undrain".equals(drain)) {
                throw new InvalidEndpointRequestException("Unknown action '" + action + "' for a shard; use drain or "
                        + "undrain", "Unknown action");
            }
            call(() -> {
                try {
                    this.balancer.drain(target, "drain".equals(drain));
                }
                catch (ShardException ex) {
                    // The balancer refuses a drain only for a shard that is not configured.
                    throw new QueueAdminException(QueueAdminException.Reason.NOT_FOUND, ex.getMessage(), ex);
                }
                return null;
            });
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("shard", target);
            body.put("draining", "drain".equals(drain));
            return body;
        }
        if (!"shards".equals(scope) || !"partitions".equals(kind)) {
            throw new InvalidEndpointRequestException("Unknown path '" + scope + "/" + kind + "/" + target + "'; "
                    + "partitions are moved at shards/partitions/<partition>, shards drained at shards/shard/<name>",
                    "Unknown path");
        }
        int partition = parsePartition(target);
        if (!"move".equals(normalize(action))) {
            throw new InvalidEndpointRequestException("Unknown action '" + action + "' for a partition; use move",
                    "Unknown action");
        }
        if (shard == null || shard.isBlank()) {
            throw new InvalidEndpointRequestException("Missing 'shard' in the request body: the shard to move the "
                    + "partition to", "Missing shard");
        }
        PartitionMoveResult result = call(() -> this.admin.movePartition(partition, shard.strip()));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("partition", partition);
        body.put("from", result.source());
        body.put("to", result.target());
        body.put("jobsMoved", result.jobsMoved());
        body.put("jobsLeftRunning", result.jobsLeft());
        body.put("messagesMoved", result.messagesMoved());
        body.put("millis", result.duration().toMillis());
        this.stats.refresh();
        return body;
    }

    private static int parsePartition(String partition) {
        try {
            return Integer.parseInt(partition.strip());
        }
        catch (NumberFormatException ex) {
            throw new InvalidEndpointRequestException("Partition '" + partition + "' is not a number", "Invalid partition");
        }
    }

    /** The balancer: who runs it, the last round this node ran, the drained shards and the latest decisions. */
    private Map<String, Object> balancer() {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("enabledHere", this.balancer.enabled());
        body.put("leadingHere", this.balancer.leading());
        this.balancer.leader().ifPresent(leader -> body.put("leader", Map.of("node", leader.node(),
                "until", leader.until())));
        body.put("draining", this.balancer.draining());
        this.balancer.lastRound().ifPresent(round -> {
            Map<String, Object> last = new LinkedHashMap<>();
            last.put("at", round.at());
            last.put("gini", round.gini());
            last.put("balancing", round.balancing());
            last.put("overloaded", round.overloaded());
            last.put("loads", round.loads());
            last.put("blockedByFriction", round.blockedByFriction());
            body.put("lastRound", last);
        });
        body.put("moves", this.balancer.moves());
        body.put("blockedByFriction", this.balancer.blockedByFriction());
        body.put("decisions", this.balancer.recentDecisions(RECENT_DECISIONS));
        return body;
    }

    /** The shards, with the partitions each holds, and the partitions moving now. */
    private Map<String, Object> shards() {
        ShardLayout layout = this.admin.shards();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("sharded", layout.sharded());
        body.put("partitions", layout.partitions());
        body.put("mapVersion", layout.mapVersion());
        Map<String, QueueStats> stats = this.stats.latest().shards();
        Map<String, Object> each = new LinkedHashMap<>();
        for (ShardLayout.Shard shard : layout.shards()) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("number", shard.number());
            entry.put("partitions", shard.partitions());
            QueueStats counted = stats.get(shard.name());
            if (counted != null) {
                entry.put("activeJobs", counted.tasks().values().stream()
                    .mapToLong(task -> task.ready() + task.scheduled() + task.starting() + task.running())
                    .sum());
                entry.put("oldestDueAgeSeconds", counted.tasks().values().stream().mapToDouble(TaskStats::lagSeconds)
                    .max().orElse(0));
                if (counted.error() != null) {
                    entry.put("statsError", counted.error().toString());
                }
            }
            each.put(shard.name(), entry);
        }
        body.put("shards", each);
        body.put("moving", layout.moving().stream().map(move -> Map.of("partition", move.partition(), "from",
                move.from(), "to", move.to())).toList());
        return body;
    }

    /**
     * Describes one task, with its most recent failures.
     * @param task the task
     * @return the description
     */
    @ReadOperation
    public Map<String, Object> task(@Selector String task) {
        if (DOCTOR.equals(task)) {
            return doctor();
        }
        requireKnown(task);
        Map<String, Object> body = describe(task, this.stats.latest().task(task));
        body.put("recentFailures", this.admin.recentFailures(task, RECENT_FAILURES).stream().map(failure -> {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("id", failure.id());
            entry.put("attempt", failure.attempt());
            entry.put("error", jobData(failure.error()));
            entry.put("failedAt", failure.failedAt());
            return entry;
        }).toList());
        body.put("schedules", this.admin.schedules().stream().filter(each -> each.schedule().task().equals(task))
            .map(this::schedule).toList());
        return body;
    }

    /**
     * Describes one workflow (or batch) with each of its jobs and their results,
     * {@code workflows/<id>}; one job with its payload and result, {@code <task>/<jobId>}; one page
     * of a search, {@code jobs/<group>} (the filters as the console's API takes them, see
     * {@link JobQuery#fromParameters}, with {@code after}, {@code limit} and {@code count=true} for
     * the number of matching jobs too); the audit trail, {@code actions/latest} (newest first, before
     * the action {@code before}), or one action with its progress, {@code actions/<id>}; what each
     * task (or {@code task}) did per minute or hour, {@code history/1h}, {@code history/24h},
     * {@code history/7d}.
     * @param scope {@code workflows}, {@code jobs}, {@code actions}, {@code history}, or the job's task
     * @param id the workflow id, the group, {@code latest} or the action id, the window, or the job id
     * @param task a search's task, or the history's
     * @param from a search's start of its time range
     * @param to a search's end of its time range
     * @param dedupKey a search's dedup key
     * @param error a search's error text
     * @param tag a search's tags (comma-separated, or several)
     * @param match a search's value matches, e.g. {@code payload.customer.id=42} (one or several)
     * @param ids a search's job ids (comma-separated)
     * @param after the {@code next} of a search's previous page
     * @param limit the most jobs (or actions) on the page
     * @param count {@code true}: a search counts its matching jobs too
     * @param before the audit trail's page ends before this action id
     * @param window a message queue's history window: {@code 1h}, {@code 24h} (the default) or {@code 7d}
     * @return the description, or {@code null} (404) when there is no such workflow, job of the task,
     * action or message queue
     */
    @ReadOperation
    public @Nullable Map<String, Object> workflowOrJob(@Selector String scope, @Selector String id, @Nullable String task,
            @Nullable String from, @Nullable String to, @Nullable String dedupKey, @Nullable String error,
            @Nullable Object tag, @Nullable Object match, @Nullable String ids, @Nullable String after,
            @Nullable String limit, @Nullable String count, @Nullable String before, @Nullable String window) {
        switch (scope) {
            case "message-queues" -> {
                return messageQueue(id, limit, window);
            }
            case "jobs" -> {
                return search(filters(id, task, from, to, dedupKey, error, tag, match, ids), after, limit, count);
            }
            case "actions" -> {
                return actions(id, limit, before);
            }
            case "history" -> {
                return history(id, task);
            }
            case "workflows" -> {
                return workflow(number(id, "workflow id"));
            }
            default -> {
                long jobId = number(id, "job id");
                return this.admin.job(jobId).filter(job -> job.task().equals(scope)).map(this::job).orElse(null);
            }
        }
    }

    /** {@code doctor}: what makes the queue slow or stuck that an operator can fix, shard by shard. */
    private Map<String, Object> doctor() {
        List<DoctorCheck> checks = this.admin.doctor();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", checks.stream().anyMatch(check -> "FAIL".equals(check.status())) ? "FAIL"
                : checks.stream().anyMatch(check -> "WARN".equals(check.status())) ? "WARN" : "OK");
        body.put("checks", checks);
        return body;
    }

    /** One message queue: its counts, rates, oldest messages (job data) and history. */
    private @Nullable Map<String, Object> messageQueue(String name, @Nullable String limit, @Nullable String window) {
        String span = window == null || window.isBlank() ? "24h" : window.strip();
        Duration duration;
        try {
            duration = HistoryFigures.window(span);
        }
        catch (IllegalArgumentException ex) {
            throw new InvalidEndpointRequestException(ex.getMessage(), "Invalid window");
        }
        int peek = limit == null || limit.isBlank() ? 20 : (int) number(limit, "limit");
        if (peek < 1 || peek > 100) {
            throw new InvalidEndpointRequestException("limit of a message queue's messages must be 1 to 100, was " + peek,
                    "Invalid limit");
        }
        MessageQueueInfo info;
        try {
            info = this.messages.queue(name);
        }
        catch (MessageQueueException ex) {
            return null;
        }
        Map<String, Object> body = MessageQueueViews.summary(this.messages, info, this.messages.counts(name), this.admin.messageCounts(MessageQueueViews.RATE_WINDOW).get(name));
        body.put("messages", MessageQueueViews.messages(this.messages.peek(name, peek), Instant.now(), this.showJobData,
                this.redacted, HIDDEN, HIDDEN_JSON));
        body.put("history", MessageQueueViews.history(this.admin.messageHistory(name, duration), span, duration));
        return body;
    }

    private Map<String, Object> search(JobQuery query, @Nullable String after, @Nullable String limit, @Nullable String count) {
        JobQuery page = query.withLimit(limit == null || limit.isBlank() ? JobQuery.DEFAULT_LIMIT : (int) number(limit, "limit"))
            .after(after);
        JobPage found = this.admin.jobs(page);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("state", query.group().name());
        body.put("filter", query.describe());
        if ("true".equalsIgnoreCase(count == null ? null : count.strip())) {
            body.put("count", this.admin.count(query));
        }
        body.put("jobs", found.jobs().stream().map(job -> {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("id", job.id());
            entry.put("task", job.task());
            entry.put("state", job.state());
            entry.put("priority", job.priority());
            entry.put("attempt", job.attempt());
            entry.put("maxAttempts", job.maxAttempts());
            entry.put("createdAt", job.createdAt());
            entry.put("scheduleTime", job.scheduleTime());
            entry.put("startedAt", job.startedAt());
            entry.put("finishedAt", job.finishedAt());
            entry.put("dedupKey", job.dedupKey());
            entry.put("tags", job.tags());
            entry.put("error", jobData(job.error()));
            return entry;
        }).toList());
        body.put("next", found.next());
        return body;
    }

    private Map<String, Object> history(String window, @Nullable String task) {
        Duration span;
        try {
            span = HistoryFigures.window(window);
        }
        catch (IllegalArgumentException ex) {
            throw new InvalidEndpointRequestException(ex.getMessage(), "Invalid window");
        }
        Map<String, Object> tasks = new LinkedHashMap<>();
        this.admin.history(span).forEach((name, history) -> {
            if (task == null || task.isBlank() || task.strip().equals(name)) {
                tasks.put(name, HistoryFigures.merged(List.of(history)));
            }
        });
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("window", window);
        body.put("stepSeconds", span.compareTo(Duration.ofDays(1)) <= 0 ? 60 : 3600);
        body.put("tasks", tasks);
        return body;
    }

    private @Nullable Map<String, Object> actions(String id, @Nullable String limit, @Nullable String before) {
        if (!"latest".equals(id)) {
            return this.admin.action(number(id, "action id")).map(QueueEndpoint::action).orElse(null);
        }
        int size = limit == null || limit.isBlank() ? JobQuery.DEFAULT_LIMIT : (int) number(limit, "limit");
        Long older = before == null || before.isBlank() ? null : number(before, "before");
        return Map.of("actions", call(() -> this.admin.actions(older, size)).stream().map(QueueEndpoint::action).toList());
    }

    private static Map<String, Object> action(QueueAction action) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", action.id());
        body.put("actor", action.actor());
        body.put("action", action.action());
        body.put("target", action.target());
        body.put("state", action.state());
        body.put("matched", action.matched());
        body.put("acted", action.acted());
        body.put("skipped", action.skipped());
        body.put("node", action.node());
        body.put("message", action.message());
        body.put("startedAt", action.startedAt());
        body.put("updatedAt", action.updatedAt());
        body.put("finishedAt", action.finishedAt());
        return body;
    }

    /** A search's group and filters, read as the console's API reads them; a bad one is a 400 naming it. */
    private JobQuery filters(String group, @Nullable String task, @Nullable String from, @Nullable String to,
            @Nullable String dedupKey, @Nullable String error, @Nullable Object tag, @Nullable Object match,
            @Nullable Object ids) {
        Map<String, List<String>> parameters = new LinkedHashMap<>();
        parameters.put("state", List.of(group));
        parameters.put("task", strings(task));
        parameters.put("from", strings(from));
        parameters.put("to", strings(to));
        parameters.put("dedupKey", strings(dedupKey));
        parameters.put("error", strings(error));
        parameters.put("tag", strings(tag));
        // In a request body every field is a string: several matches come one per line.
        parameters.put("match", strings(match).stream().flatMap(each -> each.lines()).toList());
        parameters.put("ids", List.of(String.join(",", strings(ids))));
        try {
            JobQuery query = JobQuery.fromParameters(name -> parameters.getOrDefault(name, List.of()));
            this.redacted.requireSearchable(query);
            return query;
        }
        catch (IllegalArgumentException ex) {
            throw new InvalidEndpointRequestException(ex.getMessage(), "Invalid filter");
        }
    }

    /** A request's value as texts: one text, or each of a list (a JSON array in a body, a repeated query parameter). */
    private static List<String> strings(@Nullable Object value) {
        if (value == null) {
            return List.of();
        }
        if (value instanceof java.util.Collection<?> values) {
            return values.stream().filter(java.util.Objects::nonNull).map(String::valueOf).toList();
        }
        return List.of(String.valueOf(value));
    }

    private static long number(String text, String what) {
        try {
            return Long.parseLong(text.strip());
        }
        catch (NumberFormatException ex) {
            throw new InvalidEndpointRequestException("'" + text + "' is not a " + what, "Invalid " + what);
        }
    }

    private @Nullable Map<String, Object> workflow(long id) {
        return this.admin.workflow(id).map(info -> {
            Map<String, Object> body = workflow(info);
            body.put("jobs", info.steps().stream().map(step -> {
                Map<String, Object> job = new LinkedHashMap<>();
                job.put("step", step.step());
                job.put("id", step.jobId());
                job.put("task", step.task());
                job.put("state", step.state());
                job.put("attempt", step.attempt());
                job.put("lastError", jobData(step.lastError()));
                job.put("waitsFor", step.waitsFor());
                job.put("after", step.after());
                job.put("createdAt", step.createdAt());
                job.put("startedAt", step.startedAt());
                job.put("finishedAt", step.finishedAt());
                job.put("result", jobData(this.redacted.redact(step.result())));
                return job;
            }).toList());
            return body;
        }).orElse(null);
    }

    /** One job as {@code <task>/<jobId>} shows it; its payload, error and result are job data. */
    private Map<String, Object> job(JobSnapshot job) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", job.id());
        body.put("task", job.task());
        body.put("state", job.state());
        body.put("priority", job.priority());
        body.put("attempt", job.attempt());
        body.put("maxAttempts", job.maxAttempts());
        body.put("scheduleTime", job.scheduleTime());
        body.put("createdAt", job.createdAt());
        body.put("startedAt", job.startedAt());
        body.put("finishedAt", job.finishedAt());
        body.put("leaseOwner", job.leaseOwner());
        body.put("dedupKey", job.dedupKey());
        body.put("progress", this.redacted.redact(job.progress()));
        body.put("payload", jobData(this.redacted.redact(this.payloads.show(job.task(), job.payload(),
                this.decrypts && this.showJobData))));
        body.put("lastError", jobData(job.lastError()));
        body.put("result", jobData(this.redacted.redact(job.result())));
        List<JobAttempt> attempts = this.admin.attempts(job.id()).orElse(List.of());
        if (!attempts.isEmpty()) {
            body.put("attempts", attempts.stream().map(this::attempt).toList());
        }
        List<JobStep> steps = this.admin.steps(job.id()).orElse(List.of());
        if (!steps.isEmpty()) {
            body.put("steps", steps.stream().map(this::step).toList());
        }
        return body;
    }

    /** One durable step of a job; its value (a signal's payload) is job data. */
    private Map<String, Object> step(JobStep step) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", step.name());
        body.put("kind", step.kind());
        body.put("place", step.seq());
        body.put("attempt", step.attempt());
        body.put("startedAt", step.startedAt());
        body.put("finishedAt", step.finishedAt());
        body.put("wakeAt", step.wakeAt());
        body.put("signal", step.signal());
        body.put("result", jobData(this.redacted.redact(step.result())));
        return body;
    }

    /** One attempt of a job's history; its error and log lines are job data. */
    private Map<String, Object> attempt(JobAttempt attempt) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("attempt", attempt.attempt());
        body.put("outcome", attempt.outcome());
        body.put("node", attempt.node());
        body.put("startedAt", attempt.startedAt());
        body.put("endedAt", attempt.endedAt());
        body.put("durationMs", attempt.duration().toMillis());
        body.put("error", jobData(attempt.error()));
        body.put("log", this.showJobData ? attempt.log().stream().map(line -> Map.of("at", line.at(), "level", line.level(),
                "message", line.message())).toList() : HIDDEN);
        body.put("droppedLogLines", attempt.droppedLogLines());
        return body;
    }

    /** A workflow's counts, without its jobs. */
    private static Map<String, Object> workflow(WorkflowInfo info) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", info.id());
        body.put("name", info.name());
        body.put("state", info.state());
        body.put("onDependencyFailure", info.onDependencyFailure().name());
        body.put("jobs", info.jobs());
        body.put("completed", info.completed());
        body.put("failed", info.failed());
        body.put("cancelled", info.cancelled());
        body.put("createdAt", info.createdAt());
        body.put("finishedAt", info.finishedAt());
        return body;
    }

    /** A schedule of recurring jobs, with its next and last slot and its last job. */
    private Map<String, Object> schedule(ScheduleInfo info) {
        Map<String, Object> body = new LinkedHashMap<>();
        Schedule schedule = info.schedule();
        body.put("name", schedule.name());
        body.put("task", schedule.task());
        body.put("cron", schedule.cron());
        body.put("zone", schedule.zone().getId());
        body.put("catchUp", schedule.catchUp().name());
        body.put("payload", jobData(schedule.payload()));
        body.put("configured", info.configured());
        body.put("nextFire", info.nextFire());
        body.put("lastFire", info.lastFire());
        Map<String, Object> last = null;
        if (info.lastJobId() != null) {
            last = new LinkedHashMap<>();
            last.put("id", info.lastJobId());
            last.put("state", info.lastJobState());
        }
        body.put("lastJob", last);
        return body;
    }

    /**
     * Acts on a task with an action that takes no fields; see
     * {@link #taskAction(String, String, String, String, String, Object, String)}.
     * @param task the task
     * @param action {@code pause}, {@code resume}, {@code rerun-failed} or {@code rescue}
     * @return what changed
     */
    public Map<String, Object> taskAction(String task, @Nullable String action) {
        return taskAction(task, action, null, null, null, null, null);
    }

    /**
     * Acts on a task: {@code pause}, {@code resume}, {@code rerun-failed} (all its failed jobs),
     * {@code rescue} (every expired lease, now), {@code schedule} (adds or replaces the recurring
     * jobs {@code name} at every slot of {@code cron} in {@code zone}, default UTC, with
     * {@code payload}, default {@code {}}, and {@code catchUp}, default RUN_ONCE) or
     * {@code unschedule} (removes the schedule {@code name} added so).
     * @param task the task
     * @param action the action
     * @param name {@code schedule}, {@code unschedule}: the schedule's name
     * @param cron {@code schedule}: the cron expression
     * @param zone {@code schedule}: the time zone
     * @param payload {@code schedule}: the payload of its jobs (a JSON value)
     * @param catchUp {@code schedule}: RUN_ONCE, RUN_ALL or SKIP
     * @return what changed
     */
    @WriteOperation
    public Map<String, Object> taskAction(@Selector String task, @Nullable String action, @Nullable String name,
            @Nullable String cron, @Nullable String zone, @Nullable Object payload, @Nullable String catchUp) {
        requireKnown(task);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("task", task);
        body.put("action", action);
        switch (normalize(action)) {
            case "pause" -> body.put("changed", this.admin.pause(task));
            case "resume" -> body.put("changed", this.admin.resume(task));
            case "rerun-failed" -> body.put("rerun", call(() -> this.admin.rerunFailed(task)));
            case "rescue" -> body.put("rescued", this.admin.rescueNow());
            case "schedule" -> {
                Schedule schedule = newSchedule(task, name, cron, zone, payload, catchUp);
                call(() -> {
                    this.admin.putSchedule(schedule);
                    return null;
                });
                body.put("schedule", schedule(this.admin.schedules().stream()
                    .filter(each -> each.schedule().name().equals(schedule.name())).findFirst().orElseThrow()));
            }
            case "unschedule" -> body.put("removed", call(() -> this.admin.removeSchedule(required(name, "name"))));
            default -> throw new InvalidEndpointRequestException("Unknown action '" + action + "' for a task; use "
                    + "pause, resume, rerun-failed, rescue, schedule or unschedule", "Unknown action");
        }
        this.stats.refresh();
        return body;
    }

    /**
     * Acts on one job: {@code rerun} (a FAILED job) or {@code cancel}.
     * @param task the job's task
     * @param jobId the job
     * @param action the action
     * @return what changed
     */
    public Map<String, Object> jobAction(String task, long jobId, @Nullable String action) {
        return jobAction(task, Long.toString(jobId), action, null, null, null, null, null, null, null, null, null, null,
                null);
    }

    /**
     * Acts on one job, {@code <task>/<jobId>}: {@code rerun} (a FAILED job) or {@code cancel}; or
     * starts a bulk action on every job a search matches, {@code jobs/<group>} (see
     * {@link QueueAdmin#startBulk}): {@code rerun}, {@code cancel}, {@code delete}, {@code run-now},
     * {@code run-at} (with {@code at}) or {@code priority} (with {@code priority}), the filters as
     * {@link #workflowOrJob} reads them.
     * @param scope {@code jobs}, or the job's task
     * @param target the group of a bulk action, or the job id
     * @param action the action
     * @param task a bulk action's task filter
     * @param from a bulk action's start of its time range
     * @param to a bulk action's end of its time range
     * @param dedupKey a bulk action's dedup key
     * @param error a bulk action's error text
     * @param tag a bulk action's tags
     * @param match a bulk action's value matches
     * @param ids a bulk action's job ids
     * @param at {@code run-at}: the instant
     * @param priority {@code priority}: the priority
     * @param max {@code redrive}: the most messages to move (default: every visible one)
     * @return what changed; a bulk action as recorded, with its id to follow at {@code actions/<id>}
     */
    @WriteOperation
    public Map<String, Object> jobAction(@Selector String scope, @Selector String target, @Nullable String action,
            @Nullable String task, @Nullable String from, @Nullable String to, @Nullable String dedupKey,
            @Nullable String error, @Nullable Object tag, @Nullable Object match, @Nullable Object ids,
            @Nullable String at, @Nullable Object priority, @Nullable String max) {
        if ("message-queues".equals(scope)) {
            return redrive(target, action, to, max);
        }
        if ("jobs".equals(scope)) {
            JobQuery query = filters(target, task, from, to, dedupKey, error, tag, match, ids);
            BulkAction bulk;
            try {
                bulk = BulkAction.of(action, at, priority == null ? null : String.valueOf(priority));
            }
            catch (IllegalArgumentException ex) {
                throw new InvalidEndpointRequestException(ex.getMessage(), "Invalid action");
            }
            return action(call(() -> this.admin.startBulk(query, bulk)));
        }
        long jobId = number(target, "job id");
        requireKnown(scope);
        requireJobOf(scope, jobId);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("jobId", jobId);
        body.put("action", action);
        switch (normalize(action)) {
            case "rerun" -> {
                call(() -> {
                    this.admin.rerun(jobId);
                    return null;
                });
                body.put("state", "READY");
            }
            case "cancel" -> body.put("result", call(() -> this.admin.cancel(jobId)));
            default -> throw new InvalidEndpointRequestException("Unknown action '" + action + "' for a job; use rerun "
                    + "or cancel", "Unknown action");
        }
        this.stats.refresh();
        return body;
    }

    /** {@code redrive}: a dead-letter queue's visible messages back to {@code to}. */
    private Map<String, Object> redrive(String queue, @Nullable String action, @Nullable String to, @Nullable String max) {
        if (!"redrive".equals(normalize(action))) {
            throw new InvalidEndpointRequestException("Unknown action '" + action + "' for a message queue; use redrive",
                    "Unknown action");
        }
        if (to == null || to.isBlank()) {
            throw new InvalidEndpointRequestException("A redrive needs the queue to move the messages to: \"to\"",
                    "Missing queue");
        }
        long most = max == null || max.isBlank() ? Integer.MAX_VALUE : number(max, "max");
        int moved = call(() -> this.admin.redriveMessages(queue, to.strip(), (int) Math.min(most, Integer.MAX_VALUE)));
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("queue", queue);
        body.put("to", to.strip());
        body.put("moved", moved);
        return body;
    }

    private Map<String, Object> describe(String task, TaskStats stats) {
        Map<String, Object> counts = new LinkedHashMap<>();
        counts.put("ready", stats.ready());
        counts.put("scheduled", stats.scheduled());
        counts.put("starting", stats.starting());
        counts.put("running", stats.running());
        counts.put("failed", stats.failed());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("counts", counts);
        body.put("oldestDueAgeSeconds", stats.lagSeconds());
        body.put("stuckLeases", stats.stuck());
        body.put("completedLastMinute", stats.completedLastMinute());
        body.put("failedLastMinute", stats.failedLastMinute());
        body.put("deadlineMisses", this.misses.count(task));
        body.put("paused", stats.paused());
        QueueTaskBindings.Binding binding = this.tasks.all().get(task);
        if (binding != null) {
            body.put("settings", settings(binding));
            if (binding.definition().hasGlobalLimits()) {
                body.put("limits", limits(binding.definition(), stats));
            }
        }
        return body;
    }

    /** A task's limits across nodes, how much of them is in use and what waits on them. */
    private static Map<String, Object> limits(TaskDefinition definition, TaskStats stats) {
        Map<String, Object> limits = new LinkedHashMap<>();
        if (definition.globalConcurrency() > 0) {
            limits.put("globalConcurrency", definition.globalConcurrency());
            limits.put("claimed", stats.starting() + stats.running());
        }
        RateLimit rate = definition.rateLimit();
        if (rate != null) {
            limits.put("rate", rate.permits() + "/" + InvalidSettingException.display(rate.period()));
            limits.put("rateBurst", rate.burst());
        }
        TaskGroups groups = definition.groups();
        if (groups != null) {
            limits.put("groups", groups.mode().name());
            if (groups.mode() == TaskGroups.Mode.FAIR && groups.concurrency() > 0) {
                limits.put("groupConcurrency", groups.concurrency());
            }
            if (groups.mode() == TaskGroups.Mode.SEQUENCE) {
                limits.put("sequenceOnFailure", groups.onFailure().name());
            }
            limits.putIfAbsent("claimed", stats.starting() + stats.running());
        }
        LimitStatus status = LimitStatus.of(definition, stats);
        limits.put("waitingJobs", status.waitingJobs());
        limits.put("waitingOn", status.reason());
        return limits;
    }

    private static Map<String, Object> settings(QueueTaskBindings.Binding binding) {
        Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("handler", binding.beanName());
        if (binding.task() != null) {
            settings.put("pool", binding.task().pool());
            settings.put("concurrency", binding.task().concurrency());
            settings.put("timeout", binding.task().timeout().toString());
        }
        settings.put("maxAttempts", binding.definition().maxAttempts());
        settings.put("priority", binding.definition().priority());
        Duration tolerance = binding.definition().delayTolerance();
        settings.put("delayTolerance", tolerance == null ? null : tolerance.toString());
        settings.put("dedupPolicy", binding.definition().dedupPolicy().mode().name());
        if (binding.definition().dedupPolicy() instanceof DedupPolicy.Unique unique) {
            settings.put("uniquePeriod", unique.period().toString());
            settings.put("uniqueStates", unique.states());
        }
        settings.put("history", binding.definition().history());
        return settings;
    }

    private Map<String, Object> pools() {
        QueueWorkerNode lifecycle = this.workers.getIfAvailable();
        Map<String, Object> pools = new LinkedHashMap<>();
        if (lifecycle == null) {
            return pools;
        }
        for (PoolState pool : lifecycle.pools()) {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("capacity", pool.capacity());
            body.put("busy", pool.busy());
            body.put("hung", pool.hung());
            body.put("buffered", pool.buffered());
            body.put("tasks", pool.tasks());
            pools.put(pool.name(), body);
        }
        return pools;
    }

    private void requireKnown(String task) {
        call(() -> {
            if (!this.admin.knownTasks().contains(task)) {
                throw new QueueAdminException(QueueAdminException.Reason.NOT_FOUND, "Unknown task '" + task
                        + "'; known tasks are " + this.admin.knownTasks());
            }
            return null;
        });
    }

    /** A job is acted on under its own task's path only: its id alone might name another task's job. */
    private void requireJobOf(String task, long jobId) {
        call(() -> {
            // A job that does not exist is the action's own answer (404 naming the id).
            String actual = this.admin.job(jobId).map(JobSnapshot::task).orElse(task);
            if (!task.equals(actual)) {
                throw new QueueAdminException(QueueAdminException.Reason.NOT_FOUND, "Job " + jobId + " is a job of task '"
                        + actual + "', not of '" + task + "'; nothing was changed");
            }
            return null;
        });
    }

    /** The schedule a {@code schedule} action describes; a bad field is a 400 answer naming it. */
    private Schedule newSchedule(String task, @Nullable String name, @Nullable String cron, @Nullable String zone,
            @Nullable Object payload, @Nullable String catchUp) {
        try {
            Schedule schedule = Schedule.of(required(name, "name"), task, required(cron, "cron"));
            if (zone != null && !zone.isBlank()) {
                schedule = schedule.withZone(ZoneId.of(zone.strip()));
            }
            if (payload != null) {
                schedule = schedule.withPayload(payload instanceof String text ? text : PAYLOADS.writeValueAsString(payload));
            }
            if (catchUp != null && !catchUp.isBlank()) {
                schedule = schedule.withCatchUp(CatchUp.valueOf(catchUp.strip().toUpperCase(Locale.ROOT).replace('-', '_')));
            }
            return schedule;
        }
        catch (InvalidSettingException ex) {
            throw new InvalidEndpointRequestException(ex.getMessage(), "Invalid schedule");
        }
        catch (DateTimeException ex) {
            throw new InvalidEndpointRequestException("'" + zone + "' is not a time zone: " + ex.getMessage(), "Invalid zone");
        }
        catch (IllegalArgumentException ex) {
            throw new InvalidEndpointRequestException("Unknown catchUp '" + catchUp + "'; use RUN_ONCE, RUN_ALL or SKIP",
                    "Invalid catchUp");
        }
    }

    private static String required(@Nullable String value, String field) {
        if (value == null || value.isBlank()) {
            throw new InvalidEndpointRequestException("Missing '" + field + "' in the request body", "Missing " + field);
        }
        return value.strip();
    }

    private static String normalize(@Nullable String action) {
        if (action == null || action.isBlank()) {
            throw new InvalidEndpointRequestException("Missing 'action' in the request body", "Missing action");
        }
        return action.strip().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * Turns the admin's refusal into Actuator's rejected request, with its message, and keeps it as
     * the cause: its reason decides the HTTP status.
     */
    private static <T> T call(Supplier<T> action) {
        try {
            return action.get();
        }
        catch (QueueAdminException ex) {
            throw new InvalidEndpointRequestException(ex.getMessage(), ex.getMessage(), ex);
        }
    }


    /** @return the text when job data is shown, else {@link #HIDDEN} ({@code null} stays {@code null}) */
    private String jobData(String text) {
        return text == null || this.showJobData ? text : HIDDEN;
    }
}
