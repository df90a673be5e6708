package io.pgqueue.internal.store;

import java.nio.charset.StandardCharsets;
import java.sql.Array;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

import javax.sql.DataSource;

import io.pgqueue.DependencyFailure;
import io.pgqueue.JobState;
import io.pgqueue.QueueConfig;
import io.pgqueue.QueueDefaults;
import io.pgqueue.WorkflowInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * All SQL on workflows, waiting jobs, dependencies and results. Runs in the caller's Spring
 * transaction when there is one, like {@link JobStore}, whose database it shares.
 * <p>
 * Internal API of the engine: it may change in any release.
 */
public final class WorkflowStore {

    /** How long an awaiter of a job that left the queue without an end is kept before retention deletes it. */
    static final Duration STALE_AWAITER = Duration.ofHours(1);

    private static final Logger log = LoggerFactory.getLogger(WorkflowStore.class);

    private static final ObjectMapper JSON = JsonMapper.builder().build();

    private final NamedParameterJdbcTemplate jdbc;

    /** Transactions of their own, outside the caller's. */
    private final TransactionTemplate ownTransactions;

    private final String nextIds;
    private final String missing;
    private final String insertWorkflow;
    private final String track;

    private final String graft;
    private final String addWaiting;
    private final String cancelWaiting;
    private final String recordResults;
    private final String dependencyResults;
    private final String workflow;
    private final String workflows;
    private final String workflowJobs;
    private final String countByState;
    private final String waitingByTask;
    private final String deleteFinishedBefore;
    private final String deleteLooseResults;

    private final String deleteStaleAwaiters;

    WorkflowStore(NamedParameterJdbcTemplate jdbc, QueueConfig config, DataSource dataSource) {
        this.jdbc = jdbc;
        this.ownTransactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        this.ownTransactions.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        this.nextIds = StoreSupport.sql(WorkflowStatements.NEXT_IDS, config);
        this.missing = StoreSupport.sql(WorkflowStatements.MISSING, config);
        this.insertWorkflow = StoreSupport.sql(WorkflowStatements.INSERT_WORKFLOW, config);
        this.track = StoreSupport.sql(WorkflowStatements.TRACK, config);
        this.graft = StoreSupport.sql(WorkflowStatements.GRAFT, config);
        this.addWaiting = StoreSupport.sql(WorkflowStatements.ADD_WAITING, config);
        this.cancelWaiting = StoreSupport.sql(WorkflowStatements.CANCEL_WAITING, config);
        this.recordResults = StoreSupport.sql(WorkflowStatements.RECORD_RESULTS, config);
        this.dependencyResults = StoreSupport.sql(WorkflowStatements.DEPENDENCY_RESULTS, config);
        this.workflow = StoreSupport.sql(WorkflowStatements.WORKFLOW, config);
        this.workflows = StoreSupport.sql(WorkflowStatements.WORKFLOWS, config);
        this.workflowJobs = StoreSupport.sql(WorkflowStatements.WORKFLOW_JOBS, config);
        this.countByState = StoreSupport.sql(WorkflowStatements.COUNT_BY_STATE, config);
        this.waitingByTask = StoreSupport.sql(WorkflowStatements.WAITING_BY_TASK, config);
        this.deleteFinishedBefore = StoreSupport.sql(WorkflowStatements.DELETE_FINISHED_BEFORE, config);
        this.deleteLooseResults = StoreSupport.sql(WorkflowStatements.DELETE_LOOSE_RESULTS, config);
        this.deleteStaleAwaiters = StoreSupport.sql(WorkflowStatements.DELETE_STALE_AWAITERS, config);
    }

    /**
     * Takes job ids ahead from the job id sequence.
     * @param count how many
     * @return the ids, ascending
     */
    public List<Long> nextIds(int count) {
        return this.jdbc.queryForList(this.nextIds, new MapSqlParameterSource("count", count), Long.class);
    }

    /**
     * Finds the job ids that are not in the queue.
     * @param ids the ids
     * @return those neither active, waiting nor finished and kept
     */
    public List<Long> missing(List<Long> ids) {
        return this.jdbc.queryForList(this.missing, new MapSqlParameterSource("ids", SqlArrays.bigints(ids)), Long.class);
    }

