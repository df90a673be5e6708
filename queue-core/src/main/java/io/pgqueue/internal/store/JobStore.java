package io.pgqueue.internal.store;

import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.StringJoiner;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.stream.IntStream;

import javax.sql.DataSource;

import io.pgqueue.AttemptResult;
import io.pgqueue.BulkAction;
import io.pgqueue.CancelResult;
import io.pgqueue.JobAttempt;
import io.pgqueue.JobFailure;
import io.pgqueue.JobPage;
import io.pgqueue.JobQuery;
import io.pgqueue.JobSnapshot;
import io.pgqueue.JobState;
import io.pgqueue.JobStep;
import io.pgqueue.JobTags;
import io.pgqueue.QueueConfig;
import io.pgqueue.TaskGroups;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowCallbackHandler;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * All SQL on the job tables, one method per operation. Every method runs in the caller's Spring
 * transaction when there is one (through {@link JdbcTemplate} and its DataSource utilities) and
 * otherwise in its own.
 * <p>
 * Internal API of the engine: it may change in any release; applications use
 * {@link io.pgqueue.QueueClient} and the worker pools.
 * <p>
 * It is the longest store because the job tables are the queue: enqueue with its dedup upserts,
 * the claim, the fenced writes out of STARTING and RUNNING, rescue, retention, re-runs and the
 * listings all change or read the same rows, and keeping them in one class keeps every state
 * transition of a job, and the locks it takes, in one place. Its SQL is in {@link JobStatements}.
 */
public final class JobStore {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** Reads a job's row as {@link JobStatements#FIND} selects it (the columns of {@link JobSnapshot}). */
    static final RowMapper<JobSnapshot> SNAPSHOT = (rs, row) -> new JobSnapshot(rs.getLong("id"), rs.getString("task"),
            JobState.valueOf(rs.getString("state")), rs.getInt("priority"), rs.getString("payload"), rs.getString("headers"),
            StoreSupport.instant(rs, "schedule_time"), StoreSupport.instant(rs, "delay_tolerance_deadline"),
            rs.getInt("attempt"), rs.getInt("max_attempts"), rs.getString("lease_owner"),
            StoreSupport.instant(rs, "expected_status_change_time"), rs.getString("dedup_key"),
            rs.getBoolean("rerun_requested"), rs.getBoolean("cancel_requested"), rs.getString("last_error"),
            StoreSupport.instant(rs, "created_at"), StoreSupport.instant(rs, "started_at"),
            StoreSupport.instant(rs, "finished_at"), rs.getString("progress"), rs.getInt("partition"),
            rs.getString("result"));


    private final boolean keepCompleted;

    private final boolean fenced;

    private final QueueConfig config;

    private final NamedParameterJdbcTemplate jdbc;

    private final TransactionTemplate transactions;

    private final String insertJobs;
    private final String insertNewJobs;
    private final String insertJob;
    private final String lockActiveByKey;
    private final String replaceReady;
    private final String setReadyPayload;
    private final String requestRerun;
    private final String claim;
    private final String markRunning;
    private final String heartbeat;
    private final String recordOutcomes;

    private final String recordOutcomesWithHistory;
    private final String completeJobs;

    private final String completeJobsWithHistory;
    private final String lockExpiredLeases;

    private final String history;

    private final String withdraw;

    private final String finishedHolder;
    private final String cancel;
    private final String deleteFinishedBefore;
    private final String find;

    private final String findFinished;

    private final String await;
    private final String rerunFailed;
    private final String recentFailures;
    private final String list;

    private final String count;

    private final String rerunFailedAmong;

    private final String cancelAmong;

    private final String deleteFinishedAmong;

    private final String rescheduleAmong;

    private final String prioritizeAmong;

    private final String prioritizeWaitingAmong;
    private final String vacuumActiveJobs;

    private final WorkflowStore workflows;

    private final StepStore steps;

    /**
     * Creates a store.
     * @param dataSource the queue's database
     * @param config the queue's settings
     */
    public JobStore(DataSource dataSource, QueueConfig config) {
        this(dataSource, config, false);
    }

