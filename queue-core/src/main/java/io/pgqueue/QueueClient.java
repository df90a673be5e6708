package io.pgqueue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

import javax.sql.DataSource;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.pgqueue.internal.balance.PartitionLoad;
import io.pgqueue.internal.enqueue.Duplicates;
import io.pgqueue.internal.enqueue.GroupCommitter;
import io.pgqueue.internal.enqueue.PayloadWriter;
import io.pgqueue.internal.shard.OutboxRelay;
import io.pgqueue.internal.shard.PartitionHash;
import io.pgqueue.internal.shard.PartitionMap;
import io.pgqueue.internal.shard.Shards;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.NewJob;
import io.pgqueue.internal.store.PartitionNotHeldException;
import io.pgqueue.internal.store.WaitingJob;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.observe.QueueObservations;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.shard.ShardException;
import org.springframework.core.ResolvableType;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.ObjectMapper;

/**
 * Enqueues, cancels and looks up jobs.
 * <p>
 * <strong>Enqueue is transactional:</strong> called inside a Spring-managed transaction on the
 * queue's DataSource, the job is written in that transaction, so it exists if and only if the
 * caller's business change commits; workers are notified on commit. Called outside a transaction,
 * the job is committed before the call returns; concurrent calls of this kind share one INSERT
 * (group commit), each returning once its own job is committed.
 * <p>
 * Every job is validated before anything is written: a blank or unknown task, a payload that
 * cannot be serialized or exceeds the size limit, and invalid options throw an
 * {@link InvalidJobException} and leave the database untouched. A batch is all or nothing.
 */
public final class QueueClient implements AutoCloseable {

    /**
     * Transactions in flight at most for grouped enqueues. One: a NOTIFY holds PostgreSQL's global
     * notification lock from before the commit until its WAL flush, so notifying transactions
     * commit one after the other anyway, and one in flight makes the next group the largest.
     * Measured with 8 producers (mixed workload): 4 in flight sustained 1,000 jobs/s, 2 sustained
     * 4,000, 1 sustained 6,000.
     */
    private static final int GROUP_WRITERS = 1;

    /** Jobs in one grouped INSERT at most. */
    private static final int GROUP_MAX = 500;

    private final JobStore store;

    /** The shards jobs are routed to; unsharded, the one shard whose job store is {@link #store}. */
    private final Shards shards;

    private final QueueConfig config;

    private final TaskRegistry tasks;

    private final ObjectMapper mapper;

    private final QueueEvents events;

    private final ObservationRegistry observations;

    private final GroupCommitter<NewJob, Long> groupCommitter;

    private final PartitionLoad load;

    private final PayloadWriter payloads;

    private final Duplicates duplicates;

    /** Relays the outbox to the shards (sharded only); created on first use. */
    private OutboxRelay relay;

    private boolean closed;

    /** Per shard but the main one (whose committer is {@link #groupCommitter}), by name. */
    private final Map<String, GroupCommitter<NewJob, Long>> shardCommitters = new ConcurrentHashMap<>();

    /** The handler's payload type of each task, {@code Object} where it is not known. */
    private final Map<String, Class<?>> payloadTypes = new ConcurrentHashMap<>();

    /**
     * Creates a client that reports no telemetry.
     * @param store the job store
     * @param config the queue's settings
     * @param tasks the declared task types
     * @param mapper the JSON mapper for payloads
     */
    public QueueClient(JobStore store, QueueConfig config, TaskRegistry tasks, ObjectMapper mapper) {
        this(store, config, tasks, mapper, QueueTelemetry.NONE);
    }

    /**
     * Creates a client.
     * @param store the job store
     * @param config the queue's settings
     * @param tasks the declared task types
     * @param mapper the JSON mapper for payloads
     * @param telemetry where to report enqueues (metrics) and their observations (tracing)
     */
    public QueueClient(JobStore store, QueueConfig config, TaskRegistry tasks, ObjectMapper mapper,
            QueueTelemetry telemetry) {
        this(store, null, config, tasks, mapper, telemetry);
    }