    /**
     * Writes a workflow's row (its jobs are written next, in the same transaction).
     * @param id its id, taken ahead
     * @param name its name
     * @param onFailure what a job whose dependency failed does
     * @param steps the job id of each step
     * @param partition its partition
     */
    public void insertWorkflow(long id, String name, DependencyFailure onFailure, Map<String, Long> steps,
            int partition) {
        this.jdbc.update(this.insertWorkflow, new MapSqlParameterSource("id", id).addValue("name", name)
            .addValue("onFailure", onFailure.name()).addValue("jobs", steps.size())
            .addValue("steps", JSON.writeValueAsString(steps)).addValue("partition", partition));
    }

    /**
     * Marks jobs this transaction wrote as tracked, so that their end reaches their workflow and
     * dependents.
     * @param ids the job ids
     */
    public void track(List<Long> ids) {
        this.jdbc.update(this.track, new MapSqlParameterSource("ids", SqlArrays.bigints(ids)));
    }

    /**
     * Adds a job to a running workflow as a step, in the caller's transaction.
     * @param workflowId the workflow
     * @param step the job's step name, new in the workflow
     * @param jobId the job
     * @return whether it was added (no: the workflow ended, or has a step of that name)
     */
    public boolean graft(long workflowId, String step, long jobId) {
        return !this.jdbc.queryForList(this.graft, new MapSqlParameterSource("id", workflowId).addValue("step", step)
            .addValue("jobId", jobId), Long.class).isEmpty();
    }

    /**
     * Marks jobs in the queue tracked, in a transaction of its own that waits at most a second for
     * their rows: jobs are about to depend on them. One it could not mark (written by the caller's
     * uncommitted transaction, or held longer) is marked by {@link #addWaiting}.
     * @param ids the job ids
     */
    public void trackInOwnTransaction(List<Long> ids) {
        try {
            this.ownTransactions.executeWithoutResult(status -> {
                this.jdbc.getJdbcTemplate().execute("SET LOCAL lock_timeout = '1s'");
                this.jdbc.update(this.track, new MapSqlParameterSource("ids", SqlArrays.bigints(ids)));
            });
        }
        catch (RuntimeException ex) {
            log.debug("Could not mark jobs {} tracked ahead; the enqueue marks them: {}", ids, ex.toString());
        }
    }

    /**
     * Writes jobs that wait for others, or nothing if a dependency is not found.
     * @param jobs the jobs; a dependency among them comes before its dependents
     * @return the dependencies found nowhere (empty when the jobs were written)
     */
    public List<Long> addWaiting(List<WaitingJob> jobs) {
        ArrayNode input = JSON.createArrayNode();
        for (WaitingJob waiting : jobs) {
            NewJob job = waiting.job();
            ObjectNode row = input.addObject();
            row.put("id", waiting.id());
            row.put("task", job.task());
            row.put("priority", job.priority());
            row.set("payload", JSON.readTree(job.payload()));
            row.set("headers", JSON.readTree(job.headers()));
            if (job.runAt() != null) {
                row.put("runAt", job.runAt().toString());
            }
            row.put("delayMs", job.delayMillis());
            if (job.toleranceMillis() != null) {
                row.put("toleranceMs", job.toleranceMillis());
            }
            row.put("maxAttempts", job.maxAttempts());
            row.put("partition", job.partition());
            if (waiting.workflow() != null) {
                row.put("workflow", waiting.workflow());
            }
            row.put("onFailure", waiting.onFailure().name());
            ArrayNode dependsOn = row.putArray("dependsOn");
            waiting.dependsOn().forEach(dependsOn::add);
        }
        return this.jdbc.queryForList(this.addWaiting,
                new MapSqlParameterSource("jobs", JSON.writeValueAsString(input)), Long.class);
    }

    /**
     * Cancels a waiting job; its dependents are cancelled or count it as failed, as they chose.
     * @param id the job id
     * @return its task, or empty when no such job waits
     */
    public Optional<String> cancelWaiting(long id) {
        return this.jdbc.queryForList(this.cancelWaiting, new MapSqlParameterSource("id", id), String.class).stream()
            .findFirst();
    }