    /**
     * Creates a store.
     * @param dataSource the queue's database
     * @param config the queue's settings
     * @param fenced whether the database is a shard, which writes a job only while it holds the
     * job's partition ACTIVE
     */
    public JobStore(DataSource dataSource, QueueConfig config, boolean fenced) {
        this.fenced = fenced;
        this.keepCompleted = !config.retention().completed().isZero();
        this.config = config;
        this.jdbc = StoreSupport.jdbc(dataSource, config);
        this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        this.insertJobs = sql(fenced ? JobStatements.INSERT_JOBS_FENCED : JobStatements.INSERT_JOBS);
        this.insertNewJobs = sql(JobStatements.INSERT_NEW_JOBS);
        this.insertJob = sql(fenced ? JobStatements.INSERT_JOB_FENCED : JobStatements.INSERT_JOB);
        this.lockActiveByKey = sql(JobStatements.LOCK_ACTIVE_BY_KEY);
        this.replaceReady = sql(JobStatements.REPLACE_READY);
        this.setReadyPayload = sql(JobStatements.SET_READY_PAYLOAD);
        this.requestRerun = sql(JobStatements.REQUEST_RERUN);
        this.claim = sql(JobStatements.CLAIM);
        this.markRunning = sql(JobStatements.MARK_RUNNING);
        this.heartbeat = sql(JobStatements.HEARTBEAT);
        this.recordOutcomes = sql(JobStatements.RECORD_OUTCOMES);
        this.recordOutcomesWithHistory = sql(JobStatements.RECORD_OUTCOMES_WITH_HISTORY);
        this.completeJobs = sql(JobStatements.COMPLETE_JOBS);
        this.completeJobsWithHistory = sql(JobStatements.COMPLETE_JOBS_WITH_HISTORY);
        this.lockExpiredLeases = sql(JobStatements.LOCK_EXPIRED_LEASES);
        this.history = sql(JobStatements.HISTORY);
        this.withdraw = sql(JobStatements.WITHDRAW);
        this.finishedHolder = sql(JobStatements.FINISHED_HOLDER);
        this.cancel = sql(JobStatements.CANCEL);
        this.deleteFinishedBefore = sql(JobStatements.DELETE_FINISHED_BEFORE);
        this.find = sql(JobStatements.FIND);
        this.findFinished = sql(JobStatements.FIND_FINISHED);
        this.await = sql(JobStatements.AWAIT);
        this.rerunFailed = sql(fenced ? JobStatements.RERUN_FAILED_FENCED : JobStatements.RERUN_FAILED);
        this.recentFailures = sql(JobStatements.RECENT_FAILURES);
        this.list = sql(JobStatements.LIST);
        this.count = sql(JobStatements.COUNT);
        this.rerunFailedAmong = sql(fenced ? JobStatements.RERUN_FAILED_AMONG_FENCED : JobStatements.RERUN_FAILED_AMONG);
        this.cancelAmong = sql(fenced ? JobStatements.CANCEL_AMONG_FENCED : JobStatements.CANCEL_AMONG);
        this.deleteFinishedAmong = sql(fenced ? JobStatements.DELETE_FINISHED_AMONG_FENCED
                : JobStatements.DELETE_FINISHED_AMONG);
        this.rescheduleAmong = sql(fenced ? JobStatements.RESCHEDULE_AMONG_FENCED : JobStatements.RESCHEDULE_AMONG);
        this.prioritizeAmong = sql(fenced ? JobStatements.PRIORITIZE_AMONG_FENCED : JobStatements.PRIORITIZE_AMONG);
        this.prioritizeWaitingAmong = sql(fenced ? JobStatements.PRIORITIZE_WAITING_AMONG_FENCED
                : JobStatements.PRIORITIZE_WAITING_AMONG);
        this.vacuumActiveJobs = sql(JobStatements.VACUUM_ACTIVE_JOBS);
        this.workflows = new WorkflowStore(this.jdbc, config, dataSource);
        this.steps = new StepStore(this.jdbc, config);
    }

    /** @return the store of durable handlers' steps in this database */
    public StepStore steps() {
        return this.steps;
    }

    /** @return the store of workflows, waiting jobs and results in this database */
    public WorkflowStore workflows() {
        return this.workflows;
    }

    private String sql(String statement) {
        return StoreSupport.sql(statement, this.config);
    }

    /** The payload of a task's notification that its jobs finished, rather than that new jobs are due. */
    public static final String SLOT_FREED = "slot";

    /**
     * Returns the NOTIFY channel of a task: the schema, a dot and the task name.
     * @param task the task name
     * @return the channel name
     */
    public String channel(String task) {
        return this.config.schema() + "." + task;
    }

    /**
     * Tells every node that jobs of these tasks finished, so that claims waiting for a slot of the
     * tasks' global concurrency look again: a NOTIFY on each task's channel with the payload
     * {@link #SLOT_FREED}.
     * @param tasks the task names
     */
    public void notifySlotsFreed(Collection<String> tasks) {
        notifyTasks(tasks, SLOT_FREED);
    }

    private void notifyTasks(Collection<String> tasks, String payload) {
        this.jdbc.query("SELECT pg_notify(:channelPrefix || task, :payload) FROM unnest(CAST(:tasks AS text[])) AS task",
                new MapSqlParameterSource("channelPrefix", channel("")).addValue("payload", payload)
                    .addValue("tasks", SqlArrays.texts(List.copyOf(tasks))),
                (RowCallbackHandler) rs -> { });
    }

    /**
     * Runs work in one transaction: the caller's Spring transaction if one is active, a new one otherwise.
     * @param <T> the result type
     * @param work the work
     * @return its result
     */
    public <T> T inTransaction(Supplier<T> work) {
        return this.transactions.execute(status -> work.get());
    }

    /**
     * Inserts jobs in one statement and notifies the channels of tasks with due jobs.
     * @param jobs the jobs
     * @return per job, in order, the new id, or {@code null} where an active job holds its dedup key
     * @throws PartitionNotHeldException on a shard that does not hold one of the jobs' partitions
     * ACTIVE; no job was written
     */
    public List<Long> insert(List<NewJob> jobs) {
        if (jobs.size() == 1) {
            return Collections.singletonList(insert(jobs.get(0)));
        }
        int n = jobs.size();
        MapSqlParameterSource params = arrays(jobs).addValue("channelPrefix", channel(""));
        if (!this.fenced && jobs.stream().allMatch(job -> job.dedupKey() == null)) {
            List<Long> ids = this.jdbc.query(this.insertNewJobs, params, (rs, row) -> rs.getLong("id"));
            if (ids.size() != n) {
                throw new IllegalStateException("Inserted " + ids.size() + " of " + n + " jobs");
            }
            // Taken from the sequence in input order: ascending, they are the input's ids in order.
            ids.sort(null);
            return ids;
        }
        List<Integer> partitions = jobs.stream().map(NewJob::partition).toList();
        List<Long> ids = new ArrayList<>(n);
        Set<Integer> notHeld = new TreeSet<>();
        this.jdbc.query(this.insertJobs, params, rs -> {
            ids.add(rs.getObject("inserted_id", Long.class));
            if (this.fenced && !rs.getBoolean("held")) {
                notHeld.add(partitions.get(ids.size() - 1));
            }
        });
        if (!notHeld.isEmpty()) {
            throw new PartitionNotHeldException(notHeld);
        }
        return ids;
    }

