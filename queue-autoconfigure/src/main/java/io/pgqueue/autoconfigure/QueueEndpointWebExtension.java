package io.pgqueue.autoconfigure;

import java.security.Principal;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

import io.pgqueue.QueueAdminException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * The {@code queues} endpoint over HTTP: the same operations, but a rejected request is answered
 * with a JSON body that says what was wrong and what is allowed, whatever the application's error
 * settings, and the rejection is logged at INFO. The status follows the
 * {@link QueueAdminException.Reason} of the refusal: {@code 404 Not Found} for an unknown task, job,
 * partition or shard, {@code 409 Conflict} for one whose state forbids the action (re-running a job
 * that is not FAILED, cancelling a finished one), and {@code 400 Bad Request} for a request that is
 * wrong in itself (an unknown or missing action, a job id that is not a number, a bad schedule).
 */
@EndpointWebExtension(endpoint = QueueEndpoint.class)
public class QueueEndpointWebExtension {

    private static final Logger log = LoggerFactory.getLogger(QueueEndpointWebExtension.class);

    /** {@link WebEndpointResponse} names no constant for {@code 409 Conflict}. */
    private static final int STATUS_CONFLICT = 409;

    private final QueueEndpoint endpoint;

    QueueEndpointWebExtension(QueueEndpoint endpoint) {
        this.endpoint = endpoint;
    }

    /**
     * Describes every task, the pools of this node and the registered nodes.
     * @return the description
     */
    @ReadOperation
    public WebEndpointResponse<Map<String, Object>> queues() {
        return new WebEndpointResponse<>(this.endpoint.queues());
    }

    /**
     * Describes one task, with its most recent failures.
     * @param task the task
     * @return the description, or 404 for an unknown task
     */
    @ReadOperation
    public WebEndpointResponse<Map<String, Object>> task(@Selector String task) {
        return answer("GET", task, null, () -> this.endpoint.task(task));
    }

