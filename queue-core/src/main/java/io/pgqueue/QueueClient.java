package io.pgqueue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

import javax.sql.DataSource;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.pgqueue.internal.balance.PartitionLoad;
import io.pgqueue.internal.enqueue.Duplicates;
import io.pgqueue.internal.enqueue.GraphWriter;
import io.pgqueue.internal.enqueue.JobPreparer;
import io.pgqueue.internal.enqueue.JobRouter;
import io.pgqueue.internal.enqueue.OutboxRelay;
import io.pgqueue.internal.enqueue.PayloadWriter;
import io.pgqueue.internal.shard.PartitionHash;
import io.pgqueue.internal.shard.Shards;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.NewJob;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.observe.QueueObservations;
import io.pgqueue.observe.QueueTelemetry;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
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

    private final TaskRegistry tasks;

    private final ObservationRegistry observations;

    private final QueueEvents events;

    private final JobPreparer preparer;

    private final JobRouter router;

    private final GraphWriter graphs;

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
        Objects.requireNonNull(config, "config");
        this.tasks = Objects.requireNonNull(tasks, "tasks");
        PayloadWriter payloads = new PayloadWriter(Objects.requireNonNull(mapper, "mapper"), config.maxPayloadBytes());
        this.preparer = new JobPreparer(payloads);
        this.router = new JobRouter(Objects.requireNonNull(store, "store"), shards, new Duplicates(tasks, payloads));
        this.graphs = new GraphWriter(this.router.sharded());
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
            JobPreparer.requireNoWorkflowHeaders(request);
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
        int partitions = this.router.partitionCount();
        int anyPartition = ThreadLocalRandom.current().nextInt(partitions);
        for (int i = 0; i < requests.size(); i++) {
            JobRequest request = requests.get(i);
            TaskDefinition task = definitions.get(i);
            NewJob job = this.preparer.prepare(task, request, propagated);
            // A task with groups keeps each group in one partition, so a group's turns, limit and
            // sequence are decided on one shard.
            String key = request.options().partitionKey() != null && task.groups() != null ? request.options().partitionKey()
                    : task.groups() != null ? JobPreparer.group(task, request.payload(), request.options().headers())
                    : job.dedupKey() != null ? job.dedupKey() : request.options().partitionKey();
            jobs.add(job.inPartition(key == null ? anyPartition : PartitionHash.partitionOf(key, partitions)));
            policies.add(request.options().dedupPolicy() != null ? request.options().dedupPolicy() : task.dedupPolicy());
        }
        if (requests.stream().anyMatch(request -> !request.options().dependsOn().isEmpty())) {
            return JobRouter.created(enqueueWithDependencies(requests, jobs));
        }
        return this.router.write(jobs, policies);
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
        steps.forEach(step -> JobPreparer.requireNoWorkflowHeaders(step.request()));
        String partitionKey = workflow.partitionKey();
        int partition = partitionKey != null ? PartitionHash.partitionOf(partitionKey, this.router.partitionCount())
                : this.router.workflowPartition();
        JobStore target = this.router.storeOf(partition, "workflow '" + workflow.name() + "'");
        long workflowId = target.workflows().nextIds(1).get(0);
        Map<String, Integer> index = new LinkedHashMap<>();
        List<GraphWriter.GraphJob> graph = new ArrayList<>(steps.size());
        for (int i = 0; i < steps.size(); i++) {
            Workflow.Step step = steps.get(i);
            index.put(step.name(), i);
            JobRequest request = step.request();
            EnqueueOptions options = request.options()
                .withHeader(QueueDefaults.WORKFLOW_HEADER, Long.toString(workflowId))
                .withHeader(QueueDefaults.STEP_HEADER, step.name());
            NewJob job = this.preparer.prepareDependent(definitions.get(i), JobRequest.of(request.task(), request.payload(), options),
                    propagated, "Step '" + step.name() + "' of workflow '" + workflow.name() + "'").inPartition(partition);
            graph.add(new GraphWriter.GraphJob(job, options.dependsOn(), step.after().stream().map(index::get).toList(),
                    options.onDependencyFailure() != null ? options.onDependencyFailure() : workflow.dependencyFailure()));
        }
        List<Long> ids = this.graphs.write(target, graph, new GraphWriter.WorkflowRow(workflowId, workflow.name(),
                workflow.dependencyFailure(), steps.stream().map(Workflow.Step::name).toList()), partition);
        this.router.countLoad(partition, ids.size());
        Map<String, Long> jobIds = new LinkedHashMap<>();
        for (int i = 0; i < steps.size(); i++) {
            jobIds.put(steps.get(i).name(), ids.get(i));
        }
        countOnCommit(definitions, JobRouter.created(ids));
        String name = workflow.name();
        afterCommit(() -> this.events.workflowStarted(name));
        return new EnqueuedWorkflow(workflowId, Collections.unmodifiableMap(jobIds));
    }

    /** Jobs of which some wait for jobs already in the queue, written in one transaction. */
    private List<Long> enqueueWithDependencies(List<JobRequest> requests, List<NewJob> jobs) {
        List<GraphWriter.GraphJob> graph = new ArrayList<>(jobs.size());
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
            else if (partition != job.partition() && this.router.sharded()) {
                throw new InvalidJobException("Jobs enqueued with dependencies in one call must share a partition key "
                        + "on a sharded installation");
            }
            graph.add(new GraphWriter.GraphJob(job.inPartition(partition), options.dependsOn(), List.of(),
                    options.onDependencyFailure() != null ? options.onDependencyFailure() : DependencyFailure.CANCEL));
        }
        return this.graphs.write(this.router.storeOf(partition, "jobs with dependencies"), graph, null, partition);
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

    /** @return the jobs this node enqueued per partition, which weigh the partitions (sharded only) */
    public Optional<PartitionLoad> partitionLoad() {
        return this.router.load();
    }

    /** @return the outbox relay, started on first use (sharded only) */
    OutboxRelay relay() {
        return this.router.relay();
    }

    /**
     * Stops the group-commit writers; enqueues after this are written one by one.
     */
    @Override
    public void close() {
        this.router.close();
    }

    /**
     * Cancels a job: a READY job is cancelled at once; a claimed job gets a cancellation request
     * that its worker sees at the next heartbeat.
     * @param jobId the job id
     * @return what happened
     */
    public CancelResult cancel(long jobId) {
        for (JobStore candidate : this.router.storesOf(jobId)) {
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
        this.preparer.prepare(this.tasks.require(request.task()), request, Map.of());
    }

    /**
     * Finds a job, active or finished (until retention deletes it).
     * @param jobId the job id
     * @return the job, or empty
     */
    public Optional<JobSnapshot> find(long jobId) {
        for (JobStore candidate : this.router.storesOf(jobId)) {
            Optional<JobSnapshot> found = candidate.find(jobId);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
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
}
