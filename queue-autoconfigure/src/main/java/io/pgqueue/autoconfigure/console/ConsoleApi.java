package io.pgqueue.autoconfigure.console;

import java.security.Principal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import io.pgqueue.BulkAction;
import io.pgqueue.CancelResult;
import io.pgqueue.JobAttempt;
import io.pgqueue.JobPage;
import io.pgqueue.JobQuery;
import io.pgqueue.JobSnapshot;
import io.pgqueue.JobStep;
import io.pgqueue.JobState;
import io.pgqueue.JobTags;
import io.pgqueue.NodeInfo;
import io.pgqueue.QueueAction;
import io.pgqueue.QueueAdmin;
import io.pgqueue.QueueAdminException;
import io.pgqueue.QueueDefaults;
import io.pgqueue.WorkflowInfo;
import io.pgqueue.autoconfigure.EncryptedPayloads;
import io.pgqueue.autoconfigure.HistoryFigures;
import io.pgqueue.autoconfigure.LocalDeadlineMisses;
import io.pgqueue.autoconfigure.MessageQueueViews;
import io.pgqueue.autoconfigure.QueueWorkerNode;
import io.pgqueue.autoconfigure.RedactedFields;
import io.pgqueue.message.MessageQueueCounts;
import io.pgqueue.message.MessageQueueException;
import io.pgqueue.message.MessageQueueInfo;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.message.PeekedMessage;
import io.pgqueue.observe.QueueStatistics;
import io.pgqueue.observe.QueueStats;
import io.pgqueue.observe.TaskHistory;
import io.pgqueue.observe.TaskStats;
import io.pgqueue.schedule.ScheduleInfo;
import io.pgqueue.worker.PoolState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * The console's JSON API: reads the cached statistics and acts through {@link QueueAdmin}, the
 * same as the {@code queues} Actuator endpoint. Answers errors as {@code application/problem+json}.
 */
final class ConsoleApi {

    private static final Logger log = LoggerFactory.getLogger(ConsoleApi.class);

    /** The header every action must carry: a form on another site cannot send it. */
    static final String ACTION_HEADER = "X-PgQueue-Console";

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final QueueAdmin admin;

    private final QueueStatistics stats;

    private final ObjectProvider<QueueWorkerNode> workers;

    private final ObjectProvider<LocalDeadlineMisses> misses;

    private final boolean readOnly;

    private final ConsoleAccess access;

    private final MessageQueues messages;

    private final RedactedFields redacted;

    private final EncryptedPayloads payloads;

    ConsoleApi(QueueAdmin admin, QueueStatistics stats, ObjectProvider<QueueWorkerNode> workers, ObjectProvider<LocalDeadlineMisses> misses, boolean readOnly,
            ConsoleAccess access, RedactedFields redacted, EncryptedPayloads payloads, MessageQueues messages) {
        this.access = access;
        this.payloads = payloads;
        this.messages = messages;
        this.redacted = redacted;
        this.admin = admin;
        this.stats = stats;
        this.workers = workers;
        this.misses = misses;
        this.readOnly = readOnly;
    }

    /** {@code GET api/overview}: tasks, the hour's chart, nodes, this node's pools, schedules. */
    ServerResponse overview(ServerRequest request) {
        QueueStats latest = this.stats.latest();
        LocalDeadlineMisses deadlineMisses = this.misses.getIfAvailable();
        List<Map<String, Object>> tasks = this.admin.knownTasks().stream().map(name -> {
            TaskStats task = latest.task(name);
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("name", name);
            body.put("ready", task.ready());
            body.put("scheduled", task.scheduled());
            body.put("starting", task.starting());
            body.put("running", task.running());
            body.put("failed", task.failed());
            body.put("oldestDueAgeSeconds", task.lagSeconds());
            body.put("stuckLeases", task.stuck());
            body.put("completedLastMinute", task.completedLastMinute());
            body.put("failedLastMinute", task.failedLastMinute());
            body.put("deadlineMisses", deadlineMisses == null ? null : deadlineMisses.count(name));
            body.put("paused", task.paused());
            return body;
        }).toList();
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("readOnly", this.readOnly || !this.access.admin(request));
        body.put("jobData", this.access.jobData(request));
        body.put("user", request.principal().map(Principal::getName).orElse(null));
        body.put("statsTakenAt", latest.takenAt());
        body.put("statsError", latest.error() == null ? null : latest.error().toString());
        body.put("tasks", tasks);
        body.put("history", Map.of("windowSeconds", HOUR.toSeconds(), "stepSeconds", 60,
                "points", HistoryFigures.merged(this.admin.history(HOUR).values())));
        body.put("nodes", this.admin.nodes().stream().map(NodeInfo::describe).toList());
        body.put("pools", pools());
        body.put("schedules", this.admin.schedules().stream().map(ConsoleApi::schedule).toList());
        return json(body);
    }

