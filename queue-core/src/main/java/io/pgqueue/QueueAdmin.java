package io.pgqueue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import io.pgqueue.QueueAdminException.Reason;
import io.pgqueue.internal.admin.BulkActions;
import io.pgqueue.internal.engine.Engine;
import io.pgqueue.internal.observe.QueueStatsPoller;
import io.pgqueue.internal.shard.PartitionMap;
import io.pgqueue.internal.shard.PartitionMover;
import io.pgqueue.internal.shard.Shards;
import io.pgqueue.internal.store.ControlStore;
import io.pgqueue.internal.store.HistoryStore;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.NodeStore;
import io.pgqueue.internal.store.SchemaStore;
import io.pgqueue.internal.worker.Rescuer;
import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;
import io.pgqueue.message.MessageQueueHistory;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.observe.TaskHistory;
import io.pgqueue.schedule.Schedule;
import io.pgqueue.schedule.ScheduleInfo;
import io.pgqueue.schedule.Schedules;
import io.pgqueue.shard.PartitionMoveResult;
import io.pgqueue.shard.ShardException;
import io.pgqueue.shard.ShardLayout;

/**
 * What operators do to a running queue: pause and resume task types, re-run failed jobs, cancel
 * jobs, rescue stuck leases now, and look at recent failures and the nodes. Every action checks its
 * input first and throws {@link QueueAdminException} without changing anything when the task or job
 * is unknown ({@link Reason#NOT_FOUND}), in the wrong state ({@link Reason#CONFLICT}) or the request
 * does not apply ({@link Reason#INVALID}); otherwise it returns what it changed. Every action that
 * changes something is recorded in the queue's database with who took it ({@link #as}), what,
 * when and how many jobs it changed: {@link #actions} lists them for every node.
 */
public final class QueueAdmin {

    private final Engine engine;

    private final JobStore jobs;

    private final ControlStore controls;

    private final NodeStore nodes;

    private final TaskRegistry tasks;

    private final QueueStatsPoller stats;

    private final QueueClient client;

    private final Rescuer rescuer;

    private final Shards shards;

    private final Schedules schedules;

    private final BulkActions bulk;

    private final HistoryStore history;

    private final Clock clock;

    private final String actor;

    /**
     * Creates the admin of a queue; {@link PgQueue#admin()} hands it out.
     * @param engine the queue's engine
     * @param client the client, for cancellation
     */
    QueueAdmin(Engine engine, QueueClient client) {
        this(engine, client, null);
    }

    private QueueAdmin(Engine engine, QueueClient client, String actor) {
        this.engine = engine;
        this.actor = actor;
        this.bulk = engine.bulkActions();
        this.history = engine.stores().history();
        this.clock = engine.settings().clock();
        this.shards = engine.shards();
        this.schedules = engine.scheduler();
        this.jobs = engine.stores().jobs();
        this.controls = engine.stores().controls();
        this.nodes = engine.stores().nodes();
        this.tasks = engine.settings().tasks();
        this.stats = engine.stats();
        this.client = client;
        this.rescuer = engine.rescuer();
    }

    /**
     * Returns an admin whose actions are recorded as taken by someone ({@link QueueAction#actor()}):
     * the console and the {@code queues} endpoint act through one named after the signed-in user.
     * @param actor who acts, e.g. a user name; {@code null} for no one in particular
     * @return the admin acting as them
     */
    public QueueAdmin as(String actor) {
        return new QueueAdmin(this.engine, this.client, actor == null || actor.isBlank() ? null : actor.strip());
    }

    /**
     * Returns the task types this node knows: declared here, or with jobs in the database.
     * @return the task names, sorted
     */
    public Set<String> knownTasks() {
        Set<String> known = new TreeSet<>(this.stats.latest().tasks().keySet());
        this.tasks.all().forEach(task -> known.add(task.name()));
        return known;
    }

    /**
     * Pauses a task type: no node claims its jobs until it is resumed (each honours it within one
     * poll interval); running jobs finish.
     * @param task the task
     * @return whether it was running before
     * @throws QueueAdminException ({@link Reason#NOT_FOUND}) if the task is unknown
     */
    public boolean pause(String task) {
        boolean changed = this.controls.setPaused(requireTask(task), true);
        record("pause", "task " + task, 0, changed ? "Paused" : "Was paused already");
        return changed;
    }