    /**
     * The columns of new jobs as array parameters, one element per job: {@code tasks},
     * {@code payloads}, {@code headers}, {@code priorities}, {@code runAts}, {@code delays},
     * {@code tolerances}, {@code maxAttempts}, {@code dedupKeys}, {@code partitions}.
     */
    static MapSqlParameterSource arrays(List<NewJob> jobs) {
        int n = jobs.size();
        List<String> tasks = new ArrayList<>(n);
        List<String> payloads = new ArrayList<>(n);
        List<String> headers = new ArrayList<>(n);
        List<Integer> priorities = new ArrayList<>(n);
        List<String> runAts = new ArrayList<>(n);
        List<Long> delays = new ArrayList<>(n);
        List<Long> tolerances = new ArrayList<>(n);
        List<Integer> maxAttempts = new ArrayList<>(n);
        List<String> dedupKeys = new ArrayList<>(n);
        List<Integer> partitions = new ArrayList<>(n);
        for (NewJob job : jobs) {
            tasks.add(job.task());
            payloads.add(job.payload());
            headers.add(job.headers());
            priorities.add(job.priority());
            runAts.add(job.runAt() == null ? null : job.runAt().toString());
            delays.add(job.delayMillis());
            tolerances.add(job.toleranceMillis());
            maxAttempts.add(job.maxAttempts());
            dedupKeys.add(job.dedupKey());
            partitions.add(job.partition());
        }
        return new MapSqlParameterSource()
            .addValue("tasks", SqlArrays.texts(tasks))
            .addValue("payloads", SqlArrays.texts(payloads))
            .addValue("headers", SqlArrays.texts(headers))
            .addValue("priorities", SqlArrays.ints(priorities))
            .addValue("runAts", SqlArrays.texts(runAts))
            .addValue("delays", SqlArrays.bigints(delays))
            .addValue("tolerances", SqlArrays.bigints(tolerances))
            .addValue("maxAttempts", SqlArrays.ints(maxAttempts))
            .addValue("dedupKeys", SqlArrays.texts(dedupKeys))
            .addValue("partitions", SqlArrays.ints(partitions));
    }

    private Long insert(NewJob job) {
        MapSqlParameterSource params = new MapSqlParameterSource()
            .addValue("task", job.task())
            .addValue("payload", job.payload())
            .addValue("headers", job.headers())
            .addValue("priority", job.priority())
            // Nullable values carry their SQL type, so that binding a null needs no round trip to ask for it.
            .addValue("runAt", job.runAt() == null ? null : job.runAt().toString(), Types.VARCHAR)
            .addValue("delay", job.delayMillis())
            .addValue("tolerance", job.toleranceMillis(), Types.BIGINT)
            .addValue("maxAttempts", job.maxAttempts())
            .addValue("dedupKey", job.dedupKey(), Types.VARCHAR)
            .addValue("partition", job.partition())
            .addValue("channelPrefix", channel(""));
        if (this.fenced) {
            Map<String, Object> row = this.jdbc.queryForMap(this.insertJob, params);
            if (!Boolean.TRUE.equals(row.get("held"))) {
                throw new PartitionNotHeldException(Set.of(job.partition()));
            }
            return (Long) row.get("id");
        }
        List<Long> ids = this.jdbc.query(this.insertJob, params, (rs, row) -> rs.getLong("id"));
        return ids.isEmpty() ? null : ids.get(0);
    }

    /**
     * Locks the active job holding a dedup key, until the current transaction ends.
     * @param task the task name
     * @param dedupKey the key
     * @return the job, or empty if no active job holds the key
     */
    public Optional<ActiveDuplicate> lockActiveByKey(String task, String dedupKey) {
        MapSqlParameterSource params = new MapSqlParameterSource("task", task).addValue("dedupKey", dedupKey);
        return this.jdbc.query(this.lockActiveByKey, params, (rs, row) -> new ActiveDuplicate(rs.getLong("id"),
                JobState.valueOf(rs.getString("state")), rs.getString("payload"), rs.getBoolean("rerun_requested")))
            .stream()
            .findFirst();
    }

    /**
     * Replaces payload, headers, priority and schedule of a READY job.
     * @param id the job id
     * @param job the new values
     * @return whether the job was READY and changed
     */
    public boolean replaceReady(long id, NewJob job) {
        MapSqlParameterSource params = new MapSqlParameterSource("id", id)
            .addValue("payload", job.payload())
            .addValue("headers", job.headers())
            .addValue("priority", job.priority())
            .addValue("runAt", job.runAt() == null ? null : job.runAt().toString())
            .addValue("delay", job.delayMillis())
            .addValue("tolerance", job.toleranceMillis());
        return this.jdbc.update(this.replaceReady, params) == 1;
    }

    /**
     * Sets the payload of a READY job.
     * @param id the job id
     * @param payload the payload as JSON text
     * @return whether the job was READY and changed
     */
    public boolean setReadyPayload(long id, String payload) {
        return this.jdbc.update(this.setReadyPayload, new MapSqlParameterSource("id", id).addValue("payload", payload)) == 1;
    }

    /**
     * Marks a claimed job for one more run after the current one.
     * @param id the job id
     * @param payload the payload of the next run as JSON text
     * @return whether the job was claimed and changed
     */
    public boolean requestRerun(long id, String payload) {
        return this.jdbc.update(this.requestRerun, new MapSqlParameterSource("id", id).addValue("payload", payload)) == 1;
    }