    /**
     * Reads a job, a search, the audit trail, the history or a workflow; see
     * {@link QueueEndpoint#workflowOrJob}. A job's encrypted payload is shown decrypted to users with
     * {@code pgqueue.encryption.reader-role}.
     * @param security who asks
     * @param scope {@code jobs}, {@code actions}, {@code history}, {@code workflows} or a task
     * @param id the group, action, window, workflow or job
     * @param task a search's task, or the history's
     * @param from a search's start of its time range
     * @param to a search's end of its time range
     * @param dedupKey a search's dedup key
     * @param error a search's error text
     * @param tag a search's tags
     * @param match a search's value matches
     * @param ids a search's job ids
     * @param after the {@code next} of a search's previous page
     * @param limit the most jobs (or actions) on the page
     * @param count {@code true}: a search counts its matching jobs too
     * @param before the audit trail's page ends before this action id
     * @param window a message queue's history window
     * @return the description, 404 when there is none, or 400 with the reason
     */
    @ReadOperation
    public WebEndpointResponse<Map<String, Object>> workflowOrJob(@Nullable SecurityContext security, @Selector String scope,
            @Selector String id, @Nullable String task, @Nullable String from, @Nullable String to,
            @Nullable String dedupKey, @Nullable String error, @Nullable Object tag, @Nullable Object match,
            @Nullable String ids, @Nullable String after, @Nullable String limit, @Nullable String count,
            @Nullable String before, @Nullable String window) {
        QueueEndpoint reader = as(security);
        WebEndpointResponse<Map<String, Object>> response = answer("GET", scope + "/" + id, null,
                () -> reader.workflowOrJob(scope, id, task, from, to, dedupKey, error, tag, match, ids, after, limit,
                        count, before, window));
        return response.getStatus() == WebEndpointResponse.STATUS_OK && response.getBody() == null
                ? new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND) : response;
    }

    /**
     * Acts on a task; see {@link QueueEndpoint#taskAction}.
     * @param security who asks: the action is recorded as theirs
     * @param task the task
     * @param action the action
     * @param name {@code schedule}, {@code unschedule}: the schedule's name
     * @param cron {@code schedule}: the cron expression
     * @param zone {@code schedule}: the time zone
     * @param payload {@code schedule}: the payload of its jobs
     * @param catchUp {@code schedule}: RUN_ONCE, RUN_ALL or SKIP
     * @return what changed, or 404, 409 or 400 with the reason
     */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> taskAction(@Nullable SecurityContext security, @Selector String task,
            @Nullable String action, @Nullable String name, @Nullable String cron, @Nullable String zone,
            @Nullable Object payload, @Nullable String catchUp) {
        return answer("POST", task, action,
                () -> as(security).taskAction(task, action, name, cron, zone, payload, catchUp));
    }

    /**
     * Acts on one job, or starts a bulk action on the jobs a search matches; see {@link QueueEndpoint#jobAction}.
     * @param security who asks: the action is recorded as theirs
     * @param scope {@code jobs}, or the job's task
     * @param target the group of a bulk action, or the job's id
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
     * @param max {@code redrive}: the most messages to move
     * @return what changed, or 404, 409 or 400 with the reason
     */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> jobAction(@Nullable SecurityContext security, @Selector String scope,
            @Selector String target, @Nullable String action, @Nullable String task, @Nullable String from,
            @Nullable String to, @Nullable String dedupKey, @Nullable String error, @Nullable Object tag,
            @Nullable Object match, @Nullable Object ids, @Nullable String at, @Nullable Object priority,
            @Nullable String max) {
        return answer("POST", scope + "/" + target, action, () -> {
            String checked = "jobs".equals(scope) || "message-queues".equals(scope) ? target
                    : Long.toString(parseJobId(target));
            return as(security).jobAction(scope, checked, action, task, from, to, dedupKey, error, tag, match, ids, at,
                    priority, max);
        });
    }

    /**
     * Acts on the shards; see {@link QueueEndpoint#shardAction}.
     * @param security who asks: the action is recorded as theirs
     * @param scope {@code shards}
     * @param kind {@code partitions} or {@code shard}
     * @param target the partition, or the shard's name
     * @param action {@code move}; {@code drain} or {@code undrain}
     * @param shard the shard to move a partition to
     * @return what changed, or 404, 409 or 400 with the reason
     */
    @WriteOperation
    public WebEndpointResponse<Map<String, Object>> shardAction(@Nullable SecurityContext security, @Selector String scope,
            @Selector String kind, @Selector String target, @Nullable String action, @Nullable String shard) {
        return answer("POST", scope + "/" + kind + "/" + target, action,
                () -> as(security).shardAction(scope, kind, target, action, shard));
    }

    /**
     * Acts on a task as no one in particular; see {@link #taskAction(SecurityContext, String, String, String, String, String, Object, String)}.
     * @param task the task
     * @param action the action
     * @param name the schedule's name
     * @param cron the cron expression
     * @param zone the time zone
     * @param payload the payload of the schedule's jobs
     * @param catchUp RUN_ONCE, RUN_ALL or SKIP
     * @return what changed, or 404, 409 or 400 with the reason
     */
    public WebEndpointResponse<Map<String, Object>> taskAction(String task, @Nullable String action,
            @Nullable String name, @Nullable String cron, @Nullable String zone, @Nullable Object payload,
            @Nullable String catchUp) {
        return taskAction(null, task, action, name, cron, zone, payload, catchUp);
    }

    /**
     * Acts on one job as no one in particular.
     * @param task the job's task
     * @param jobId the job's id
     * @param action the action
     * @return what changed, or 404, 409 or 400 with the reason
     */
    public WebEndpointResponse<Map<String, Object>> jobAction(String task, String jobId, @Nullable String action) {
        return jobAction(null, task, jobId, action, null, null, null, null, null, null, null, null, null, null, null);
    }

    /**
     * Acts on the shards as no one in particular.
     * @param scope {@code shards}
     * @param kind {@code partitions} or {@code shard}
     * @param target the partition, or the shard's name
     * @param action the action
     * @param shard the shard to move a partition to
     * @return what changed, or 404, 409 or 400 with the reason
     */
    public WebEndpointResponse<Map<String, Object>> shardAction(String scope, String kind, String target,
            @Nullable String action, @Nullable String shard) {
        return shardAction(null, scope, kind, target, action, shard);
    }

    /**
     * The endpoint acting as the signed-in user, so that the audit trail names them, and showing
     * encrypted payloads decrypted if they have {@code pgqueue.encryption.reader-role}.
     */
    private QueueEndpoint as(@Nullable SecurityContext security) {
        Principal principal = security == null ? null : security.getPrincipal();
        String role = this.endpoint.readerRole();
        return this.endpoint.as(principal == null ? null : principal.getName(),
                principal != null && role != null && security.isUserInRole(role));
    }

    private static long parseJobId(String jobId) {
        try {
            return Long.parseLong(jobId.trim());
        }
        catch (NumberFormatException ex) {
            throw new InvalidEndpointRequestException("Job id '" + jobId + "' is not a number; use the numeric id "
                    + "a job was enqueued with", "Invalid job id");
        }
    }

    private static WebEndpointResponse<Map<String, Object>> answer(String method, String target, @Nullable String action,
            Supplier<Map<String, Object>> operation) {
        try {
            return new WebEndpointResponse<>(operation.get());
        }
        catch (InvalidEndpointRequestException ex) {
            // The endpoint's own checks of the request carry no cause: they are all 400.
            QueueAdminException.Reason reason = ex.getCause() instanceof QueueAdminException refused ? refused.reason()
                    : QueueAdminException.Reason.INVALID;
            int status = switch (reason) {
                case NOT_FOUND -> WebEndpointResponse.STATUS_NOT_FOUND;
                case CONFLICT -> STATUS_CONFLICT;
                case INVALID -> WebEndpointResponse.STATUS_BAD_REQUEST;
            };
            log.info("queues endpoint rejected {} {}{}: {}", method, target,
                    action == null ? "" : " (action '" + action + "')", ex.getMessage());
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("status", status);
            body.put("error", switch (reason) {
                case NOT_FOUND -> "Not Found";
                case CONFLICT -> "Conflict";
                case INVALID -> "Bad Request";
            });
            body.put("message", ex.getMessage());
            return new WebEndpointResponse<>(body, status);
        }
    }
}