    /**
     * Records (or replaces) a job's result for the attempt holding the given lease, under the job's
     * workflow and step when its headers name them: {@link #recordResults} for one.
     * @param lease the recording attempt's lease
     * @param json the result as JSON text
     * @return whether it was recorded ({@code false}: the lease no longer holds)
     * @throws IllegalArgumentException if the JSON is larger than {@link QueueDefaults#MAX_RESULT_BYTES} or
     * holds U+0000
     */
    public boolean recordResult(Lease lease, String json) {
        requireStorableResult(lease.jobId(), json);
        return recordResults(List.of(lease), List.of(json)) == 1;
    }

    /**
     * Records (or replaces) the results of attempts, each for the attempt holding its lease: written
     * only while the lease holds (the job STARTING or RUNNING under that epoch), so an attempt that
     * lost its lease records nothing and a result of a later claim is never replaced. Dependents and
     * callers read a result only once the job completed under its lease. The completion of a batch
     * calls it in its own transaction, before the outcomes.
     * @param leases the recording attempts' leases
     * @param results their results as JSON text, checked ({@link #requireStorableResult}), in the same order
     * @return how many were recorded
     */
    public int recordResults(List<Lease> leases, List<String> results) {
        return this.jdbc.update(this.recordResults, new MapSqlParameterSource()
            .addValue("ids", SqlArrays.bigints(leases.stream().map(Lease::jobId).toList()))
            .addValue("epochs", SqlArrays.ints(leases.stream().map(Lease::epoch).toList()))
            .addValue("results", SqlArrays.texts(results)));
    }

    /**
     * Checks that a result can be stored: at most {@link QueueDefaults#MAX_RESULT_BYTES} of JSON,
     * without U+0000.
     * @param jobId the job recording it
     * @param json the result as JSON text
     * @throws IllegalArgumentException if it is larger or holds U+0000
     */
    public static void requireStorableResult(long jobId, String json) {
        requireStorable("The result of job " + jobId, json);
    }