    /**
     * Claims due jobs of several tasks in one statement.
     * @param limits the maximum number of jobs per task
     * @param owner the claiming worker, recorded as the lease owner
     * @param state {@link JobState#STARTING} (into a local buffer) or {@link JobState#RUNNING}
     * @param lease the lease duration
     * @return the claimed jobs, in no particular order
     */
    public List<ClaimedJob> claim(List<ClaimLimit> limits, String owner, JobState state, Duration lease) {
        return claimJobs(limits, owner, state, lease).jobs();
    }

    /**
     * Claims due jobs of several tasks in one statement, enforcing the tasks' limits across nodes:
     * a task with a global concurrency or a rate limit is claimed under a transaction-scoped lock of
     * the task, so concurrent claims on any node never take more than its limits allow.
     * @param limits the maximum number of jobs per task, and the task's limits across nodes
     * @param owner the claiming worker, recorded as the lease owner
     * @param state {@link JobState#STARTING} (into a local buffer) or {@link JobState#RUNNING}
     * @param lease the lease duration
     * @return the claimed jobs, and the tasks whose limits cut the claim short
     */
    public ClaimResult claimJobs(List<ClaimLimit> limits, String owner, JobState state, Duration lease) {
        if (state != JobState.STARTING && state != JobState.RUNNING) {
            throw new IllegalArgumentException("Claimed jobs are STARTING or RUNNING, not " + state);
        }
        if (limits.isEmpty()) {
            return new ClaimResult(List.of(), List.of());
        }
        List<ClaimLimit> plain = limits.stream().filter(limit -> !limit.global()).toList();
        // Claimed one at a time, each under its task's lock, in task order: claims of the same tasks
        // on two nodes take the locks in the same order and cannot deadlock.
        List<ClaimLimit> global = limits.stream().filter(ClaimLimit::global)
            .sorted(Comparator.comparing(ClaimLimit::task)).toList();
        MapSqlParameterSource params = new MapSqlParameterSource()
            .addValue("tasks", SqlArrays.texts(plain.stream().map(ClaimLimit::task).toList()))
            .addValue("limits", SqlArrays.ints(plain.stream().map(ClaimLimit::limit).toList()))
            .addValue("state", state.name())
            .addValue("owner", owner)
            .addValue("leaseMillis", lease.toMillis())
            .addValue("limited", global.isEmpty() ? null : limitedJson(global), Types.VARCHAR);
        List<ClaimedJob> jobs = new ArrayList<>();
        List<ClaimResult.LimitWait> limited = new ArrayList<>();
        this.jdbc.query(this.claim, params, (RowCallbackHandler) rs -> {
            long id = rs.getLong("id");
            if (rs.wasNull()) {
                long wait = rs.getLong("limit_wait_millis");
                limited.add(new ClaimResult.LimitWait(rs.getString("task"), wait < 0 ? null : Duration.ofMillis(wait),
                        wait == -2));
                return;
            }
            jobs.add(new ClaimedJob(new Lease(id, rs.getInt("lease_epoch")), rs.getString("task"),
                    rs.getString("payload"), rs.getString("headers"), rs.getInt("priority"), rs.getInt("attempt"),
                    rs.getInt("max_attempts"), StoreSupport.instant(rs, "schedule_time"), StoreSupport.instant(rs, "delay_tolerance_deadline"),
                    StoreSupport.instant(rs, "created_at"), StoreSupport.instant(rs, "started_at"), StoreSupport.instant(rs, "expected_status_change_time")));
        });
        return new ClaimResult(jobs, limited);
    }

    /** The claim function's description of the tasks with limits across nodes (task names need no escaping). */
    private static String limitedJson(List<ClaimLimit> global) {
        StringJoiner json = new StringJoiner(",", "[", "]");
        for (ClaimLimit limit : global) {
            StringBuilder rule = new StringBuilder("{\"task\":\"").append(limit.task()).append("\",\"want\":")
                .append(limit.limit());
            if (limit.globalConcurrency() > 0) {
                rule.append(",\"concurrency\":").append(limit.globalConcurrency());
            }
            if (limit.rate() != null) {
                rule.append(",\"permits\":").append(limit.rate().permits())
                    .append(",\"millis\":").append(limit.rate().period().toMillis())
                    .append(",\"burst\":").append(limit.rate().burst());
            }
            if (limit.groups() != null) {
                rule.append(",\"groups\":\"").append(limit.groups().mode() == TaskGroups.Mode.SEQUENCE ? "sequence" : "fair")
                    .append('"');
                if (limit.groups().concurrency() > 0) {
                    rule.append(",\"groupConcurrency\":").append(limit.groups().concurrency());
                }
            }
            json.add(rule.append('}'));
        }
        return json.toString();
    }

    /**
     * Moves claimed jobs from STARTING to RUNNING and renews their leases, where the leases still hold.
     * @param leases the leases
     * @param lease the new lease duration
     * @return what changed and which leases were lost
     */
    public FencedResult markRunning(List<Lease> leases, Duration lease) {
        return renew(this.markRunning, leases, lease);
    }

    /**
     * Renews the leases of claimed jobs, where they still hold.
     * @param leases the leases
     * @param lease the new lease duration
     * @return what changed, which leases were lost, and which jobs are asked to cancel
     */
    public FencedResult heartbeat(List<Lease> leases, Duration lease) {
        return heartbeat(leases, Collections.nCopies(leases.size(), null), lease);
    }

