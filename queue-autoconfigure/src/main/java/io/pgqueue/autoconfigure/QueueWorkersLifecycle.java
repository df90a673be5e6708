package io.pgqueue.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import io.pgqueue.PgQueue;
import io.pgqueue.QueueSchemaException;
import io.pgqueue.store.QueueSchema;
import io.pgqueue.worker.PoolState;
import io.pgqueue.worker.WorkerSettings;
import org.springframework.context.SmartLifecycle;

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

    private final PgQueue queue;

    private final QueueTaskBindings tasks;

    /** Released when the workers stop; a non-daemon thread waits on it, keeping the JVM alive. */
    private CountDownLatch keepAlive;

    /**
     * Creates the lifecycle.
     * @param queue the queue whose workers it starts and stops
     * @param tasks the task bindings
     */
    public QueueWorkersLifecycle(PgQueue queue, QueueTaskBindings tasks) {
        this.queue = queue;
        this.tasks = tasks;
    }

    /**
     * Starts the workers, and a non-daemon thread {@code pgqueue-keep-alive} that lives as long as
     * they run: the workers' own threads are daemons, and a node without a web server (a dedicated
     * worker deployment) must keep running until it is told to stop (SIGTERM, context close).
     */
    @Override
    public synchronized void start() {
        try {
            this.queue.startWorkers();
            if (this.keepAlive == null) {
                CountDownLatch latch = new CountDownLatch(1);
                Thread thread = new Thread(() -> awaitQuietly(latch), "pgqueue-keep-alive");
                thread.setDaemon(false);
                thread.start();
                this.keepAlive = latch;
            }
        }
        catch (QueueSchemaException ex) {
            throw new QueueConfigurationException(ex.getMessage(), "Let pgqueue migrate its schema at start-up "
                    + "(pgqueue.flyway.enabled=true, the default), or apply the migrations in "
                    + QueueSchema.MIGRATION_LOCATION + " to schema '" + this.queue.config().schema() + "' before "
                    + "starting the application.", ex);
        }
    }

    @Override
    public synchronized void stop() {
        try {
            this.queue.stopWorkers();
        }
        finally {
            if (this.keepAlive != null) {
                this.keepAlive.countDown();
                this.keepAlive = null;
            }
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public boolean isRunning() {
        return this.queue.isWorking();
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
        return this.queue.pools();
    }

    /**
     * Returns the pools this node runs and their tasks, known before the workers start.
     * @return task names by pool name
     */
    public Map<String, List<String>> poolTasks() {
        Map<String, List<String>> pools = new LinkedHashMap<>();
        this.tasks.all().values().stream()
            .filter(binding -> binding.task() != null)
            .forEach(binding -> pools.computeIfAbsent(binding.task().pool(), pool -> new ArrayList<>())
                .add(binding.definition().name()));
        return pools;
    }

    /** @return the worker settings */
    public WorkerSettings settings() {
        return this.queue.workerSettings().orElseThrow();
    }

    /** @return this node's id */
    public String nodeId() {
        return settings().nodeId();
    }
}