    private static final Duration HOUR = Duration.ofHours(1);

    /**
     * {@code GET api/history?window=24h&task=}: what every task (or one) did over {@code 1h},
     * {@code 24h} or {@code 7d}, per minute or per hour, from the queue's task history.
     */
    ServerResponse history(ServerRequest request) {
        String window = text(request, "window").filter(text -> !text.isBlank()).orElse("24h").strip();
        Duration span = HistoryFigures.window(window);
        Map<String, TaskHistory> all = this.admin.history(span);
        String task = text(request, "task").filter(text -> !text.isBlank()).map(String::strip).orElse(null);
        Collection<TaskHistory> chosen = task == null ? all.values()
                : Optional.ofNullable(all.get(task)).map(List::of).orElse(List.of());
        Set<String> tasks = new TreeSet<>(this.admin.knownTasks());
        tasks.addAll(all.keySet());
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("window", window);
        body.put("windowSeconds", span.toSeconds());
        body.put("stepSeconds", span.compareTo(Duration.ofDays(1)) <= 0 ? 60 : 3600);
        body.put("task", task);
        body.put("tasks", tasks);
        body.put("points", HistoryFigures.merged(chosen));
        return json(body);
    }

    /**
     * {@code GET api/queues}: every message queue with its counts, the age of its oldest message,
     * its dead-letter queue and the queues whose dead letters it takes.
     */
    ServerResponse queues(ServerRequest request) {
        Map<String, MessageQueueCounts> counts = this.messages.counts();
        Map<String, Map<String, Long>> rates = this.admin.messageCounts(MessageQueueViews.RATE_WINDOW);
        List<Map<String, Object>> queues = new ArrayList<>();
        String after = null;
        while (true) {
            List<MessageQueueInfo> page = this.messages.listQueues("", after, MESSAGE_QUEUES_PAGE);
            for (MessageQueueInfo info : page) {
                queues.add(MessageQueueViews.summary(this.messages, info, counts.get(info.name()), rates.get(info.name())));
            }
            if (page.size() < MESSAGE_QUEUES_PAGE) {
                break;
            }
            after = page.get(page.size() - 1).name();
        }
        return json(Map.of("queues", queues));
    }

    private static final int MESSAGE_QUEUES_PAGE = 1000;

    /**
     * {@code GET api/queues/{name}?window=24h}: one message queue, its oldest messages as they are
     * (peeked, not received), and what was done with it over {@code 1h}, {@code 24h} or {@code 7d},
     * per minute or per hour.
     */
    ServerResponse messageQueue(ServerRequest request) {
        String name = request.pathVariable("name");
        int limit = text(request, "limit").map(ConsoleApi::limit).orElse(20);
        String window = text(request, "window").filter(text -> !text.isBlank()).orElse("24h").strip();
        Duration span = HistoryFigures.window(window);
        MessageQueueInfo info;
        List<PeekedMessage> peeked;
        try {
            info = this.messages.queue(name);
            peeked = this.messages.peek(name, limit);
        }
        catch (MessageQueueException ex) {
            return problem(HttpStatus.NOT_FOUND, "No message queue is named '" + name + "'");
        }
        Map<String, Object> body = MessageQueueViews.summary(this.messages, info, this.messages.counts(name),
                this.admin.messageCounts(MessageQueueViews.RATE_WINDOW).get(name));
        body.put("messages", MessageQueueViews.messages(peeked, Instant.now(), this.access.jobData(request), this.redacted,
                ConsoleAccess.HIDDEN, ConsoleAccess.HIDDEN_JSON));
        body.put("history", MessageQueueViews.history(this.admin.messageHistory(name, span), window, span));
        return json(body);
    }