    /**
     * Renews the leases of claimed jobs, where they still hold, and stores the progress their
     * handlers reported.
     * @param leases the leases
     * @param progress per lease, the progress to store, or {@code null} to keep the stored one
     * @param lease the new lease duration
     * @return what changed, which leases were lost, and which jobs are asked to cancel
     */
    public FencedResult heartbeat(List<Lease> leases, List<String> progress, Duration lease) {
        // Sort leases and their progress together, by job id.
        List<Integer> order = IntStream.range(0, leases.size()).boxed()
            .sorted(Comparator.comparingLong(i -> leases.get(i).jobId()))
            .toList();
        List<Lease> sortedLeases = order.stream().map(leases::get).toList();
        List<String> sortedProgress = order.stream().map(progress::get).toList();
        return write(this.heartbeat, sortedLeases, leaseParams(sortedLeases).addValue("leaseMillis", lease.toMillis())
            .addValue("progress", SqlArrays.texts(sortedProgress)));
    }

    /**
     * Hands buffered jobs that never started back to the queue, where the leases still hold: READY
     * at once, keeping their place in the queue and giving back the attempt their claim counted. A
     * job whose cancellation was requested meanwhile ends CANCELLED; a re-run requested meanwhile
     * is served by the run still to come, so the request is cleared.
     * @param leases the leases of jobs that never started
     * @return the state each released job moved to, and the leases that were lost
     */
    public FencedResult release(List<Lease> leases) {
        return record(leases.stream().map(lease -> Outcome.released(lease, null)).toList());
    }

    private FencedResult renew(String statement, List<Lease> leases, Duration lease) {
        List<Lease> sorted = byId(leases);
        return write(statement, sorted, leaseParams(sorted).addValue("leaseMillis", lease.toMillis()));
    }

    private FencedResult write(String statement, List<Lease> leases, MapSqlParameterSource params) {
        if (leases.isEmpty()) {
            return FencedResult.EMPTY;
        }
        Map<Long, JobState> applied = new HashMap<>();
        Map<Long, String> tasks = new HashMap<>();
        List<Long> cancelRequested = new ArrayList<>();
        this.jdbc.query(statement, params, rs -> {
            long id = rs.getLong("id");
            applied.put(id, JobState.valueOf(rs.getString("state")));
            tasks.put(id, rs.getString("task"));
            if (rs.getBoolean("cancel_requested")) {
                cancelRequested.add(id);
            }
        });
        return new FencedResult(applied, tasks, lost(leases, applied), cancelRequested);
    }

    /**
     * Writes the outcomes of attempts in one statement, each fenced by its lease.
     * @param outcomes the outcomes
     * @return the state each job moved to, and the leases that were lost
     */
    public FencedResult record(List<Outcome> outcomes) {
        if (outcomes.isEmpty()) {
            return FencedResult.EMPTY;
        }
        // In job id order: the statements lock their rows in input order.
        outcomes = outcomes.stream().sorted(Comparator.comparingLong(o -> o.lease().jobId())).toList();
        List<Lease> leases = outcomes.stream().map(Outcome::lease).toList();
        MapSqlParameterSource params = leaseParams(leases).addValue("keepCompleted", this.keepCompleted);
        // Batches without history entries keep to the signatures earlier releases know too.
        boolean history = outcomes.stream().anyMatch(outcome -> outcome.history() != null);
        if (history) {
            params.addValue("history", SqlArrays.texts(outcomes.stream().map(Outcome::history).toList()));
        }
        String statement = history ? this.completeJobsWithHistory : this.completeJobs;
        if (!outcomes.stream().allMatch(Outcome::isPlainCompletion)) {
            statement = history ? this.recordOutcomesWithHistory : this.recordOutcomes;
            params.addValue("kinds", SqlArrays.texts(outcomes.stream().map(o -> o.kind().name()).toList()))
                .addValue("delays", SqlArrays.bigints(outcomes.stream().map(o -> o.retryDelay().toMillis()).toList()))
                .addValue("errors", SqlArrays.texts(outcomes.stream().map(Outcome::error).toList()))
                .addValue("progress", SqlArrays.texts(outcomes.stream().map(Outcome::progress).toList()));
        }
        List<Outcome> withResults = outcomes.stream().filter(outcome -> outcome.result() != null).toList();
        List<Outcome> withSteps = outcomes.stream().filter(Outcome::steps).toList();
        String chosen = statement;
        Supplier<FencedResult> write = () -> {
            if (!withResults.isEmpty()) {
                // Before the outcomes: the rows they fence by are gone once the jobs completed.
                workflows().recordResults(withResults.stream().map(Outcome::lease).toList(),
                        withResults.stream().map(Outcome::result).toList());
            }
            Map<Long, JobState> applied = new HashMap<>();
            Map<Long, String> tasks = new HashMap<>();
            this.jdbc.query(chosen, params, rs -> {
                applied.put(rs.getLong("id"), JobState.valueOf(rs.getString("state")));
                tasks.put(rs.getLong("id"), rs.getString("task"));
            });
            if (!withSteps.isEmpty()) {
                dropEndedSteps(withSteps, applied);
            }
            return new FencedResult(applied, tasks, lost(leases, applied), List.of());
        };
        // Results, outcomes and step drops commit together (asynchronously, as the outcome functions set it).
        return withResults.isEmpty() && withSteps.isEmpty() ? write.get() : inTransaction(write);
    }