    /**
     * Resumes a paused task type.
     * @param task the task
     * @return whether it was paused before
     * @throws QueueAdminException ({@link Reason#NOT_FOUND}) if the task is unknown
     */
    public boolean resume(String task) {
        boolean changed = this.controls.setPaused(requireTask(task), false);
        record("resume", "task " + task, 0, changed ? "Resumed" : "Was not paused");
        return changed;
    }

    /**
     * Puts a FAILED job back into the queue with a fresh attempt budget.
     * @param jobId the job
     * @throws QueueAdminException {@link Reason#NOT_FOUND} if the job does not exist; {@link Reason#CONFLICT} if
     * it is not FAILED, an active job holds its dedup key, its partition is moving or it changed meanwhile
     */
    public void rerun(long jobId) {
        Shards.Shard holder = null;
        JobSnapshot job = null;
        for (Shards.Shard shard : this.shards.all()) {
            Optional<JobSnapshot> found = shard.stores().jobs().find(jobId);
            if (found.isPresent()) {
                holder = shard;
                job = found.get();
                break;
            }
        }
        if (job == null) {
            throw new QueueAdminException(Reason.NOT_FOUND, "No job has id " + jobId);
        }
        if (job.state() != JobState.FAILED) {
            throw new QueueAdminException(Reason.CONFLICT, "Job " + jobId + " is " + job.state()
                    + "; only FAILED jobs can be re-run");
        }
        if (this.shards.sharded()) {
            // A job that failed on a shard its partition has left since comes back where the partition is.
            Shards.Shard owner = this.shards.shardOf(job.partition());
            if (owner != holder && PartitionMover.bringFailedJob(holder, owner, jobId)) {
                holder = owner;
            }
        }
        if (!holder.stores().jobs().rerunFailed(jobId)) {
            throw new QueueAdminException(Reason.CONFLICT, "Job " + jobId + " was not re-run: an active job holds its "
                    + "dedup key '" + job.dedupKey() + "', its partition is moving, or it changed meanwhile");
        }
        record("rerun", "job " + jobId + " of " + job.task(), 1, "Queued again");
    }