    /**
     * {@code POST api/queues/{name}/redrive?to=&max=}: moves the visible messages of a dead-letter
     * queue back to a queue (its source), at most {@code max} (default: every visible one).
     */
    ServerResponse redrive(ServerRequest request) {
        String name = request.pathVariable("name");
        String to = text(request, "to").filter(text -> !text.isBlank()).orElseThrow(() ->
                new IllegalArgumentException("A redrive needs the queue to move the messages to: to=<queue>"));
        long max = text(request, "max").filter(text -> !text.isBlank()).map(text -> number(text, "number of messages"))
            .orElse((long) Integer.MAX_VALUE);
        int moved = actor(request).redriveMessages(name, to.strip(), (int) Math.min(max, Integer.MAX_VALUE));
        return acted(request, "Moved " + moved + " message" + (moved == 1 ? "" : "s") + " from " + name + " to " + to);
    }

    /** {@code GET api/workflows}: the running workflows and batches, newest first, then the latest finished. */
    ServerResponse workflows(ServerRequest request) {
        int limit = text(request, "limit").map(ConsoleApi::limit).orElse(JobQuery.DEFAULT_LIMIT);
        if (limit < 1 || limit > JobQuery.MAX_LIMIT) {
            throw new IllegalArgumentException("limit must be 1 to " + JobQuery.MAX_LIMIT + ", was " + limit);
        }
        return json(Map.of("workflows", this.admin.workflows(limit)));
    }

    /**
     * {@code GET api/workflows/{id}}: a workflow with its steps, what each comes after, its state,
     * timing and result (job data: hidden and redacted as a job's).
     */
    ServerResponse workflow(ServerRequest request) {
        long id = number(request.pathVariable("id"), "workflow id");
        Optional<WorkflowInfo> found = this.admin.workflow(id);
        if (found.isEmpty()) {
            return problem(HttpStatus.NOT_FOUND, "No workflow has id " + id + " (or retention removed it)");
        }
        WorkflowInfo info = found.get();
        boolean jobData = this.access.jobData(request);
        List<WorkflowInfo.Step> steps = info.steps().stream().map(step -> new WorkflowInfo.Step(step.step(), step.jobId(),
                step.task(), step.state(), step.attempt(),
                jobData || step.lastError() == null ? step.lastError() : ConsoleAccess.HIDDEN, step.waitsFor(),
                jobData ? this.redacted.redact(step.result()) : step.result() == null ? null : ConsoleAccess.HIDDEN_JSON,
                step.after(), step.createdAt(), step.startedAt(), step.finishedAt())).toList();
        return json(new WorkflowInfo(info.id(), info.name(), info.state(), info.onDependencyFailure(), info.jobs(),
                info.completed(), info.failed(), info.cancelled(), info.createdAt(), info.finishedAt(), steps));
    }

    /** {@code GET api/jobs}: one page of a group of jobs, see {@link JobQuery}. */
    ServerResponse jobs(ServerRequest request) {
        JobQuery query = query(request)
            .withLimit(text(request, "limit").map(ConsoleApi::limit).orElse(JobQuery.DEFAULT_LIMIT))
            .after(text(request, "after").orElse(null));
        JobPage page = this.admin.jobs(query);
        boolean jobData = this.access.jobData(request);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("state", query.group().name());
        body.put("jobs", jobData ? page.jobs() : page.jobs().stream().map(job -> new JobPage.Job(job.id(), job.task(),
                job.state(), job.priority(), job.attempt(), job.maxAttempts(), job.createdAt(), job.scheduleTime(),
                job.startedAt(), job.finishedAt(), job.dedupKey(), job.error() == null ? null : ConsoleAccess.HIDDEN,
                job.leaseOwner(), job.tags())).toList());
        body.put("next", page.next());
        return json(body);
    }

    /** {@code GET api/jobs/count}: how many jobs the filters match, and the bulk actions that apply to them. */
    ServerResponse count(ServerRequest request) {
        JobQuery query = query(request);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("state", query.group().name());
        body.put("filter", query.describe());
        body.put("count", this.admin.count(query));
        body.put("actions", Arrays.stream(BulkAction.Kind.values())
            .filter(kind -> kind.groups().contains(query.group()))
            .map(kind -> kind.name().toLowerCase(Locale.ROOT).replace('_', '-'))
            .toList());
        return json(body);
    }