    /**
     * Creates a client that routes each job to the shard of its partition.
     * @param shards the installation's shards
     * @param tasks the declared task types
     * @param mapper the JSON mapper for payloads
     * @param telemetry where to report enqueues (metrics) and their observations (tracing)
     */
    public QueueClient(Shards shards, TaskRegistry tasks, ObjectMapper mapper, QueueTelemetry telemetry) {
        this(shards.main().stores().jobs(), shards, shards.main().stores().config(), tasks, mapper, telemetry);
    }

    private QueueClient(JobStore store, Shards shards, QueueConfig config, TaskRegistry tasks, ObjectMapper mapper,
            QueueTelemetry telemetry) {
        this.events = telemetry.events();
        this.observations = telemetry.observations();
        this.store = Objects.requireNonNull(store, "store");
        this.shards = shards;
        this.load = shards != null && shards.sharded() ? new PartitionLoad(shards.partitions()) : null;
        this.groupCommitter = new GroupCommitter<>("group-commit", store::insert, GROUP_WRITERS, GROUP_MAX);
        this.config = Objects.requireNonNull(config, "config");
        this.tasks = Objects.requireNonNull(tasks, "tasks");
        this.mapper = Objects.requireNonNull(mapper, "mapper");
        this.payloads = new PayloadWriter(mapper, config.maxPayloadBytes());
        this.duplicates = new Duplicates(tasks, this.payloads);
        for (TaskDefinition task : tasks.all()) {
            String channel = store.channel(task.name());
            if (channel.getBytes(StandardCharsets.UTF_8).length > 63) {
                throw new IllegalArgumentException("Task '" + task.name() + "' in schema '" + config.schema()
                        + "' gives the NOTIFY channel '" + channel + "', longer than PostgreSQL's 63 bytes; "
                        + "shorten the task name or the schema");
            }
        }
    }

    /**
     * Creates a client with its own store on a DataSource.
     * @param dataSource the queue's database
     * @param config the queue's settings
     * @param tasks the declared task types
     * @param mapper the JSON mapper for payloads
     * @return the client
     */
    public static QueueClient create(DataSource dataSource, QueueConfig config, TaskRegistry tasks, ObjectMapper mapper) {
        return new QueueClient(new JobStore(dataSource, config), config, tasks, mapper);
    }

    /**
     * Enqueues a job with the task's default options, in the caller's transaction if there is one.
     * @param task the task name
     * @param payload the payload
     * @return the job id and what happened
     * @throws InvalidJobException if the job is invalid; nothing was written
     */
    public EnqueueResult enqueue(String task, Object payload) {
        return enqueue(JobRequest.of(task, payload));
    }

    /**
     * Enqueues a job, in the caller's transaction if there is one.
     * @param task the task name
     * @param payload the payload
     * @param options the options
     * @return the job id and what happened
     * @throws InvalidJobException if the job is invalid; nothing was written
     */
    public EnqueueResult enqueue(String task, Object payload, EnqueueOptions options) {
        return enqueue(JobRequest.of(task, payload, options));
    }

    /**
     * Enqueues a job for the task a handler class is bound to, with the task's default options, in
     * the caller's transaction if there is one.
     * @param <P> the payload type
     * @param handlerType the handler class
     * @param payload the payload
     * @return the job id and what happened
     * @throws InvalidJobException if the job is invalid; nothing was written
     */
    public <P> EnqueueResult enqueue(Class<? extends TaskHandler<P>> handlerType, P payload) {
        return enqueue(taskOf(handlerType), payload);
    }

    /**
     * Enqueues a job for the task a handler class is bound to, in the caller's transaction if there is one.
     * @param <P> the payload type
     * @param handlerType the handler class
     * @param payload the payload
     * @param options the options
     * @return the job id and what happened
     * @throws InvalidJobException if the job is invalid; nothing was written
     */
    public <P> EnqueueResult enqueue(Class<? extends TaskHandler<P>> handlerType, P payload, EnqueueOptions options) {
        return enqueue(taskOf(handlerType), payload, options);
    }

    private String taskOf(Class<?> handlerType) {
        if (handlerType == null) {
            throw new InvalidJobException("The handler class of an enqueue must not be null");
        }
        return this.tasks.require(handlerType).name();
    }

    /**
     * Enqueues a job, in the caller's transaction if there is one.
     * @param request the job
     * @return the job id and what happened
     * @throws InvalidJobException if the job is invalid; nothing was written
     */
    public EnqueueResult enqueue(JobRequest request) {
        return enqueueAll(List.of(request)).get(0);
    }