    /**
     * Drops the steps of jobs whose outcome ended them or re-ran them: a completion or final failure
     * that left the job READY was re-run by a deduplicated enqueue.
     */
    private void dropEndedSteps(List<Outcome> withSteps, Map<Long, JobState> applied) {
        List<Long> ids = new ArrayList<>();
        List<Long> rerun = new ArrayList<>();
        for (Outcome outcome : withSteps) {
            JobState state = applied.get(outcome.lease().jobId());
            if (state == null) {
                continue;
            }
            boolean ended = outcome.kind() == AttemptResult.COMPLETED || outcome.kind() == AttemptResult.FAILED;
            if (state != JobState.READY || ended) {
                ids.add(outcome.lease().jobId());
                if (state == JobState.READY) {
                    rerun.add(outcome.lease().jobId());
                }
            }
        }
        this.steps.dropEnded(ids, rerun);
    }

    /** @return whether completed jobs are kept after they finish (a completed retention above zero) */
    public boolean keepsCompleted() {
        return this.keepCompleted;
    }

    /**
     * Deletes a READY job this transaction inserted, which no one else has seen.
     * @param id the job
     */
    public void withdraw(long id) {
        this.jdbc.update(this.withdraw, new MapSqlParameterSource("id", id));
    }

    /**
     * Finds the newest job of a task and key that ended in one of the states and was enqueued within
     * the period.
     * @param task the task
     * @param key the dedup key
     * @param states the final states
     * @param period the period before now
     * @return its id, or empty
     */
    public Optional<Long> finishedHolder(String task, String key, Collection<JobState> states, Duration period) {
        return this.jdbc.queryForList(this.finishedHolder, new MapSqlParameterSource("task", task).addValue("key", key)
            .addValue("states", SqlArrays.texts(states.stream().map(Enum::name).toList()))
            .addValue("periodMillis", period.toMillis()), Long.class).stream().findFirst();
    }

    /**
     * Reads a job's durable steps, if the job is in this database.
     * @param id the job
     * @return its steps in their order (none when it recorded none), or empty when it is not here
     */
    public Optional<List<JobStep>> jobSteps(long id) {
        List<JobStep> recorded = this.steps.steps(id);
        return !recorded.isEmpty() || find(id).isPresent() ? Optional.of(recorded) : Optional.empty();
    }

    /**
     * Reads a job's attempt history.
     * @param id the job id
     * @return its attempts, oldest first (none for a job of a task that keeps none), or empty when no
     * such job is here
     */
    public Optional<List<JobAttempt>> attempts(long id) {
        List<String> rows = this.jdbc.queryForList(this.history, new MapSqlParameterSource("id", id), String.class);
        return rows.isEmpty() ? Optional.empty() : Optional.of(AttemptHistory.read(rows.get(0)));
    }

    /**
     * Takes back claimed jobs whose lease deadline passed (database clock): READY again when
     * attempts are left, FAILED when they are exhausted, CANCELLED when cancellation was requested.
     * Safe to run on many nodes at once: each expired job is handled by exactly one of them.
     * @param limit the maximum number of jobs to handle
     * @return the state each rescued job moved to
     */
    public FencedResult rescueExpiredLeases(int limit) {
        return rescueExpiredLeases(limit, List.of());
    }

    /**
     * Takes back claimed jobs whose lease deadline passed, as {@link #rescueExpiredLeases(int)}, and
     * adds the attempts they cut short to the histories of jobs that keep one: the jobs of the given
     * tasks, and jobs with a history already (of tasks this node does not know).
     * @param limit the maximum number of jobs to handle
     * @param historyTasks the tasks that keep their jobs' attempts
     * @return the state each rescued job moved to
     */
    public FencedResult rescueExpiredLeases(int limit, Collection<String> historyTasks) {
        MapSqlParameterSource params = new MapSqlParameterSource("limit", limit)
            .addValue("historyTasks", SqlArrays.texts(List.copyOf(historyTasks)));
        return inTransaction(() -> {
            List<Outcome> outcomes = this.jdbc.query(this.lockExpiredLeases, params,
                    (rs, row) -> {
                        Lease lease = new Lease(rs.getLong("id"), rs.getInt("lease_epoch"));
                        String owner = rs.getString("lease_owner");
                        String error = "Lease of " + owner + " expired";
                        Outcome outcome = rs.getInt("attempt") < rs.getInt("max_attempts")
                                ? Outcome.rescued(lease, error) : Outcome.failed(lease, error);
                        if (!rs.getBoolean("keeps_history")) {
                            return outcome;
                        }
                        Instant now = rs.getObject("now", OffsetDateTime.class).toInstant();
                        OffsetDateTime started = rs.getObject("started_at", OffsetDateTime.class);
                        return outcome.withHistory(AttemptHistory.entry(new JobAttempt(rs.getInt("attempt"),
                                AttemptResult.RESCUED, owner, started == null ? null : started.toInstant(), now, error,
                                List.of(), 0)));
                    });
            return record(outcomes);
        });
    }