    /**
     * {@code POST api/bulk}: starts a bulk action on every job the filters match (or on the
     * selected {@code ids}); the answer is the action as recorded, which {@code api/actions/{id}} follows.
     */
    ServerResponse bulk(ServerRequest request) {
        JobQuery query = query(request);
        BulkAction action = BulkAction.of(text(request, "action").orElse(null), text(request, "at").orElse(null),
                text(request, "priority").orElse(null));
        QueueAction started = actor(request).startBulk(query, action);
        return json(started);
    }

    /** {@code GET api/actions}: the recorded actions, newest first: the audit trail. */
    ServerResponse actions(ServerRequest request) {
        Long before = text(request, "before").filter(text -> !text.isBlank()).map(text -> number(text, "before"))
            .orElse(null);
        int limit = text(request, "limit").map(ConsoleApi::limit).orElse(JobQuery.DEFAULT_LIMIT);
        return json(Map.of("actions", this.admin.actions(before, limit)));
    }

    /** {@code GET api/actions/{id}}: one recorded action, a bulk action's progress. */
    ServerResponse action(ServerRequest request) {
        long id = number(request.pathVariable("id"), "action id");
        return this.admin.action(id).map(ConsoleApi::json)
            .orElseGet(() -> problem(HttpStatus.NOT_FOUND, "No action has id " + id));
    }

    /**
     * The group and filters of a request, see {@link JobQuery#fromParameters}; a search inside job
     * data is refused for users who may not see it, and a match on a redacted field for everyone.
     */
    private JobQuery query(ServerRequest request) {
        JobQuery query = JobQuery.fromParameters(name -> request.params().getOrDefault(name, List.of()));
        if ((!query.matches().isEmpty() || query.errorText() != null) && !this.access.jobData(request)) {
            throw new ConsoleAccess.Refused(this.access.noJobData());
        }
        this.redacted.requireSearchable(query);
        return query;
    }

    private static long number(String text, String what) {
        try {
            return Long.parseLong(text.strip());
        }
        catch (NumberFormatException ex) {
            throw new IllegalArgumentException("'" + text + "' is not a " + what);
        }
    }

    /** The admin acting as the signed-in user, so that the audit trail says who. */
    private QueueAdmin actor(ServerRequest request) {
        return this.admin.as(request.principal().map(Principal::getName).orElse(null));
    }

    /**
     * {@code GET api/jobs/{id}}: one job with its payload, headers, last error, progress, result,
     * attempts and durable steps.
     */
    ServerResponse job(ServerRequest request) {
        long id = jobId(request);
        Optional<JobSnapshot> found = this.admin.job(id);
        if (found.isEmpty()) {
            return problem(HttpStatus.NOT_FOUND, "No job has id " + id + " (or retention removed it)");
        }
        JobSnapshot job = found.get();
        boolean jobData = this.access.jobData(request);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("id", job.id());
        body.put("task", job.task());
        body.put("state", job.state());
        body.put("priority", job.priority());
        body.put("payload", jobData ? this.redacted.redact(this.payloads.show(job.task(), job.payload(),
                this.access.decrypts(request, this.payloads.readerRole()))) : ConsoleAccess.HIDDEN_JSON);
        body.put("headers", jobData ? this.redacted.redact(job.headers()) : ConsoleAccess.HIDDEN_JSON);
        body.put("scheduleTime", job.scheduleTime());
        body.put("delayToleranceDeadline", job.delayToleranceDeadline());
        body.put("attempt", job.attempt());
        body.put("maxAttempts", job.maxAttempts());
        body.put("leaseOwner", job.leaseOwner());
        body.put("leaseDeadline", job.leaseDeadline());
        body.put("dedupKey", job.dedupKey());
        body.put("rerunRequested", job.rerunRequested());
        body.put("cancelRequested", job.cancelRequested());
        body.put("lastError", jobData || job.lastError() == null ? job.lastError() : ConsoleAccess.HIDDEN);
        body.put("createdAt", job.createdAt());
        body.put("startedAt", job.startedAt());
        body.put("finishedAt", job.finishedAt());
        body.put("progress", jobData ? this.redacted.redact(job.progress())
                : job.progress() == null ? null : ConsoleAccess.HIDDEN_JSON);
        body.put("result", jobData ? this.redacted.redact(job.result())
                : job.result() == null ? null : ConsoleAccess.HIDDEN_JSON);
        List<JobAttempt> attempts = this.admin.attempts(id).orElse(List.of());
        body.put("attempts", jobData ? attempts : attempts.stream().map(attempt -> new JobAttempt(attempt.attempt(),
                attempt.outcome(), attempt.node(), attempt.startedAt(), attempt.endedAt(),
                attempt.error() == null ? null : ConsoleAccess.HIDDEN, List.of(), attempt.droppedLogLines()
                        + attempt.log().size())).toList());
        List<JobStep> steps = this.admin.steps(id).orElse(List.of());
        body.put("steps", jobData ? steps : steps.stream().map(step -> new JobStep(step.name(), step.seq(), step.kind(),
                step.result() == null ? null : ConsoleAccess.HIDDEN_JSON, step.resultType(), step.wakeAt(), step.attempt(),
                step.startedAt(), step.finishedAt(), step.signal())).toList());
        body.put("partition", job.partition());
        body.put("workflow", workflowOf(job.headers()));
        body.put("tags", parse(job.headers()) instanceof Map<?, ?> headers && headers.get(QueueDefaults.TAGS_HEADER) != null
                ? JobTags.parse(headers.get(QueueDefaults.TAGS_HEADER).toString()) : List.of());
        return json(body);
    }