    /**
     * Enqueues many jobs in one statement, in the caller's transaction if there is one; all or nothing.
     * @param requests the jobs
     * @return per job, in order, its id and what happened
     * @throws InvalidJobException if any job is invalid; nothing was written
     */
    public List<EnqueueResult> enqueueAll(List<JobRequest> requests) {
        if (requests.isEmpty()) {
            return List.of();
        }
        List<TaskDefinition> definitions = new ArrayList<>(requests.size());
        for (JobRequest request : requests) {
            if (request == null) {
                throw new InvalidJobException("A job request of an enqueue must not be null");
            }
            definitions.add(this.tasks.require(request.task()));
            requireNoWorkflowHeaders(request);
        }
        String task = definitions.stream().map(TaskDefinition::name).distinct().count() == 1 ? definitions.get(0).name()
                : "mixed";
        Observation observation = QueueObservations.enqueue(this.observations, task).start();
        try (Observation.Scope scope = observation.openScope()) {
            Map<String, String> propagated = QueueObservations.propagated(observation);
            List<EnqueueResult> results = enqueue(requests, definitions, propagated);
            countOnCommit(definitions, results);
            return results;
        }
        catch (RuntimeException ex) {
            observation.error(ex);
            throw ex;
        }
        finally {
            observation.stop();
        }
    }

    private List<EnqueueResult> enqueue(List<JobRequest> requests, List<TaskDefinition> definitions,
            Map<String, String> propagated) {
        List<NewJob> jobs = new ArrayList<>(requests.size());
        List<DedupPolicy> policies = new ArrayList<>(requests.size());
        // Jobs without a key go to one partition picked at random, so that a batch of them stays on one shard.
        int anyPartition = ThreadLocalRandom.current().nextInt(partitionCount());
        for (int i = 0; i < requests.size(); i++) {
            JobRequest request = requests.get(i);
            TaskDefinition task = definitions.get(i);
            NewJob job = prepare(task, request, propagated);
            // A task with groups keeps each group in one partition, so a group's turns, limit and
            // sequence are decided on one shard.
            String key = request.options().partitionKey() != null && task.groups() != null ? request.options().partitionKey()
                    : task.groups() != null ? group(task, request.payload(), request.options().headers())
                    : job.dedupKey() != null ? job.dedupKey() : request.options().partitionKey();
            jobs.add(job.inPartition(key == null ? anyPartition : PartitionHash.partitionOf(key, partitionCount())));
            policies.add(request.options().dedupPolicy() != null ? request.options().dedupPolicy() : task.dedupPolicy());
        }
        if (requests.stream().anyMatch(request -> !request.options().dependsOn().isEmpty())) {
            return created(enqueueWithDependencies(requests, jobs));
        }
        if (this.shards == null || !this.shards.sharded()) {
            return enqueueOn(this.store, this.groupCommitter, jobs, policies);
        }
        List<EnqueueResult> results = enqueueRouted(jobs, policies);
        jobs.forEach(job -> this.load.add(job.partition()));
        return results;
    }

    /**
     * Starts building a workflow: jobs that run after others, enqueued together.
     * @param name the workflow's name (shown by the endpoint and in metrics' logs)
     * @return the builder
     * @throws InvalidJobException if the name is blank or longer than 128 characters
     */
    public Workflow workflow(String name) {
        return new Workflow(this, name);
    }

    /**
     * Starts building a workflow named "workflow".
     * @return the builder
     */
    public Workflow workflow() {
        return workflow("workflow");
    }

    /**
     * Starts building a batch: jobs and a callback that runs once all of them ended.
     * @param name the batch's name
     * @return the builder
     */
    public Batch batch(String name) {
        return new Batch(this, name);
    }

    /** Enqueues a built workflow; see {@link Workflow#enqueue()}. */
    EnqueuedWorkflow enqueue(Workflow workflow) {
        Observation observation = QueueObservations.enqueue(this.observations, "workflow").start();
        try (Observation.Scope scope = observation.openScope()) {
            return enqueue(workflow, QueueObservations.propagated(observation));
        }
        catch (RuntimeException ex) {
            observation.error(ex);
            throw ex;
        }
        finally {
            observation.stop();
        }
    }