    /**
     * Checks that a JSON value can be stored as results are (a step's value, say).
     * @param subject what the value is, to start the message with
     * @param json the value as JSON text
     * @throws IllegalArgumentException if it is larger than {@link QueueDefaults#MAX_RESULT_BYTES} or holds U+0000
     */
    public static void requireStorable(String subject, String json) {
        int bytes = json.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > QueueDefaults.MAX_RESULT_BYTES) {
            throw new IllegalArgumentException(subject + " is " + bytes + " bytes of JSON; at most "
                    + QueueDefaults.MAX_RESULT_BYTES + " are kept. Store large results elsewhere and record a reference");
        }
        if (StoreSupport.jsonHoldsNul(json)) {
            throw new IllegalArgumentException(subject + " holds the character U+0000, which PostgreSQL cannot store");
        }
    }

    /**
     * Reads the result of one of a job's dependencies, if it completed and recorded one; the
     * results of the others are not decoded.
     * @param <T> the type read
     * @param jobId the job id
     * @param dependency its step name in a workflow, else its job id as text
     * @param reader reads the result's JSON text
     * @return the result, or empty
     */
    public <T> Optional<T> dependencyResult(long jobId, String dependency, Function<String, T> reader) {
        return Optional.ofNullable(dependencyResults(jobId).get(dependency)).map(reader);
    }

    /**
     * Reads the results of a job's dependencies that completed and recorded one; the result of a
     * dependency that failed or was cancelled is not read.
     * @param <T> the type read
     * @param jobId the job id
     * @param reader reads one result's JSON text
     * @return by step name (job id as text for a dependency outside workflows), in dependency id order
     */
    public <T> Map<String, T> dependencyResults(long jobId, Function<String, T> reader) {
        Map<String, T> results = new LinkedHashMap<>();
        dependencyResults(jobId).forEach((dependency, json) -> {
            if (json != null) {
                results.put(dependency, reader.apply(json));
            }
        });
        return results;
    }

    /**
     * The results of a job's dependencies.
     * @param jobId the job id
     * @return per dependency (its step name in a workflow, else its id as text), its result as JSON
     * text, or {@code null} when it recorded none or did not complete, in dependency id order
     */
    public Map<String, String> dependencyResults(long jobId) {
        Map<String, String> results = new LinkedHashMap<>();
        this.jdbc.query(this.dependencyResults, new MapSqlParameterSource("id", jobId), rs -> {
            String step = rs.getString("step");
            results.put(step != null ? step : Long.toString(rs.getLong("id")), rs.getString("result"));
        });
        return results;
    }

    /**
     * Finds a workflow with its jobs.
     * @param id the workflow id
     * @return the workflow, or empty (unknown, or removed by retention)
     */
    public Optional<WorkflowInfo> find(long id) {
        MapSqlParameterSource params = new MapSqlParameterSource("id", id);
        List<WorkflowInfo.Step> steps = this.jdbc.query(this.workflowJobs, params, (rs, row) -> new WorkflowInfo.Step(
                rs.getString("step"), rs.getLong("id"), rs.getString("task"),
                rs.getString("state") == null ? null : JobState.valueOf(rs.getString("state")), rs.getInt("attempt"),
                rs.getString("last_error"), longs(rs.getArray("waits_for")), rs.getString("result"),
                after(rs.getString("after")), StoreSupport.instant(rs, "created_at"), StoreSupport.instant(rs, "started_at"),
                StoreSupport.instant(rs, "finished_at")));
        return this.jdbc.query(this.workflow, params, (rs, row) -> workflow(rs, steps)).stream().findFirst();
    }

    /** The steps a step comes after, from its header (a JSON array of names); none without one. */
    private static List<String> after(String json) {
        if (json == null) {
            return List.of();
        }
        try {
            return List.of(JSON.readValue(json, String[].class));
        }
        catch (JacksonException ex) {
            return List.of();
        }
    }

    /**
     * Lists workflows without their jobs: the running ones, newest first, then the latest finished.
     * @param limit at most this many of each
     * @return the workflows
     */
    public List<WorkflowInfo> list(int limit) {
        return this.jdbc.query(this.workflows, new MapSqlParameterSource("limit", limit),
                (rs, row) -> workflow(rs, List.of()));
    }

    /** @return the number of workflows per state (RUNNING, COMPLETED, FAILED, CANCELLED) */
    public Map<String, Long> countByState() {
        Map<String, Long> counts = new LinkedHashMap<>();
        this.jdbc.query(this.countByState, rs -> {
            counts.put(rs.getString("state"), rs.getLong("workflows"));
        });
        return counts;
    }

    /** @return the number of waiting jobs per task */
    public Map<String, Long> waitingByTask() {
        Map<String, Long> counts = new LinkedHashMap<>();
        this.jdbc.query(this.waitingByTask, rs -> {
            counts.put(rs.getString("task"), rs.getLong("jobs"));
        });
        return counts;
    }

    /**
     * Deletes workflows that finished longer ago than their state's retention, with their results,
     * batch after batch; results of jobs outside workflows past the retention of completed jobs; and
     * awaiters of jobs that left the queue without an end, after {@link #STALE_AWAITER}.
     * @param retention the retention per final state
     * @param batchSize rows per statement
     * @return the number of workflows deleted
     */
    public long purgeFinished(io.pgqueue.Retention retention, int batchSize) {
        long total = 0;
        for (JobState state : List.of(JobState.COMPLETED, JobState.FAILED, JobState.CANCELLED)) {
            MapSqlParameterSource params = new MapSqlParameterSource("state", state.name())
                .addValue("ageMillis", retention.of(state).toMillis()).addValue("limit", batchSize);
            long deleted;
            do {
                deleted = this.jdbc.queryForObject(this.deleteFinishedBefore, params, Long.class);
                total += deleted;
            }
            while (deleted == batchSize);
        }
        this.jdbc.update(this.deleteLooseResults,
                new MapSqlParameterSource("ageMillis", retention.completed().toMillis()));
        this.jdbc.update(this.deleteStaleAwaiters, new MapSqlParameterSource("ageMillis", STALE_AWAITER.toMillis()));
        return total;
    }

    private static WorkflowInfo workflow(ResultSet rs, List<WorkflowInfo.Step> steps) throws SQLException {
        return new WorkflowInfo(rs.getLong("id"), rs.getString("name"), rs.getString("state"),
                DependencyFailure.valueOf(rs.getString("on_failure")), rs.getInt("jobs"), rs.getInt("completed"),
                rs.getInt("failed"), rs.getInt("cancelled"), StoreSupport.instant(rs, "created_at"),
                StoreSupport.instant(rs, "finished_at"), steps);
    }

    private static List<Long> longs(Array array) throws SQLException {
        if (array == null) {
            return List.of();
        }
        return new ArrayList<>(Arrays.asList((Long[]) array.getArray()));
    }
}
