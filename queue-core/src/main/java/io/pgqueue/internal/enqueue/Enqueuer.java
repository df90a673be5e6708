package io.pgqueue.internal.enqueue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.pgqueue.CancelResult;
import io.pgqueue.DedupPolicy;
import io.pgqueue.DependencyFailure;
import io.pgqueue.EnqueueOptions;
import io.pgqueue.EnqueueResult;
import io.pgqueue.EnqueuedWorkflow;
import io.pgqueue.InvalidJobException;
import io.pgqueue.InvalidSettingException;
import io.pgqueue.JobAttempt;
import io.pgqueue.JobInterceptor;
import io.pgqueue.JobRequest;
import io.pgqueue.JobSnapshot;
import io.pgqueue.JobStep;
import io.pgqueue.PayloadEncryption;
import io.pgqueue.QueueConfig;
import io.pgqueue.QueueDefaults;
import io.pgqueue.SignalResult;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.WorkflowInfo;
import io.pgqueue.internal.balance.PartitionLoad;
import io.pgqueue.internal.shard.PartitionHash;
import io.pgqueue.internal.shard.Shards;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.NewJob;
import io.pgqueue.internal.store.WorkflowStore;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.observe.QueueObservations;
import io.pgqueue.observe.QueueTelemetry;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.ObjectMapper;

/**
 * The enqueue pipeline behind the client and the scheduler: each request's task looked up, the job
 * prepared ({@link JobPreparer}), placed in a partition, and written where it belongs
 * ({@link JobRouter}); workflows and jobs with dependencies as one graph ({@link GraphWriter}). It
 * observes each call (tracing) and counts the enqueues once they are durable.
 */
public final class Enqueuer implements AutoCloseable {

    private final TaskRegistry tasks;

    /** Writes the header of a workflow step's predecessors. */
    /** A job's headers, as its JSON holds them. */
    private static final TypeReference<Map<String, String>> HEADERS = new TypeReference<>() {
    };

    private final ObjectMapper mapper;

    private final ObservationRegistry observations;

    private final QueueEvents events;

    private final PayloadWriter payloads;

    private final JobPreparer preparer;

    private final JobRouter router;

    private final GraphWriter graphs;

    private final List<JobInterceptor> interceptors;

    /**
     * @param shards the installation's shards (unsharded: the one database)
     * @param tasks the declared task types
     * @param mapper the JSON mapper for payloads
     * @param telemetry where to report enqueues (metrics) and their observations (tracing)
     * @param interceptors what sees each job before it is checked, in order
     * @param encryption encrypts the payloads of the tasks that ask for it
     * @throws IllegalArgumentException if a task's NOTIFY channel would be longer than PostgreSQL allows
     * @throws InvalidSettingException if a task encrypts its payloads and there is no key
     */
    public Enqueuer(Shards shards, TaskRegistry tasks, ObjectMapper mapper, QueueTelemetry telemetry,
            List<JobInterceptor> interceptors, PayloadEncryption encryption) {
        JobStore store = shards.main().stores().jobs();
        QueueConfig config = shards.main().stores().config();
        this.tasks = tasks;
        this.mapper = mapper;
        this.events = telemetry.events();
        this.observations = telemetry.observations();
        this.interceptors = List.copyOf(interceptors);
        this.payloads = new PayloadWriter(mapper, config.maxPayloadBytes(), encryption);
        this.preparer = new JobPreparer(this.payloads);
        this.router = new JobRouter(store, shards, new Duplicates(tasks, this.payloads, shards));
        this.graphs = new GraphWriter(this.router.sharded());
        for (TaskDefinition task : tasks.all()) {
            InvalidSettingException.require(!task.encrypted() || encryption.canEncrypt(), "tasks." + task.name()
                    + ".encrypted", true, "needs a key to encrypt with: set pgqueue.encryption.keys (and "
                    + "pgqueue.encryption.key when there are several)");
            String channel = store.channel(task.name());
            if (channel.getBytes(StandardCharsets.UTF_8).length > 63) {
                throw new IllegalArgumentException("Task '" + task.name() + "' in schema '" + config.schema()
                        + "' gives the NOTIFY channel '" + channel + "', longer than PostgreSQL's 63 bytes; "
                        + "shorten the task name or the schema");
            }
        }
    }