    private EnqueuedWorkflow enqueue(Workflow workflow, Map<String, String> propagated) {
        List<Workflow.Step> steps = workflow.steps();
        List<TaskDefinition> definitions = steps.stream().map(step -> this.tasks.require(step.request().task())).toList();
        steps.forEach(step -> requireNoWorkflowHeaders(step.request()));
        String partitionKey = workflow.partitionKey();
        int partition = partitionKey != null ? PartitionHash.partitionOf(partitionKey, partitionCount())
                : workflowPartition();
        JobStore target = storeOf(partition, "workflow '" + workflow.name() + "'");
        long workflowId = target.workflows().nextIds(1).get(0);
        Map<String, Integer> index = new LinkedHashMap<>();
        List<GraphJob> graph = new ArrayList<>(steps.size());
        for (int i = 0; i < steps.size(); i++) {
            Workflow.Step step = steps.get(i);
            index.put(step.name(), i);
            JobRequest request = step.request();
            EnqueueOptions options = request.options()
                .withHeader(QueueDefaults.WORKFLOW_HEADER, Long.toString(workflowId))
                .withHeader(QueueDefaults.STEP_HEADER, step.name());
            NewJob job = prepareDependent(definitions.get(i), JobRequest.of(request.task(), request.payload(), options),
                    propagated, "Step '" + step.name() + "' of workflow '" + workflow.name() + "'").inPartition(partition);
            graph.add(new GraphJob(job, options.dependsOn(), step.after().stream().map(index::get).toList(),
                    options.onDependencyFailure() != null ? options.onDependencyFailure() : workflow.dependencyFailure()));
        }
        List<Long> ids = writeGraph(target, graph, workflowId, workflow, partition);
        if (this.load != null) {
            ids.forEach(id -> this.load.add(partition));
        }
        Map<String, Long> jobIds = new LinkedHashMap<>();
        for (int i = 0; i < steps.size(); i++) {
            jobIds.put(steps.get(i).name(), ids.get(i));
        }
        countOnCommit(definitions, created(ids));
        String name = workflow.name();
        afterCommit(() -> this.events.workflowStarted(name));
        return new EnqueuedWorkflow(workflowId, Collections.unmodifiableMap(jobIds));
    }

    /** Jobs of which some wait for jobs already in the queue, written in one transaction. */
    private List<Long> enqueueWithDependencies(List<JobRequest> requests, List<NewJob> jobs) {
        List<GraphJob> graph = new ArrayList<>(jobs.size());
        Integer partition = null;
        for (int i = 0; i < jobs.size(); i++) {
            EnqueueOptions options = requests.get(i).options();
            NewJob job = jobs.get(i);
            if (job.dedupKey() != null) {
                throw new InvalidJobException("A '" + job.task() + "' job with dependencies cannot have a dedup key");
            }
            if (partition == null) {
                partition = job.partition();
            }
            else if (partition != job.partition() && this.shards != null && this.shards.sharded()) {
                throw new InvalidJobException("Jobs enqueued with dependencies in one call must share a partition key "
                        + "on a sharded installation");
            }
            graph.add(new GraphJob(job.inPartition(partition), options.dependsOn(), List.of(),
                    options.onDependencyFailure() != null ? options.onDependencyFailure() : DependencyFailure.CANCEL));
        }
        return writeGraph(storeOf(partition, "jobs with dependencies"), graph, null, null, partition);
    }

    /**
     * Writes jobs some of which wait for others, in one transaction (the caller's if there is one):
     * jobs without dependencies as usual, marked tracked; the others as waiting. Dependencies in the
     * queue already are checked first, so that a missing one writes nothing.
     */
    private List<Long> writeGraph(JobStore target, List<GraphJob> graph, Long workflowId, Workflow workflow,
            int partition) {
        List<Long> external = graph.stream().flatMap(job -> job.external().stream()).distinct().sorted().toList();
        if (!external.isEmpty()) {
            List<Long> missing = target.workflows().missing(external);
            if (!missing.isEmpty()) {
                throw new InvalidJobException("Dependencies " + missing + " are not in the queue: unknown, removed by "
                        + "retention" + (this.shards != null && this.shards.sharded()
                                ? ", or in another partition (give dependents their dependencies' partition key)" : ""));
            }
        }
        if (!external.isEmpty()) {
            // Outside the caller's transaction, so that a running dependency's row is not held
            // (its lease renewals would wait) for as long as that transaction lasts.
            target.workflows().trackInOwnTransaction(external);
        }
        try {
            return writeGraphInTransaction(target, graph, workflowId, workflow, partition);
        }
        catch (PartitionNotHeldException ex) {
            throw new ShardException("Partition " + partition + " is moving to another shard; nothing was written. "
                    + "Enqueue again in a moment");
        }
    }

