package io.pgqueue.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import io.pgqueue.QueueSchemaException;
import io.pgqueue.TaskHandler;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.store.QueueSchema;
import io.pgqueue.worker.PoolState;
import io.pgqueue.worker.QueueWorkers;
import io.pgqueue.worker.WorkerExecutors;
import io.pgqueue.worker.WorkerSettings;
import io.pgqueue.worker.WorkerTask;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.SmartLifecycle;
import tools.jackson.databind.ObjectMapper;

/**
 * Starts the node's worker runtime once the application context is ready (after the queue's
 * schema migration) and stops it gracefully before the DataSource closes.
 */
public class QueueWorkersLifecycle implements SmartLifecycle {

    /**
     * The lifecycle phase: started late, after the rest of the application is ready; stopped
     * early, before the web server's graceful shutdown, while the DataSource is still open.
     */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 512;

    private final BeanFactory beans;

    private final QueueTaskBindings tasks;

    private final DataSource dataSource;

    private final QueueConfig config;

    private final WorkerSettings settings;

    private final ObjectMapper mapper;

    private final WorkerExecutors executors;

    private final QueueTelemetry telemetry;

    private volatile QueueWorkers workers;

    /**
     * Creates the lifecycle.
     * @param beans the bean factory holding the handler beans
     * @param tasks the task bindings
     * @param dataSource the queue's database
     * @param config the queue's settings
     * @param settings the worker settings
     * @param mapper the JSON mapper for payloads
     * @param executors creates the executors of the pools
     * @param telemetry where the workers report events and observations
     */
    public QueueWorkersLifecycle(BeanFactory beans, QueueTaskBindings tasks, DataSource dataSource, QueueConfig config,
            WorkerSettings settings, ObjectMapper mapper, WorkerExecutors executors, QueueTelemetry telemetry) {
        this.telemetry = telemetry;
        this.beans = beans;
        this.tasks = tasks;
        this.dataSource = dataSource;
        this.config = config;
        this.settings = settings;
        this.mapper = mapper;
        this.executors = executors;
    }

    @Override
    @SuppressWarnings("unchecked")
    public synchronized void start() {
        if (this.workers != null && this.workers.isRunning()) {
            return;
        }
        List<WorkerTask> workerTasks = new ArrayList<>();
        for (QueueTaskBindings.Binding binding : this.tasks.all().values()) {
            if (binding.beanName() != null) {
                TaskHandler<Object> handler = this.beans.getBean(binding.beanName(), TaskHandler.class);
                workerTasks.add(new WorkerTask(binding.definition(), handler, binding.payloadType(),
                        binding.concurrency(), binding.timeout(), binding.pool()));
            }
        }
        this.workers = new QueueWorkers(this.dataSource, this.config, this.settings, workerTasks, this.mapper,
                this.executors, this.telemetry);
        try {
            this.workers.start();
        }
        catch (QueueSchemaException ex) {
            throw new QueueConfigurationException(ex.getMessage(), "Let pgqueue migrate its schema at start-up "
                    + "(pgqueue.flyway.enabled=true, the default), or apply the migrations in "
                    + QueueSchema.MIGRATION_LOCATION + " to schema '" + this.config.schema() + "' before starting "
                    + "the application.", ex);
        }
    }

    @Override
    public synchronized void stop() {
        if (this.workers != null) {
            this.workers.stop();
        }
    }

    @Override
    public synchronized boolean isRunning() {
        return this.workers != null && this.workers.isRunning();
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    /**
     * Returns the state of this node's pools.
     * @return the pools, empty before the workers start
     */
    public List<PoolState> pools() {
        QueueWorkers current = this.workers;
        return current == null ? List.of() : current.pools();
    }

    /**
     * Returns the pools this node runs and their tasks, known before the workers start.
     * @return task names by pool name
     */
    public java.util.Map<String, List<String>> poolTasks() {
        java.util.Map<String, List<String>> pools = new java.util.LinkedHashMap<>();
        this.tasks.all().values().stream()
            .filter(binding -> binding.beanName() != null)
            .forEach(binding -> pools.computeIfAbsent(binding.pool(), pool -> new ArrayList<>())
                .add(binding.definition().name()));
        return pools;
    }

    /** @return the worker settings */
    public WorkerSettings settings() {
        return this.settings;
    }

    /** @return this node's id */
    public String nodeId() {
        return this.settings.nodeId();
    }
}