    /**
     * Enqueues jobs in one statement, in the caller's transaction if there is one; all or nothing.
     * @param requests the jobs
     * @return per job, in order, its id and what happened
     * @throws InvalidJobException if any job is invalid; nothing was written
     */
    public List<EnqueueResult> enqueueAll(List<JobRequest> asked) {
        if (asked.isEmpty()) {
            return List.of();
        }
        List<JobRequest> requests = new ArrayList<>(asked.size());
        for (JobRequest request : asked) {
            if (request == null) {
                throw new InvalidJobException("A job request of an enqueue must not be null");
            }
            requests.add(intercepted(request));
        }
        List<TaskDefinition> definitions = new ArrayList<>(requests.size());
        for (JobRequest request : requests) {
            definitions.add(this.tasks.require(request.task()));
            JobPreparer.requireNoWorkflowHeaders(request);
        }
        String task = definitions.stream().map(TaskDefinition::name).distinct().count() == 1 ? definitions.get(0).name()
                : "mixed";
        return observed(task, propagated -> {
            List<EnqueueResult> results = enqueue(requests, definitions, propagated);
            countOnCommit(definitions, results);
            return results;
        });
    }

    /** The job as the interceptors pass it on, each seeing what the one before returned. */
    private JobRequest intercepted(JobRequest request) {
        JobRequest passed = request;
        for (JobInterceptor interceptor : this.interceptors) {
            JobRequest next = interceptor.beforeEnqueue(passed);
            if (next == null) {
                throw new InvalidJobException("Interceptor " + interceptor + " returned no job for a '" + passed.task()
                        + "' job; it returns the job to enqueue (the one it was given, to change nothing)");
            }
            passed = next;
        }
        return passed;
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
     * Enqueues a workflow: its steps as one graph, in one transaction, on one partition.
     * @param workflow the workflow as built
     * @return the workflow's id and its steps' job ids
     * @throws InvalidJobException if a step is invalid; nothing was written
     */
    public EnqueuedWorkflow enqueueWorkflow(WorkflowRequest workflow) {
        return observed("workflow", propagated -> enqueueWorkflow(workflow, propagated));
    }

    private EnqueuedWorkflow enqueueWorkflow(WorkflowRequest workflow, Map<String, String> propagated) {
        List<WorkflowStep> steps = workflow.steps().stream()
            .map(step -> new WorkflowStep(step.name(), intercepted(step.request()), step.after()))
            .toList();
        List<TaskDefinition> definitions = steps.stream().map(step -> this.tasks.require(step.request().task())).toList();
        steps.forEach(step -> JobPreparer.requireNoWorkflowHeaders(step.request()));
        int partition = workflow.partitionKey() != null
                ? PartitionHash.partitionOf(workflow.partitionKey(), this.router.partitionCount())
                : this.router.workflowPartition();
        JobStore target = this.router.storeOf(partition, "workflow '" + workflow.name() + "'");
        long workflowId = target.workflows().nextIds(1).get(0);
        Map<String, Integer> index = new LinkedHashMap<>();
        List<GraphWriter.GraphJob> graph = new ArrayList<>(steps.size());
        for (int i = 0; i < steps.size(); i++) {
            WorkflowStep step = steps.get(i);
            index.put(step.name(), i);
            JobRequest request = step.request();
            EnqueueOptions options = request.options()
                .withHeader(QueueDefaults.WORKFLOW_HEADER, Long.toString(workflowId))
                .withHeader(QueueDefaults.STEP_HEADER, step.name());
            if (!step.after().isEmpty()) {
                options = options.withHeader(QueueDefaults.AFTER_HEADER, this.mapper.writeValueAsString(step.after()));
            }
            NewJob job = this.preparer.prepareDependent(definitions.get(i), JobRequest.of(request.task(), request.payload(), options),
                    propagated, "Step '" + step.name() + "' of workflow '" + workflow.name() + "'").inPartition(partition);
            graph.add(new GraphWriter.GraphJob(job, options.dependsOn(), step.after().stream().map(index::get).toList(),
                    options.onDependencyFailure() != null ? options.onDependencyFailure() : workflow.dependencyFailure()));
        }
        List<Long> ids = this.graphs.write(target, graph, new GraphWriter.WorkflowRow(workflowId, workflow.name(),
                workflow.dependencyFailure(), steps.stream().map(WorkflowStep::name).toList()), partition);
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

    /** Runs an enqueue inside its observation, handing it the headers that carry the trace on. */
    private <T> T observed(String task, Function<Map<String, String>, T> enqueue) {
        Observation observation = QueueObservations.enqueue(this.observations, task).start();
        try (Observation.Scope scope = observation.openScope()) {
            return enqueue.apply(QueueObservations.propagated(observation));
        }
        catch (RuntimeException ex) {
            observation.error(ex);
            throw ex;
        }
        finally {
            observation.stop();
        }
    }

    /**
     * Checks a job as {@link #enqueueAll(List)} would, without writing it.
     * @param request the job
     * @throws InvalidJobException (or a subclass) if it could not be enqueued
     */
    public void check(JobRequest request) {
        this.preparer.prepare(this.tasks.require(request.task()), request, Map.of());
    }

    /**
     * Cancels a job on whichever shard holds it.
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
     * Finds a job, active or finished, on whichever shard holds it.
     * @param jobId the job id
     * @return the job, or empty
     */
    public Optional<JobSnapshot> find(long jobId) {
        for (JobStore candidate : this.router.storesOf(jobId)) {
            Optional<JobSnapshot> found = candidate.find(jobId);
            if (found.isPresent()) {
                JobSnapshot job = found.get();
                return Optional.of(PayloadEncryption.isEncrypted(job.payload())
                        ? job.withPayload(this.payloads.open(job.task(), job.payload())) : job);
            }
        }
        return Optional.empty();
    }

    /**
     * Reads a job's attempt history on whichever shard holds the job.
     * @param jobId the job id
     * @return its attempts, oldest first, or empty when there is no such job
     */
    public Optional<List<JobAttempt>> attempts(long jobId) {
        for (JobStore candidate : this.router.storesOf(jobId)) {
            Optional<List<JobAttempt>> found = candidate.attempts(jobId);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    /**
     * Enqueues a durable handler's child job in its parent's partition, so on its parent's shard, in
     * the caller's transaction on that shard's database; marked tracked, so that its end runs end_jobs, which
     * signals it to the parent (R__workflows.sql).
     * @param spawnName the spawn's name, which names the child's step when its parent is a workflow's
     * @param request the child
     * @param parentId the job that spawns it, active on one of the shards
     * @param detached whether the child stays when its parent is cancelled (else end_jobs cancels it,
     * the parent being marked tracked too)
     * @return the child's job id
     * @throws InvalidJobException if the child is invalid (a dedup key, an unknown task, a bad payload)
     */
    public long enqueueChild(String spawnName, JobRequest request, long parentId, boolean detached) {
        if (request == null) {
            throw new InvalidJobException("A child job's request must not be null");
        }
        if (request.options().dedupKey() != null || !request.options().dependsOn().isEmpty()) {
            throw new InvalidJobException("A child '" + request.task() + "' job cannot have a dedup key or dependencies: "
                    + "its parent awaits it by its id");
        }
        JobPreparer.requireNoWorkflowHeaders(request);
        return observed(request.task(), propagated -> {
            JobSnapshot parent = parent(parentId);
            EnqueueOptions options = request.options().withHeader(QueueDefaults.PARENT_HEADER, Long.toString(parentId));
            if (detached) {
                options = options.withHeader(QueueDefaults.PARENT_DETACHED_HEADER, "true");
            }
            // A child of a workflow's step joins the workflow as a step of its own, "<parent's step>/<spawn>".
            Map<String, String> parentHeaders = headers(parent.headers());
            String workflow = parentHeaders.get(QueueDefaults.WORKFLOW_HEADER);
            String step = workflow == null ? null : parentHeaders.getOrDefault(QueueDefaults.STEP_HEADER, Long.toString(parentId))
                    + "/" + spawnName;
            if (workflow != null) {
                options = options.withHeader(QueueDefaults.WORKFLOW_HEADER, workflow).withHeader(QueueDefaults.STEP_HEADER, step);
            }
            JobRequest child = intercepted(JobRequest.of(request.task(), request.payload(), options));
            TaskDefinition task = this.tasks.require(child.task());
            int partition = parent.partition();
            NewJob job = this.preparer.prepare(task, child, propagated).inPartition(partition);
            // On the parent's shard, in the caller's transaction there (a child has no dedup key to resolve).
            JobStore target = this.router.storeHolding(partition);
            long id = target.insert(List.of(job)).get(0);
            if (workflow != null && !target.workflows().graft(Long.parseLong(workflow), step, id)) {
                throw new InvalidJobException("Workflow " + workflow + " of job " + parentId + " ended, or has a step '"
                        + step + "' already: the child is not added");
            }
            // Tracked, so that each one's end runs end_jobs: the child's is signalled to its parent, the
            // parent's cancels its attached children.
            target.workflows().track(detached ? List.of(id) : List.of(Math.min(id, parentId), Math.max(id, parentId)));
            this.router.countLoad(partition, 1);
            countOnCommit(List.of(task), JobRouter.created(List.of(id)));
            return id;
        });
    }

    private JobSnapshot parent(long parentId) {
        for (JobStore candidate : this.router.storesOf(parentId)) {
            Optional<JobSnapshot> parent = candidate.find(parentId);
            if (parent.isPresent()) {
                return parent.get();
            }
        }
        throw new InvalidJobException("Job " + parentId + " spawns a child but is not in the queue");
    }

    private Map<String, String> headers(String json) {
        return json == null || json.equals("{}") ? Map.of() : this.mapper.readValue(json, HEADERS);
    }

    /**
     * Sends a signal to a job, on whichever shard holds it.
     * @param jobId the job
     * @param name the signal
     * @param payload its payload, or {@code null}
     * @return what became of it
     */
    public SignalResult signal(long jobId, String name, Object payload) {
        if (name == null || name.isEmpty() || name.length() > QueueDefaults.MAX_SIGNAL_NAME_LENGTH) {
            throw new IllegalArgumentException("A signal needs a name of 1 to " + QueueDefaults.MAX_SIGNAL_NAME_LENGTH
                    + " characters, not " + (name == null ? "null" : "'" + name + "'"));
        }
        if (name.startsWith("child:")) {
            throw new IllegalArgumentException("Signal names starting with 'child:' are child jobs' ends, which the "
                    + "queue sends; give signal '" + name + "' another name");
        }
        String json = this.mapper.writeValueAsString(payload);
        WorkflowStore.requireStorable("The payload of signal '" + name + "' to job " + jobId, json);
        for (JobStore candidate : this.router.storesOf(jobId)) {
            SignalResult result = SignalResult.valueOf(candidate.steps().signal(jobId, name, json));
            if (result != SignalResult.NOT_FOUND) {
                return result;
            }
        }
        return SignalResult.NOT_FOUND;
    }

    /**
     * Reads a job's durable steps, on whichever shard holds it.
     * @param jobId the job id
     * @return the steps in their order, or empty when there is no such job
     */
    public Optional<List<JobStep>> steps(long jobId) {
        for (JobStore candidate : this.router.storesOf(jobId)) {
            Optional<List<JobStep>> found = candidate.jobSteps(jobId);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    /**
     * Finds a workflow (or batch) with its jobs, on whichever shard holds it.
     * @param workflowId the workflow id
     * @return the workflow, or empty
     */
    public Optional<WorkflowInfo> findWorkflow(long workflowId) {
        for (JobStore candidate : this.router.storesOf(workflowId)) {
            Optional<WorkflowInfo> found = candidate.workflows().find(workflowId);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    /**
     * @param jobId a job id
     * @return the job stores that may hold the job, the likeliest first
     */
    public List<JobStore> storesOf(long jobId) {
        return this.router.storesOf(jobId);
    }

    /** @return the jobs this node enqueued per partition, which weigh the partitions (sharded only) */
    public Optional<PartitionLoad> partitionLoad() {
        return this.router.load();
    }

    /** @return the outbox relay, started on first use (sharded only) */
    public OutboxRelay relay() {
        return this.router.relay();
    }

    /** Stops the group-commit writers and the relay; enqueues after this are written one by one. */
    @Override
    public void close() {
        this.router.close();
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

    /**
     * A workflow to enqueue.
     * @param name its name
     * @param partitionKey the key of the partition its steps go to, or {@code null} for any
     * @param dependencyFailure what a step does when a step it comes after fails, unless it says otherwise
     * @param steps its steps, in the order they were added
     */
    public record WorkflowRequest(String name, String partitionKey, DependencyFailure dependencyFailure,
            List<WorkflowStep> steps) {
    }

    /**
     * One step of a workflow.
     * @param name its name, unique in the workflow
     * @param request its job
     * @param after the names of the steps it comes after
     */
    public record WorkflowStep(String name, JobRequest request, List<String> after) {
    }
}