    private List<Long> writeGraphInTransaction(JobStore target, List<GraphJob> graph, Long workflowId, Workflow workflow,
            int partition) {
        return target.inTransaction(() -> {
            List<Integer> roots = new ArrayList<>();
            List<Integer> waiting = new ArrayList<>();
            for (int i = 0; i < graph.size(); i++) {
                GraphJob job = graph.get(i);
                (job.external().isEmpty() && job.internal().isEmpty() ? roots : waiting).add(i);
            }
            Long[] ids = new Long[graph.size()];
            if (!roots.isEmpty()) {
                List<Long> written = target.insert(roots.stream().map(i -> graph.get(i).job()).toList());
                for (int k = 0; k < roots.size(); k++) {
                    ids[roots.get(k)] = written.get(k);
                }
                if (workflowId != null) {
                    target.workflows().track(written);
                }
            }
            if (!waiting.isEmpty()) {
                List<Long> taken = target.workflows().nextIds(waiting.size());
                for (int k = 0; k < waiting.size(); k++) {
                    ids[waiting.get(k)] = taken.get(k);
                }
            }
            if (workflowId != null) {
                Map<String, Long> steps = new LinkedHashMap<>();
                List<Workflow.Step> named = workflow.steps();
                for (int i = 0; i < ids.length; i++) {
                    steps.put(named.get(i).name(), ids[i]);
                }
                target.workflows().insertWorkflow(workflowId, workflow.name(), workflow.dependencyFailure(), steps,
                        partition);
            }
            if (!waiting.isEmpty()) {
                List<WaitingJob> rows = new ArrayList<>(waiting.size());
                for (int i : waiting) {
                    GraphJob job = graph.get(i);
                    List<Long> dependsOn = new ArrayList<>(job.external());
                    job.internal().forEach(k -> dependsOn.add(ids[k]));
                    rows.add(new WaitingJob(ids[i], job.job(), workflowId, job.onFailure(), dependsOn));
                }
                List<Long> missing = target.workflows().addWaiting(rows);
                if (!missing.isEmpty()) {
                    throw new InvalidJobException("Dependencies " + missing + " left the queue while the jobs that "
                            + "wait for them were written; nothing was written");
                }
            }
            return List.of(ids);
        });
    }

    /** The job store of a partition's shard, which must be writable in the caller's transaction. */
    private JobStore storeOf(int partition, String what) {
        if (this.shards == null || !this.shards.sharded()) {
            return this.store;
        }
        Shards.Shard shard = this.shards.shardOf(partition);
        if (shard != this.shards.main() && TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new InvalidJobException("The " + what + " belong to partition " + partition + " on shard '"
                    + shard.name() + "', which the caller's transaction (on the main shard) cannot write: enqueue "
                    + "them outside a transaction, or without a partition key");
        }
        return shard.stores().jobs();
    }

    /** A partition for a workflow without a key: on the main shard when a transaction is active. */
    private int workflowPartition() {
        if (this.shards == null || !this.shards.sharded() || !TransactionSynchronizationManager.isActualTransactionActive()) {
            return ThreadLocalRandom.current().nextInt(partitionCount());
        }
        PartitionMap map = this.shards.map();
        List<Integer> local = new ArrayList<>();
        for (int partition = 0; partition < partitionCount(); partition++) {
            if (map.shardOf(partition).equals(this.shards.main().name()) && !map.isMoving(partition)) {
                local.add(partition);
            }
        }
        if (local.isEmpty()) {
            throw new InvalidJobException("The main shard holds no partition, so a workflow cannot join the caller's "
                    + "transaction; enqueue it outside a transaction");
        }
        return local.get(ThreadLocalRandom.current().nextInt(local.size()));
    }