    /** {@code POST api/tasks/{task}/{action}}: pause, resume or rerun-failed. */
    ServerResponse taskAction(ServerRequest request) {
        String task = request.pathVariable("task");
        String action = request.pathVariable("action");
        String message = switch (action) {
            case "pause" -> actor(request).pause(task) ? "Paused " + task : task + " was paused already";
            case "resume" -> actor(request).resume(task) ? "Resumed " + task : task + " was not paused";
            case "rerun-failed" -> {
                int rerun = actor(request).rerunFailed(task).size();
                yield "Re-running " + rerun + " failed job" + (rerun == 1 ? "" : "s") + " of " + task;
            }
            default -> throw new IllegalArgumentException("Unknown action '" + action + "' for a task; use pause, "
                    + "resume or rerun-failed");
        };
        return acted(request, message);
    }

    /** {@code POST api/jobs/{id}/{action}}: rerun or cancel. */
    ServerResponse jobAction(ServerRequest request) {
        long id = jobId(request);
        String action = request.pathVariable("action");
        String message = switch (action) {
            case "rerun" -> {
                actor(request).rerun(id);
                yield "Job " + id + " is queued again";
            }
            case "cancel" -> actor(request).cancel(id) == CancelResult.CANCELLED ? "Job " + id + " is cancelled"
                    : "Job " + id + " is asked to stop: it ends cancelled at its worker's next heartbeat";
            default -> throw new IllegalArgumentException("Unknown action '" + action + "' for a job; use rerun or "
                    + "cancel");
        };
        return acted(request, message);
    }

    /** {@code POST api/rescue}: every expired lease, now. */
    ServerResponse rescue(ServerRequest request) {
        Map<JobState, Long> rescued = actor(request).rescueNow();
        long total = rescued.values().stream().mapToLong(Long::longValue).sum();
        return acted(request, total == 0 ? "No lease had expired" : "Rescued " + total + " job"
                + (total == 1 ? "" : "s") + " with an expired lease: " + rescued);
    }

    /** Refuses an action of a read-only console, or one without the console's header. */
    Optional<ServerResponse> refuseAction(ServerRequest request) {
        if (this.readOnly) {
            return Optional.of(problem(HttpStatus.FORBIDDEN, "The console is read-only: add Spring Security (the "
                    + "console then needs its role), or set pgqueue.console.read-only=false"));
        }
        if (!this.access.admin(request)) {
            return Optional.of(problem(HttpStatus.FORBIDDEN, this.access.noAction()));
        }
        if (request.headers().firstHeader(ACTION_HEADER) == null) {
            return Optional.of(problem(HttpStatus.FORBIDDEN, "An action needs the " + ACTION_HEADER + " header"));
        }
        return Optional.empty();
    }