    /**
     * Cancels a job: a READY job at once, a claimed job by a request its worker sees at the next heartbeat.
     * @param id the job id
     * @return what happened, and the task of a job cancelled at once
     */
    public Cancellation cancel(long id) {
        MapSqlParameterSource params = new MapSqlParameterSource("id", id);
        // A concurrent state change (claim, retry) can make one snapshot miss the job; look again.
        for (int i = 0; i < 10; i++) {
            Cancellation result = this.jdbc.queryForObject(this.cancel, params, (rs, row) -> {
                if (rs.getLong("cancelled") > 0) {
                    return new Cancellation(CancelResult.CANCELLED, rs.getString("task"));
                }
                if (rs.getLong("requested") > 0) {
                    return new Cancellation(CancelResult.CANCEL_REQUESTED, null);
                }
                if (rs.getBoolean("finished")) {
                    return new Cancellation(CancelResult.ALREADY_FINISHED, null);
                }
                if (rs.getBoolean("waiting")) {
                    // Cancelled below, unless it was released meanwhile: then look again.
                    return new Cancellation(null, null);
                }
                return rs.getBoolean("active") ? null : new Cancellation(CancelResult.NOT_FOUND, null);
            });
            if (result != null && result.result() == null) {
                Optional<String> task = this.workflows.cancelWaiting(id);
                result = task.map(name -> new Cancellation(CancelResult.CANCELLED, name)).orElse(null);
            }
            if (result != null) {
                return result;
            }
        }
        throw new IllegalStateException("Job " + id + " kept changing state while being cancelled");
    }

    /**
     * What a cancel did.
     *
     * @param result the result
     * @param task the task of a job that was cancelled at once, else {@code null}
     */
    public record Cancellation(CancelResult result, String task) {
    }

    /**
     * Deletes one batch of finished jobs older than an age.
     * @param state COMPLETED, FAILED or CANCELLED
     * @param age the minimum age (since finishing)
     * @param limit the batch size
     * @return the number of jobs deleted
     */
    public int deleteFinishedBefore(JobState state, Duration age, int limit) {
        if (state.isActive()) {
            throw new IllegalArgumentException("Retention applies to finished jobs, not " + state);
        }
        MapSqlParameterSource params = new MapSqlParameterSource("state", state.name())
            .addValue("ageMillis", age.toMillis())
            .addValue("limit", limit);
        return this.jdbc.update(this.deleteFinishedBefore, params);
    }

    /**
     * Deletes finished jobs of a state older than an age, batch after batch, each in its own short
     * transaction, until none is left.
     * @param state COMPLETED, FAILED or CANCELLED
     * @param age the minimum age (since finishing)
     * @param batchSize the number of rows per statement
     * @return the number of jobs deleted
     */
    public long purgeFinished(JobState state, Duration age, int batchSize) {
        long total = 0;
        int deleted;
        do {
            deleted = deleteFinishedBefore(state, age, batchSize);
            total += deleted;
        }
        while (deleted == batchSize);
        return total;
    }

    /**
     * Puts one FAILED job back into the queue (READY, fresh attempts), unless an active job holds
     * its dedup key.
     * @param id the job id
     * @return whether the job was FAILED and is READY now
     */
    public boolean rerunFailed(long id) {
        return !this.jdbc.queryForList(this.rerunFailed, new MapSqlParameterSource("id", id).addValue("task", null))
            .isEmpty();
    }

    /**
     * Puts every FAILED job of a task back into the queue (READY, fresh attempts), except those
     * whose dedup key an active job holds.
     * @param task the task
     * @return the ids of the jobs put back
     */
    public List<Long> rerunAllFailed(String task) {
        return this.jdbc.query(this.rerunFailed, new MapSqlParameterSource("id", null).addValue("task", task),
                (rs, row) -> rs.getLong("id"));
    }

    /**
     * Lists the most recent failures of a task.
     * @param task the task
     * @param limit how many
     * @return the failures, newest first
     */
    public List<JobFailure> recentFailures(String task, int limit) {
        return this.jdbc.query(this.recentFailures, new MapSqlParameterSource("task", task).addValue("limit", limit),
                (rs, row) -> new JobFailure(rs.getLong("id"), rs.getInt("attempt"), rs.getString("last_error"),
                        StoreSupport.instant(rs, "finished_at")));
    }

    /**
     * VACUUMs the active-job table, whose dead rows pile up faster than autovacuum removes them at
     * full speed. Skips the table when another VACUUM holds it, so many nodes may call it at once;
     * does not ANALYZE ({@link JobStatements#VACUUM_ACTIVE_JOBS} says why).
     */
    public void vacuumActiveJobs() {
        outsideTransaction(this.vacuumActiveJobs);
    }

    /** Vacuums the active-job table and refreshes its statistics, e.g. after a partition moved away. */
    public void vacuumAndAnalyzeActiveJobs() {
        outsideTransaction(sql(JobStatements.VACUUM_ANALYZE_ACTIVE_JOBS));
    }

    private void outsideTransaction(String statementText) {
        StoreSupport.outsideTransaction(this.jdbc, statementText);
    }

    /**
     * Finds a job by id.
     * @param id the job id
     * @return the job, active or finished, or empty
     */
    public Optional<JobSnapshot> find(long id) {
        return this.jdbc.query(this.find, new MapSqlParameterSource("id", id), SNAPSHOT)
            .stream()
            .findFirst();
    }

    /**
     * Reads the jobs among some that have finished.
     * @param ids the job ids
     * @return the finished ones, with their results
     */
    public List<JobSnapshot> findFinished(Collection<Long> ids) {
        return this.jdbc.query(this.findFinished, new MapSqlParameterSource("ids", SqlArrays.bigints(List.copyOf(ids))),
                SNAPSHOT);
    }

    /**
     * Notes a caller awaiting a job's end: the job's end then notifies the channel
     * {@link #endedChannel()} with its id, at the commit of the transaction that ends it.
     * @param id the job id
     * @return whether the job is active or waiting (else it has finished, or is not in this database)
     */
    public boolean await(long id) {
        return !this.jdbc.queryForList(this.await, new MapSqlParameterSource("id", id)
            .addValue("channelPrefix", channel("")), Long.class).isEmpty();
    }

    /** @return the NOTIFY channel on which the ends of awaited jobs arrive, their ids comma-separated */
    public String endedChannel() {
        return this.config.schema() + "/ended";
    }