    /** A job of a workflow or with dependencies: as any job, without a dedup key. */
    private NewJob prepareDependent(TaskDefinition task, JobRequest request, Map<String, String> propagated, String what) {
        NewJob job = prepare(task, request, propagated);
        if (job.dedupKey() != null) {
            throw new InvalidJobException(what + " has a dedup key; jobs in a workflow cannot have one");
        }
        return job;
    }

    /**
     * Rejects the headers only workflows set: a job cannot claim a workflow's membership or step, or
     * the counts of its dependencies, by hand.
     */
    private static void requireNoWorkflowHeaders(JobRequest request) {
        for (String name : request.options().headers().keySet()) {
            if (name.equals(QueueDefaults.WORKFLOW_HEADER) || name.equals(QueueDefaults.STEP_HEADER)
                    || name.startsWith("pgqueue.dependencies.")) {
                throw new InvalidJobException("The header '" + name + "' of a '" + request.task() + "' job is set by "
                        + "pgqueue's workflows; leave it out (copying a running job's headers would copy it)");
            }
        }
    }

    private static void afterCommit(Runnable action) {
        if (TransactionSynchronizationManager.isSynchronizationActive()) {
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCommit() {
                    action.run();
                }
            });
        }
        else {
            action.run();
        }
    }

    /** A job of a graph: its dependencies in the queue already and among the graph's jobs (by index). */
    private record GraphJob(NewJob job, List<Long> external, List<Integer> internal, DependencyFailure onFailure) {
    }

    /** @return the jobs this node enqueued per partition, which weigh the partitions (sharded only) */
    public Optional<PartitionLoad> partitionLoad() {
        return Optional.ofNullable(this.load);
    }

    private int partitionCount() {
        return this.shards == null ? QueueDefaults.PARTITIONS : this.shards.partitions();
    }

    /**
     * Writes jobs to the shards of their partitions. Jobs all on the main shard are written there,
     * in the caller's transaction if there is one; jobs all on one other shard, outside a
     * transaction, are written there. Otherwise, so that the jobs exist if and only if the
     * transaction (the caller's, or one opened here) commits, those of other shards go to the
     * main shard's outbox and are relayed after the commit. A shard that no longer holds a
     * partition (the map here was stale, or the partition moved) writes nothing: the map is read
     * again and the jobs routed anew, waiting while a partition moves.
     */
    private List<EnqueueResult> enqueueRouted(List<NewJob> jobs, List<DedupPolicy> policies) {
        long deadline = System.nanoTime() + QueueDefaults.PARTITION_MOVE_WAIT.toNanos();
        List<Integer> partitions = jobs.stream().map(NewJob::partition).distinct().toList();
        while (true) {
            PartitionMap map = this.shards.map();
            if (partitions.stream().anyMatch(map::isMoving)) {
                map = this.shards.awaitSettled(partitions, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            }
            Map<String, List<Integer>> byShard = new LinkedHashMap<>();
            for (int i = 0; i < jobs.size(); i++) {
                byShard.computeIfAbsent(map.shardOf(jobs.get(i).partition()), shard -> new ArrayList<>()).add(i);
            }
            Shards.Shard main = this.shards.main();
            try {
                if (byShard.size() == 1) {
                    Shards.Shard shard = shard(byShard.keySet().iterator().next());
                    if (shard == main || !TransactionSynchronizationManager.isActualTransactionActive()) {
                        return enqueueOn(shard.stores().jobs(), committer(shard), jobs, policies);
                    }
                }
                return enqueueThroughOutbox(jobs, policies, byShard);
            }
            catch (PartitionNotHeldException ex) {
                if (System.nanoTime() - deadline > 0) {
                    throw new ShardException("A shard does not hold partitions " + ex.partitions() + " that the "
                            + "partition map places there; nothing was written");
                }
                this.shards.refresh();
            }
        }
    }

    /**
     * Writes the jobs of the main shard there and the others to its outbox, in one transaction on
     * the main shard (the caller's, if there is one); the outbox relay takes them to their shards
     * after the commit.
     */
    private List<EnqueueResult> enqueueThroughOutbox(List<NewJob> jobs, List<DedupPolicy> policies,
            Map<String, List<Integer>> byShard) {
        Shards.Shard main = this.shards.main();
        List<Integer> local = byShard.getOrDefault(main.name(), List.of());
        List<Integer> remote = new ArrayList<>();
        byShard.forEach((name, indexes) -> {
            if (!name.equals(main.name())) {
                remote.addAll(indexes);
            }
        });
        List<String> policyNames = remote.stream().map(i -> this.duplicates.recordedName(jobs.get(i), policies.get(i))).toList();
        EnqueueResult[] results = new EnqueueResult[jobs.size()];
        PartitionNotHeldException[] notHeld = {null};
        main.stores().jobs().inTransaction(() -> {
            if (!local.isEmpty()) {
                try {
                    List<EnqueueResult> written = enqueueOn(main.stores().jobs(), this.groupCommitter,
                            local.stream().map(jobs::get).toList(), local.stream().map(policies::get).toList());
                    for (int k = 0; k < local.size(); k++) {
                        results[local.get(k)] = written.get(k);
                    }
                }
                catch (PartitionNotHeldException ex) {
                    // Nothing was written: return normally, so the caller's transaction is not marked rollback-only.
                    notHeld[0] = ex;
                    return null;
                }
            }
            List<Long> ids = main.outbox().write(remote.stream().map(jobs::get).toList(), policyNames);
            for (int k = 0; k < remote.size(); k++) {
                NewJob job = jobs.get(remote.get(k));
                results[remote.get(k)] = new EnqueueResult(ids.get(k),
                        job.dedupKey() == null ? EnqueueOutcome.CREATED : EnqueueOutcome.RELAYED);
            }
            return null;
        });
        if (notHeld[0] != null) {
            throw notHeld[0];
        }
        if (TransactionSynchronizationManager.isSynchronizationActive()) {
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCommit() {
                    relay().wake();
                }
            });
        }
        else {
            relay().wake();
        }
        return List.of(results);
    }

    private Shards.Shard shard(String name) {
        return this.shards.find(name).orElseThrow(() -> new ShardException(
                "The partition map places partitions on shard '" + name + "', which is not configured"));
    }

    /** @return the outbox relay, started on first use */
    synchronized OutboxRelay relay() {
        if (this.relay == null) {
            this.relay = new OutboxRelay(this.shards, this.duplicates);
        }
        if (!this.closed && !this.relay.isRunning()) {
            this.relay.start();
        }
        return this.relay;
    }

    private GroupCommitter<NewJob, Long> committer(Shards.Shard shard) {
        if (shard == this.shards.main()) {
            return this.groupCommitter;
        }
        return this.shardCommitters.computeIfAbsent(shard.name(),
                name -> new GroupCommitter<>("group-commit", shard.stores().jobs()::insert, GROUP_WRITERS, GROUP_MAX));
    }

    /** Writes jobs to one database, in the caller's transaction if there is one. */
    private List<EnqueueResult> enqueueOn(JobStore store, GroupCommitter<NewJob, Long> committer, List<NewJob> jobs,
            List<DedupPolicy> policies) {
        if (jobs.stream().allMatch(job -> job.dedupKey() == null)) {
            if (jobs.size() == 1 && !TransactionSynchronizationManager.isActualTransactionActive()) {
                // A single job outside any transaction: share one INSERT with concurrent callers.
                return created(Collections.singletonList(committer.write(jobs.get(0))));
            }
            return created(store.insert(jobs));
        }
        // Resolving a duplicate takes several statements: keep them in one transaction.
        PartitionNotHeldException[] notHeld = {null};
        List<EnqueueResult> resolved = store.inTransaction(() -> {
            List<Long> ids;
            try {
                ids = store.insert(jobs);
            }
            catch (PartitionNotHeldException ex) {
                // Nothing was written: return normally, so the caller's transaction is not marked rollback-only.
                notHeld[0] = ex;
                return null;
            }
            EnqueueResult[] results = new EnqueueResult[jobs.size()];
            List<Integer> duplicates = new ArrayList<>();
            for (int i = 0; i < ids.size(); i++) {
                if (ids.get(i) != null) {
                    results[i] = new EnqueueResult(ids.get(i), EnqueueOutcome.CREATED);
                }
                else {
                    duplicates.add(i);
                }
            }
            // Lock existing holders in key order, as the insert did, so concurrent batches cannot deadlock.
            duplicates.sort(Comparator.comparing((Integer i) -> jobs.get(i).task()).thenComparing(i -> jobs.get(i).dedupKey()));
            for (int i : duplicates) {
                results[i] = this.duplicates.resolve(store, jobs.get(i), policies.get(i));
            }
            return List.of(results);
        });
        if (notHeld[0] != null) {
            throw notHeld[0];
        }
        return resolved;
    }

    /**
     * Stops the group-commit writers; enqueues after this are written one by one.
     */
    @Override
    public void close() {
        this.groupCommitter.close();
        this.shardCommitters.values().forEach(GroupCommitter::close);
        synchronized (this) {
            this.closed = true;
            if (this.relay != null) {
                this.relay.stop();
            }
        }
    }

    /**
     * Cancels a job: a READY job is cancelled at once; a claimed job gets a cancellation request
     * that its worker sees at the next heartbeat.
     * @param jobId the job id
     * @return what happened
     */
    public CancelResult cancel(long jobId) {
        for (JobStore candidate : storesOf(jobId)) {
            JobStore.Cancellation cancellation = candidate.cancel(jobId);
            if (cancellation.result() == CancelResult.CANCELLED) {
                this.events.cancelled(cancellation.task());
            }
            if (cancellation.result() != CancelResult.NOT_FOUND) {
                return cancellation.result();
            }
        }
        return CancelResult.NOT_FOUND;
    }

    /**
     * Checks a job as {@link #enqueue(JobRequest)} would, without writing it: its task is declared,
     * its options valid and its payload readable as its handler's payload type.
     * @param request the job
     * @throws InvalidJobException (or a subclass) if it could not be enqueued
     */
    public void check(JobRequest request) {
        prepare(this.tasks.require(request.task()), request, Map.of());
    }

    /**
     * Finds a job, active or finished (until retention deletes it).
     * @param jobId the job id
     * @return the job, or empty
     */
    public Optional<JobSnapshot> find(long jobId) {
        for (JobStore candidate : storesOf(jobId)) {
            Optional<JobSnapshot> found = candidate.find(jobId);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    /**
     * The job stores a job may be in: unsharded the one; sharded every shard's, the shard whose id
     * range the id is from first (where the job stays unless its partition moved).
     */
    private List<JobStore> storesOf(long jobId) {
        if (this.shards == null || !this.shards.sharded()) {
            return List.of(this.store);
        }
        List<JobStore> stores = new ArrayList<>();
        this.shards.homeOf(jobId).ifPresent(home -> stores.add(home.stores().jobs()));
        this.shards.all().stream().map(shard -> shard.stores().jobs()).filter(jobs -> !stores.contains(jobs))
            .forEach(stores::add);
        return stores;
    }

    private static List<EnqueueResult> created(List<Long> ids) {
        return ids.stream().map(id -> new EnqueueResult(id, EnqueueOutcome.CREATED)).toList();
    }

    /**
     * Counts the enqueues when they are durable: at once outside a transaction, after the commit
     * of the caller's transaction otherwise, and not at all if it rolls back.
     */
    private void countOnCommit(List<TaskDefinition> definitions, List<EnqueueResult> results) {
        afterCommit(() -> {
            for (int i = 0; i < results.size(); i++) {
                this.events.enqueued(definitions.get(i).name(), results.get(i).outcome());
            }
        });
    }

    private NewJob prepare(TaskDefinition task, JobRequest request, Map<String, String> propagated) {
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
        String payload = this.payloads.write(name, request.payload());
        requireReadable(task, request.payload(), payload);
        Map<String, String> allHeaders = options.headers();
        if (!propagated.isEmpty()) {
            // Explicit headers win over the propagated trace context.
            allHeaders = new LinkedHashMap<>(propagated);
            allHeaders.putAll(options.headers());
        }
        allHeaders = withGroup(task, request.payload(), allHeaders);
        String headers = allHeaders.isEmpty() ? "{}" : this.mapper.writeValueAsString(allHeaders);
        return new NewJob(name, payload, headers, priority, options.runAt(), delay, toleranceMillis, maxAttempts,
                dedupKey);
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
     * @return a job's group: the header given at enqueue, else the task's key function's, else for
     * a task with groups {@value QueueDefaults#DEFAULT_GROUP}; {@code null} for none
     */
    private static String group(TaskDefinition task, Object payload, Map<String, String> headers) {
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
}
