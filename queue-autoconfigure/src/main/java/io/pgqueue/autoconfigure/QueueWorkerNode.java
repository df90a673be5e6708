package io.pgqueue.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.pgqueue.PgQueue;
import io.pgqueue.worker.PoolState;
import io.pgqueue.worker.WorkerSettings;

/**
 * This node's workers as the endpoint, the console, health and metrics show them: its pools, their
 * tasks and its settings. The bean exists on nodes that run workers ({@code pgqueue.workers.enabled},
 * the default); {@link QueueLifecycle} starts and stops them with the rest of the queue.
 */
public class QueueWorkerNode {

    private final PgQueue queue;

    private final QueueTaskBindings tasks;

    /**
     * Creates the view of a node's workers.
     * @param queue the queue whose workers it shows
     * @param tasks the task bindings
     */
    public QueueWorkerNode(PgQueue queue, QueueTaskBindings tasks) {
        this.queue = queue;
        this.tasks = tasks;
    }

    /** @return whether the workers run */
    public boolean isRunning() {
        return this.queue.isWorking();
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