    /**
     * Lists one page of jobs in this database.
     * @param query the group, the filters and where the previous page stopped
     * @return the page; {@link JobPage#next()} is set when more jobs follow
     */
    public JobPage list(JobQuery query) {
        List<JobPage.Job> jobs = this.jdbc.query(this.list, searchParams(query).addValue("limit", query.limit() + 1),
                (rs, row) -> new JobPage.Job(rs.getLong("id"), rs.getString("task"),
                        JobState.valueOf(rs.getString("state")), rs.getInt("priority"), rs.getInt("attempt"),
                        rs.getInt("max_attempts"), StoreSupport.instant(rs, "created_at"),
                        StoreSupport.instant(rs, "schedule_time"), StoreSupport.instant(rs, "started_at"),
                        StoreSupport.instant(rs, "finished_at"), rs.getString("dedup_key"), rs.getString("error"),
                        rs.getString("lease_owner"), JobTags.parse(rs.getString("tags"))));
        if (jobs.size() <= query.limit()) {
            return new JobPage(jobs, null);
        }
        List<JobPage.Job> page = List.copyOf(jobs.subList(0, query.limit()));
        return new JobPage(page, page.get(page.size() - 1).position().text());
    }

    /**
     * Counts the jobs in this database that a query's group and filters match, wherever its page stands.
     * @param query the group and the filters
     * @return how many jobs match
     */
    public long count(JobQuery query) {
        Long count = this.jdbc.queryForObject(this.count, searchParams(query.after(null)), Long.class);
        return count == null ? 0 : count;
    }

    /**
     * Applies one batch of a bulk action to some jobs of a group, in one short transaction: each
     * job is changed only while it is still in a group the action applies to (see {@link BulkAction}),
     * and on a shard only while the shard holds its partition.
     * @param action the action
     * @param group the group the jobs were found in
     * @param ids the jobs
     * @return the task of each job changed; {@code null} for a running job asked to stop
     */
    public List<String> actOn(BulkAction action, JobQuery.Group group, List<Long> ids) {
        MapSqlParameterSource params = new MapSqlParameterSource("ids", SqlArrays.bigints(ids));
        RowMapper<String> task = (rs, row) -> rs.getString("task");
        return switch (action.kind()) {
            case RERUN -> this.jdbc.query(this.rerunFailedAmong, params, task);
            case CANCEL -> group == JobQuery.Group.WAITING
                    ? ids.stream().map(this.workflows::cancelWaiting).flatMap(Optional::stream).toList()
                    : this.jdbc.query(this.cancelAmong, params, task);
            case DELETE -> this.jdbc.query(this.deleteFinishedAmong, params.addValue("state", group.name()), task);
            case RUN_AT -> this.jdbc.query(this.rescheduleAmong, params.addValue("at", timestamp(action.runAt()),
                    Types.TIMESTAMP_WITH_TIMEZONE), task);
            case PRIORITY -> this.jdbc.query(group == JobQuery.Group.WAITING ? this.prioritizeWaitingAmong
                    : this.prioritizeAmong, params.addValue("priority", action.priority()), task);
        };
    }

    /**
     * Tells every node that jobs of these tasks are due: a NOTIFY on each task's channel, as an enqueue sends.
     * @param tasks the task names
     */
    public void notifyDue(Collection<String> tasks) {
        notifyTasks(tasks, "");
    }

    private MapSqlParameterSource searchParams(JobQuery query) {
        JobQuery.Position after = query.position();
        return new MapSqlParameterSource("group", query.group().name())
            .addValue("task", query.task())
            .addValue("from", timestamp(query.from()), Types.TIMESTAMP_WITH_TIMEZONE)
            .addValue("to", timestamp(query.to()), Types.TIMESTAMP_WITH_TIMEZONE)
            .addValue("dedupKey", query.dedupKey())
            .addValue("error", query.errorText())
            .addValue("ids", query.ids() == null ? null : SqlArrays.bigints(query.ids()), Types.ARRAY)
            .addValue("matches", JSON.writeValueAsString(query.matches().stream().map(match -> Map.of("in",
                    match.in().name().toLowerCase(Locale.ROOT), "path", match.path(), "value", match.value())).toList()))
            .addValue("tags", SqlArrays.texts(query.tags()))
            .addValue("afterTime", timestamp(after == null ? null : after.finishedAt()), Types.TIMESTAMP_WITH_TIMEZONE)
            .addValue("afterId", after == null ? null : after.id(), Types.BIGINT);
    }

    private static OffsetDateTime timestamp(Instant instant) {
        return instant == null ? null : instant.atOffset(ZoneOffset.UTC);
    }

    private static MapSqlParameterSource leaseParams(List<Lease> leases) {
        return new MapSqlParameterSource()
            .addValue("ids", SqlArrays.bigints(leases.stream().map(Lease::jobId).toList()))
            .addValue("epochs", SqlArrays.ints(leases.stream().map(Lease::epoch).toList()));
    }

    /**
     * Orders leases by job id, so that every batched write of a node locks its rows in the same
     * order (the statements walk their input in order) and two of them cannot deadlock.
     */
    private static List<Lease> byId(List<Lease> leases) {
        return leases.stream().sorted(Comparator.comparingLong(Lease::jobId)).toList();
    }

    private static List<Lease> lost(List<Lease> leases, Map<Long, JobState> applied) {
        Set<Long> seen = new HashSet<>(applied.keySet());
        return leases.stream().filter(lease -> !seen.contains(lease.jobId())).toList();
    }

}