    /**
     * Answers a failed request: an action the admin refused as 404, 409 or 400 by its reason, any
     * other mistake of the caller as 400, anything else as 500.
     */
    ServerResponse error(Throwable failure, ServerRequest request) {
        if (failure instanceof QueueAdminException ex) {
            HttpStatus status = switch (ex.reason()) {
                case NOT_FOUND -> HttpStatus.NOT_FOUND;
                case CONFLICT -> HttpStatus.CONFLICT;
                case INVALID -> HttpStatus.BAD_REQUEST;
            };
            return problem(status, ex.getMessage());
        }
        if (failure instanceof ConsoleAccess.Refused) {
            return problem(HttpStatus.FORBIDDEN, failure.getMessage());
        }
        if (failure instanceof IllegalArgumentException) {
            return problem(HttpStatus.BAD_REQUEST, failure.getMessage());
        }
        log.warn("The console's request {} {} failed", request.method(), request.path(), failure);
        // The failure's text may hold a statement or the database's words: they stay in the log.
        return problem(HttpStatus.INTERNAL_SERVER_ERROR, "The request failed on the server; its log says why");
    }

    static ServerResponse problem(HttpStatus status, String detail) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("type", "about:blank");
        body.put("title", status.getReasonPhrase());
        body.put("status", status.value());
        body.put("detail", detail);
        return ServerResponse.status(status).contentType(MediaType.APPLICATION_PROBLEM_JSON).body(body);
    }

    private ServerResponse acted(ServerRequest request, String message) {
        this.stats.refresh();
        log.info("Console: {} ({} {} by {})", message, request.method(), request.path(),
                request.principal().map(Principal::getName).orElse("an anonymous user"));
        return json(Map.of("message", message));
    }

    private static ServerResponse json(Object body) {
        return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).header("Cache-Control", "no-store").body(body);
    }

    private List<Map<String, Object>> pools() {
        QueueWorkerNode lifecycle = this.workers.getIfAvailable();
        if (lifecycle == null) {
            return List.of();
        }
        return lifecycle.pools().stream().map((PoolState pool) -> {
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("name", pool.name());
            body.put("capacity", pool.capacity());
            body.put("busy", pool.busy());
            body.put("hung", pool.hung());
            body.put("buffered", pool.buffered());
            body.put("tasks", List.copyOf(pool.tasks().keySet()));
            return body;
        }).toList();
    }

    private static Map<String, Object> schedule(ScheduleInfo info) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", info.schedule().name());
        body.put("task", info.schedule().task());
        body.put("cron", info.schedule().cron());
        body.put("zone", info.schedule().zone().getId());
        body.put("nextFire", info.nextFire());
        body.put("lastFire", info.lastFire());
        body.put("lastJobState", info.lastJobState());
        return body;
    }

    private static Object parse(String json) {
        if (json == null) {
            return Map.of();
        }
        try {
            return JSON.readValue(json, Object.class);
        }
        catch (JacksonException ex) {
            return Map.of();
        }
    }

    private static Long workflowOf(String headers) {
        if (parse(headers) instanceof Map<?, ?> map && map.get("pgqueue.workflow") != null) {
            try {
                return Long.valueOf(map.get("pgqueue.workflow").toString());
            }
            catch (NumberFormatException ex) {
                return null;
            }
        }
        return null;
    }

    private static long jobId(ServerRequest request) {
        String id = request.pathVariable("id");
        try {
            return Long.parseLong(id);
        }
        catch (NumberFormatException ex) {
            throw new IllegalArgumentException("'" + id + "' is not a job id");
        }
    }

    private static int limit(String limit) {
        try {
            return Integer.parseInt(limit.trim());
        }
        catch (NumberFormatException ex) {
            throw new IllegalArgumentException("limit '" + limit + "' is not a number");
        }
    }

    /** A request parameter; PostgreSQL's text holds no U+0000, so a parameter with one is refused by name. */
    private static Optional<String> text(ServerRequest request, String name) {
        Optional<String> value = request.param(name);
        if (value.isPresent() && value.get().indexOf('\u0000') >= 0) {
            throw new IllegalArgumentException(name + " must not contain the character U+0000");
        }
        return value;
    }
}