    /**
     * Finds a job on any shard, with its payload, headers, last error and progress.
     * @param jobId the job
     * @return the job, or empty when no job has the id (or retention removed it)
     */
    public Optional<JobSnapshot> job(long jobId) {
        for (JobStore store : jobStores()) {
            Optional<JobSnapshot> found = store.find(jobId);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    /**
     * Reads a job's attempts on any shard, when its task keeps them (see {@link JobAttempt}).
     * @param jobId the job
     * @return its attempts, oldest first (none when its task keeps none), or empty when no job has the id
     */
    public Optional<List<JobAttempt>> attempts(long jobId) {
        for (JobStore store : jobStores()) {
            Optional<List<JobAttempt>> found = store.attempts(jobId);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    /**
     * Reads the durable steps a job's handler recorded, as {@link QueueClient#steps} does.
     * @param jobId the job id
     * @return the steps in their order, or empty when there is no such job
     */
    public Optional<List<JobStep>> steps(long jobId) {
        for (JobStore store : jobStores()) {
            Optional<List<JobStep>> found = store.jobSteps(jobId);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    /**
     * Lists one page of jobs of every shard, in keyset order (see {@link JobQuery}): as fast on
     * the thousandth page as on the first.
     * @param query the group, the filters and where the previous page stopped
     * @return the page
     */
    public JobPage jobs(JobQuery query) {
        List<JobStore> stores = jobStores();
        if (stores.size() == 1) {
            return stores.get(0).list(query);
        }
        Comparator<JobPage.Job> order = query.group().finished()
                ? Comparator.comparing(JobPage.Job::finishedAt).thenComparingLong(JobPage.Job::id).reversed()
                : Comparator.comparingLong(JobPage.Job::id);
        List<JobPage.Job> merged = new ArrayList<>();
        boolean more = false;
        for (JobStore store : stores) {
            JobPage page = store.list(query);
            merged.addAll(page.jobs());
            more |= page.next() != null;
        }
        merged.sort(order);
        if (merged.size() <= query.limit() && !more) {
            return new JobPage(List.copyOf(merged), null);
        }
        List<JobPage.Job> page = List.copyOf(merged.subList(0, Math.min(query.limit(), merged.size())));
        return new JobPage(page, page.get(page.size() - 1).position().text());
    }

    /**
     * Puts every FAILED job of a task back into the queue (except those whose dedup key an active job holds).
     * @param task the task
     * @return the ids of the re-run jobs
     * @throws QueueAdminException ({@link Reason#NOT_FOUND}) if the task is unknown
     */
    public List<Long> rerunFailed(String task) {
        String name = requireTask(task);
        List<Long> rerun = new ArrayList<>();
        jobStores().forEach(store -> rerun.addAll(store.rerunAllFailed(name)));
        record("rerun-failed", "task " + name, rerun.size(), "Re-ran " + rerun.size() + " failed jobs");
        return rerun;
    }

    /** The job stores of every shard, the main one first; unsharded, the one. */
    private List<JobStore> jobStores() {
        if (this.shards == null || !this.shards.sharded()) {
            return List.of(this.jobs);
        }
        return this.shards.all().stream().map(shard -> shard.stores().jobs()).toList();
    }

    /**
     * Cancels a job: at once if it waits, at its worker's next heartbeat if it runs.
     * @param jobId the job
     * @return what happened
     * @throws QueueAdminException {@link Reason#NOT_FOUND} if the job does not exist; {@link Reason#CONFLICT}
     * if it has finished
     */
    public CancelResult cancel(long jobId) {
        CancelResult result = this.client.cancel(jobId);
        if (result == CancelResult.NOT_FOUND) {
            throw new QueueAdminException(Reason.NOT_FOUND, "No job has id " + jobId);
        }
        if (result == CancelResult.ALREADY_FINISHED) {
            throw new QueueAdminException(Reason.CONFLICT, "Job " + jobId + " has already finished");
        }
        record("cancel", "job " + jobId, 1, result == CancelResult.CANCELLED ? "Cancelled" : "Asked to stop");
        return result;
    }

    /**
     * Rescues every claimed job whose lease expired, now, instead of at the next rescue interval.
     * @return the number of jobs moved to each state
     */
    public Map<JobState, Long> rescueNow() {
        Map<JobState, Long> counts = new EnumMap<>(JobState.class);
        for (JobStore store : jobStores()) {
            Rescuer shardRescuer = store == this.jobs ? this.rescuer : this.rescuer.on(store);
            shardRescuer.rescueExpired().forEach((state, count) -> counts.merge(state, count, Long::sum));
        }
        this.stats.refresh();
        long total = counts.values().stream().mapToLong(Long::longValue).sum();
        record("rescue", "expired leases", total, "Rescued " + total + " jobs: " + counts);
        return counts;
    }

    /**
     * Lists a task's most recent failures.
     * @param task the task
     * @param limit how many
     * @return the failures, newest first
     * @throws QueueAdminException ({@link Reason#NOT_FOUND}) if the task is unknown
     */
    public List<JobFailure> recentFailures(String task, int limit) {
        String name = requireTask(task);
        return jobStores().stream()
            .flatMap(store -> store.recentFailures(name, limit).stream())
            .sorted(Comparator.comparing(JobFailure::failedAt).reversed())
            .limit(limit)
            .toList();
    }

    /**
     * Lists the registered worker nodes.
     * @return the nodes, oldest first
     */
    public List<NodeInfo> nodes() {
        return this.nodes.list();
    }

    /**
     * Moves a partition to another shard while producers and workers run (the move is journaled: a move whose node died is finished by another),
     * waiting up to {@link QueueDefaults#MOVE_DRAIN_TIMEOUT} for its jobs that workers hold.
     * @param partition the partition
     * @param shard the shard to move it to
     * @return what the move did
     * @throws QueueAdminException {@link Reason#INVALID} if the queue is unsharded; {@link Reason#NOT_FOUND} if
     * the partition or the shard is unknown; {@link Reason#CONFLICT} if the partition is on that shard
     * already, is moving to another one, is not ACTIVE, another node moves it now, or its journaled move
     * involves a shard that is no longer configured
     */
    public PartitionMoveResult movePartition(int partition, String shard) {
        try {
            PartitionMoveResult result = new PartitionMover(this.shards).move(partition, shard,
                    QueueDefaults.MOVE_DRAIN_TIMEOUT);
            record("move-partition", "partition " + partition + " to " + shard, 0, String.valueOf(result));
            return result;
        }
        catch (ShardException ex) {
            throw new QueueAdminException(refusedMove(partition, shard), ex.getMessage(), ex);
        }
    }

    /**
     * Why the mover refused a move. It checks the request before anything else, and these checks
     * read configuration only, so repeating them tells its refusals of the request from those of
     * the partition's state.
     */
    private Reason refusedMove(int partition, String shard) {
        if (!this.shards.sharded()) {
            return Reason.INVALID;
        }
        if (partition < 0 || partition >= this.shards.partitions() || this.shards.find(shard).isEmpty()) {
            return Reason.NOT_FOUND;
        }
        return Reason.CONFLICT;
    }

    /** @return where the installation's partitions live; unsharded, the queue's database is the one shard */
    public ShardLayout shards() {
        PartitionMap map = this.shards.map();
        Map<String, Integer> perShard = map.partitionsPerShard();
        return new ShardLayout(this.shards.sharded(), this.shards.partitions(), map.version(),
                this.shards.all().stream()
                    .map(shard -> new ShardLayout.Shard(shard.name(), shard.number(), perShard.getOrDefault(shard.name(), 0)))
                    .toList(),
                map.moving().stream()
                    .map(partition -> new ShardLayout.Move(partition, map.shardOf(partition), map.targetOf(partition)))
                    .toList());
    }

    private String requireTask(String task) {
        if (task == null || !knownTasks().contains(task)) {
            throw new QueueAdminException(Reason.NOT_FOUND, "Unknown task '" + task + "'; known tasks are "
                    + knownTasks());
        }
        return task;
    }

    /** @return every schedule of recurring jobs, with its next and last slot and its last job's state */
    public List<ScheduleInfo> schedules() {
        return this.schedules.list();
    }

    /**
     * Adds or replaces a schedule of recurring jobs (kept in the database until removed).
     * @param schedule the schedule
     * @throws QueueAdminException {@link Reason#NOT_FOUND} if its task is not declared on this node;
     * {@link Reason#CONFLICT} if a schedule configured with its task has the name; {@link Reason#INVALID}
     * if its payload is not JSON or does not fit the task's handler
     */
    public void putSchedule(Schedule schedule) {
        try {
            this.schedules.put(schedule);
            record("schedule-put", "schedule " + schedule.name(), 0, "Put " + schedule.name() + " of " + schedule.task());
        }
        catch (IllegalStateException ex) {
            throw new QueueAdminException(Reason.CONFLICT, ex.getMessage(), ex);
        }
        catch (UnknownTaskException ex) {
            throw new QueueAdminException(Reason.NOT_FOUND, ex.getMessage(), ex);
        }
        catch (InvalidJobException | InvalidSettingException ex) {
            throw new QueueAdminException(Reason.INVALID, ex.getMessage(), ex);
        }
    }

    /**
     * Removes a schedule added at runtime.
     * @param name its name
     * @return whether it existed
     * @throws QueueAdminException ({@link Reason#CONFLICT}) if it is configured with its task
     */
    public boolean removeSchedule(String name) {
        try {
            boolean removed = this.schedules.remove(name);
            if (removed) {
                record("schedule-remove", "schedule " + name, 0, "Removed");
            }
            return removed;
        }
        catch (IllegalStateException ex) {
            throw new QueueAdminException(Reason.CONFLICT, ex.getMessage(), ex);
        }
    }

    /**
     * Counts the jobs a query matches on every shard, whatever its page position: what a bulk
     * action would act on. It reads every matching job (see the job listing in the operations guide
     * for the filters an index serves).
     * @param query the group and the filters
     * @return how many jobs match
     */
    public long count(JobQuery query) {
        return this.bulk.count(query);
    }

    /**
     * Starts a bulk action on every job a query matches (its page position and size are ignored),
     * on every shard, and returns at once: it runs on this node, a batch of up to 500 jobs per
     * statement, each in its own short transaction, recording its progress after each batch
     * ({@link #action}). Each job is changed only while it is still in a group the action applies to,
     * so a job claimed, finished or re-run meanwhile is skipped, and repeating an action acts only
     * on what is left. Actions of one node run one at a time, in order; a node that shuts down
     * stops its running action after the batch at hand (recorded {@link QueueAction.State#STOPPED}).
     * @param query the jobs
     * @param action what to do to them
     * @return the action as recorded: RUNNING, with the number of jobs the query matched
     * @throws QueueAdminException {@link Reason#INVALID} if the action does not apply to the query's group
     */
    public QueueAction startBulk(JobQuery query, BulkAction action) {
        try {
            return this.bulk.start(this.actor, query, action);
        }
        catch (IllegalArgumentException ex) {
            throw new QueueAdminException(Reason.INVALID, ex.getMessage(), ex);
        }
    }

    /**
     * Runs a bulk action as {@link #startBulk} does, in the caller's thread, and returns when it is done.
     * @param query the jobs
     * @param action what to do to them
     * @return the action as it ended
     * @throws QueueAdminException {@link Reason#INVALID} if the action does not apply to the query's group
     */
    public QueueAction bulk(JobQuery query, BulkAction action) {
        try {
            return this.bulk.run(this.actor, query, action);
        }
        catch (IllegalArgumentException ex) {
            throw new QueueAdminException(Reason.INVALID, ex.getMessage(), ex);
        }
    }

    /**
     * Reads a recorded action: a bulk action's progress, or any action of the audit trail.
     * @param id its id
     * @return it, or empty
     */
    public Optional<QueueAction> action(long id) {
        return this.bulk.find(id);
    }

    /**
     * Lists the recorded actions of every node, newest first: the audit trail.
     * @param before only actions with a smaller id (the last id of the previous page), or {@code null} for the newest
     * @param limit the most actions, 1 to {@value JobQuery#MAX_LIMIT}
     * @return the actions
     * @throws QueueAdminException {@link Reason#INVALID} if the limit is out of range
     */
    public List<QueueAction> actions(Long before, int limit) {
        if (limit < 1 || limit > JobQuery.MAX_LIMIT) {
            throw new QueueAdminException(Reason.INVALID, "A page holds 1 to " + JobQuery.MAX_LIMIT + " actions, not "
                    + limit);
        }
        return this.bulk.list(before, limit);
    }

    /**
     * Moves the visible messages of a dead-letter queue back to a queue (see
     * {@link MessageQueues#redrive}), recorded in the audit trail.
     * @param deadLetterQueue the queue the messages leave
     * @param target the queue they join
     * @param max the most messages to move
     * @return how many moved
     * @throws QueueAdminException {@link Reason#NOT_FOUND} for an unknown queue; {@link Reason#INVALID} for a FIFO
     * queue and a standard one, the same queue twice or a {@code max} below 1
     */
    public int redriveMessages(String deadLetterQueue, String target, int max) {
        int moved;
        try {
            moved = this.engine.messages().redrive(deadLetterQueue, target, max);
        }
        catch (MessageQueueException ex) {
            throw new QueueAdminException(ex.error() == MessageQueueError.QUEUE_DOES_NOT_EXIST ? Reason.NOT_FOUND
                    : Reason.INVALID, ex.getMessage(), ex);
        }
        record("redrive", "message queue " + deadLetterQueue + " to " + target, moved, "Moved " + moved + " messages");
        return moved;
    }

    /**
     * Reads what each task did over a window, on every node: per minute for a window of up to a day,
     * per hour for a longer one, up to a week (see {@link TaskHistory}). Worker nodes add their
     * figures every few seconds; the queue keeps a day of minutes and a week of hours.
     * @param window how far back, from now: more than zero, at most 7 days
     * @return each task's history, by task name; a task with no figures in the window is left out
     * @throws QueueAdminException {@link Reason#INVALID} if the window is not positive or longer than 7 days
     */
    public Map<String, TaskHistory> history(Duration window) {
        Duration step = historyStep(window);
        return this.history.read(step, historyStart(window, step));
    }

    /**
     * Reads what was done with one message queue over a window, on every node, step by step: per
     * minute for a window of up to a day, per hour for a longer one, up to a week.
     * @param queue the queue's name
     * @param window how far back, from now: more than zero, at most 7 days
     * @return the queue's history; no points for a queue nothing was done with in the window
     * @throws QueueAdminException {@link Reason#INVALID} if the window is not positive or longer than 7 days
     */
    public MessageQueueHistory messageHistory(String queue, Duration window) {
        Duration step = historyStep(window);
        return this.history.readMessageSteps(queue, step, historyStart(window, step));
    }

    /** The step of a history window: a minute up to a day, else an hour. */
    private static Duration historyStep(Duration window) {
        if (window == null || window.isZero() || window.isNegative() || window.compareTo(MAX_HISTORY) > 0) {
            throw new QueueAdminException(Reason.INVALID, "A history window is more than zero and at most "
                    + MAX_HISTORY.toDays() + " days, not " + window);
        }
        return window.compareTo(Duration.ofDays(1)) <= 0 ? HistoryStore.MINUTE : HistoryStore.HOUR;
    }

    /** The start of the step a window starts in. */
    private Instant historyStart(Duration window, Duration step) {
        Instant from = this.clock.instant().minus(window);
        return from.minusMillis(Math.floorMod(from.toEpochMilli(), step.toMillis()));
    }

    /**
     * Reads what was done with each message queue over the last minutes, on every node: messages
     * sent, received and deleted (every node that uses message queues adds its counts every few
     * seconds; the queue keeps a day of minutes).
     * @param window how far back, from now: 1 minute to 24 hours
     * @return per queue name, its counts over the window: {@code sent}, {@code received}, {@code deleted}
     * @throws QueueAdminException {@link Reason#INVALID} if the window is shorter than a minute or longer than a day
     */
    public Map<String, Map<String, Long>> messageCounts(Duration window) {
        if (window == null || window.compareTo(Duration.ofMinutes(1)) < 0 || window.compareTo(Duration.ofDays(1)) > 0) {
            throw new QueueAdminException(Reason.INVALID, "A message history window is 1 minute to 24 hours, not " + window);
        }
        Instant from = this.clock.instant().minus(window);
        Map<String, Map<String, Long>> counts = new TreeMap<>();
        this.history.readMessages(from.minusMillis(Math.floorMod(from.toEpochMilli(), 60_000L))).forEach((queue, figures) ->
                counts.put(queue, Map.of("sent", figures.sent(), "received", figures.received(), "deleted",
                        figures.deleted())));
        return counts;
    }

    /**
     * Checks, on every shard, what makes a queue slow or stuck that it cannot fix itself: the
     * schema's migrations, missing or invalid indexes, dead rows piling up, what keeps vacuum from
     * removing them (a transaction open for over 5 minutes, a prepared transaction, a replication
     * slot), autovacuum switched off, sessions idle in a transaction and connections running out.
     * The same checks but the schema's run in psql as {@code SELECT * FROM <schema>.doctor()}.
     * @return the findings, shard by shard
     */
    public List<DoctorCheck> doctor() {
        List<DoctorCheck> checks = new ArrayList<>();
        for (Shards.Shard shard : this.engine.shards().all()) {
            SchemaStore schema = shard.stores().schema();
            try {
                schema.requireMigrated();
                checks.add(new DoctorCheck(shard.name(), "schema", "OK", "migrated to this release's version", ""));
            }
            catch (QueueSchemaException ex) {
                checks.add(new DoctorCheck(shard.name(), "schema", "FAIL", ex.getMessage(),
                        "Apply the queue's migrations (QueueSchema.migrate, or pgqueue.flyway.enabled=true)"));
                continue;
            }
            schema.doctor(DOCTOR_TRANSACTION_AGE).forEach(row -> checks.add(new DoctorCheck(shard.name(), row[0], row[1],
                    row[2], row[3])));
        }
        return checks;
    }

    /** How long a transaction may stay open before {@link #doctor()} reports it. */
    private static final Duration DOCTOR_TRANSACTION_AGE = Duration.ofMinutes(5);

    /** The longest window {@link #history} reads. */
    public static final Duration MAX_HISTORY = Duration.ofDays(7);

    private void record(String action, String target, long acted, String message) {
        this.bulk.record(this.actor, action, target, acted, message);
    }

    /**
     * Finds a workflow (or batch) with each of its jobs and their states.
     * @param id the workflow id
     * @return the workflow, or empty when unknown or removed by retention
     */
    public Optional<WorkflowInfo> workflow(long id) {
        for (JobStore store : jobStores()) {
            Optional<WorkflowInfo> found = store.workflows().find(id);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    /**
     * Lists workflows without their jobs: the running ones, newest first, then the latest finished.
     * @param limit at most this many running and this many finished ones (per shard)
     * @return the workflows
     */
    public List<WorkflowInfo> workflows(int limit) {
        List<WorkflowInfo> all = new ArrayList<>();
        jobStores().forEach(store -> all.addAll(store.workflows().list(limit)));
        return all;
    }
}
