package io.pgqueue.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;

import io.micrometer.observation.ObservationRegistry;
import io.pgqueue.AttemptResult;
import io.pgqueue.PgQueue;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueConfig;
import io.pgqueue.TaskRegistry;
import io.pgqueue.internal.store.QueueStores;
import io.pgqueue.internal.worker.QueueWorkers;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.worker.WorkerExecutors;
import io.pgqueue.worker.WorkerSettings;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Worker nodes and clients for one test, on a {@link TestQueue}, on platform threads. As a JUnit
 * extension ({@code @RegisterExtension final TestWorkers workers = TestWorkers.on(queue);}) it
 * stops every node it started and closes every client it handed out after each test, so no test
 * leaves threads or connections behind for the next.
 */
public final class TestWorkers implements AfterEachCallback {

    /** How often test nodes poll: fast enough that a test never waits on a poll for long. */
    public static final Duration POLL_INTERVAL = Duration.ofMillis(200);

    private final TestQueue queue;

    private final List<QueueWorkers> started = new ArrayList<>();

    private final List<QueueClient> clients = new ArrayList<>();

    private TestWorkers(TestQueue queue) {
        this.queue = queue;
    }

    /**
     * Returns an extension for nodes on the given queue.
     * @param queue the queue, registered as an extension of the same class
     * @return the extension; register it as an instance field
     */
    public static TestWorkers on(TestQueue queue) {
        return new TestWorkers(queue);
    }

    /**
     * Starts worker settings for tests: the defaults, but polling every {@link #POLL_INTERVAL}.
     * @param nodeId the node's id
     * @return a builder
     */
    public static WorkerSettings.Builder settings(String nodeId) {
        return WorkerSettings.builder(nodeId).pollInterval(POLL_INTERVAL);
    }

    /**
     * Creates a client that may enqueue jobs of the given tasks; it is closed after the test.
     * @param tasks the tasks
     * @return the client
     */
    public QueueClient client(WorkerTask... tasks) {
        return client(QueueTelemetry.NONE, tasks);
    }

    /**
     * Creates a client that may enqueue jobs of the given tasks; it is closed after the test.
     * @param telemetry where the client reports its enqueues
     * @param tasks the tasks
     * @return the client
     */
    public synchronized QueueClient client(QueueTelemetry telemetry, WorkerTask... tasks) {
        TaskRegistry definitions = TaskRegistry.of(Arrays.stream(tasks).map(WorkerTask::definition).toList());
        QueueClient client = PgQueue.builder(this.queue.dataSource()).config(this.queue.config()).tasks(definitions)
            .mapper(TestQueue.MAPPER).telemetry(telemetry).build().client();
        this.clients.add(client);
        return client;
    }

    /**
     * Starts a node that runs the given tasks; it is stopped after the test.
     * @param settings the node's settings
     * @param tasks the tasks
     * @return the running node
     */
    public QueueWorkers start(WorkerSettings settings, WorkerTask... tasks) {
        return start(this.queue.stores(), settings, QueueTelemetry.NONE, tasks);
    }

    /**
     * Starts a node that reports to the given telemetry; it is stopped after the test.
     * @param settings the node's settings
     * @param telemetry where the node reports events and execution observations
     * @param tasks the tasks
     * @return the running node
     */
    public QueueWorkers start(WorkerSettings settings, QueueTelemetry telemetry, WorkerTask... tasks) {
        return start(this.queue.stores(), settings, telemetry, tasks);
    }

    /**
     * Returns telemetry that adds each attempt's outcome to a queue, in the order the attempts end.
     * @param outcomes where the outcomes go
     * @return the telemetry
     */
    public static QueueTelemetry recordingOutcomes(Queue<AttemptResult> outcomes) {
        return new QueueTelemetry(new QueueEvents() {
            @Override
            public void executed(String task, AttemptResult outcome, Duration duration) {
                outcomes.add(outcome);
            }
        }, ObservationRegistry.NOOP);
    }

    /**
     * Starts a node with other queue settings (the same schema, say another retention); it is
     * stopped after the test.
     * @param config the queue settings the node uses
     * @param settings the node's settings
     * @param tasks the tasks
     * @return the running node
     */
    public QueueWorkers start(QueueConfig config, WorkerSettings settings, WorkerTask... tasks) {
        return start(QueueStores.create(this.queue.dataSource(), config), settings, QueueTelemetry.NONE, tasks);
    }

    private synchronized QueueWorkers start(QueueStores stores, WorkerSettings settings, QueueTelemetry telemetry,
            WorkerTask... tasks) {
        QueueWorkers workers = new QueueWorkers(stores, settings, List.of(tasks), TestQueue.MAPPER,
                WorkerExecutors.platformThreads(), telemetry);
        this.started.add(workers);
        workers.start();
        return workers;
    }

    /** Stops the nodes, newest first, then closes the clients. */
    @Override
    public synchronized void afterEach(ExtensionContext context) {
        for (int i = this.started.size() - 1; i >= 0; i--) {
            this.started.get(i).stop();
        }
        this.started.clear();
        this.clients.forEach(QueueClient::close);
        this.clients.clear();
    }
}
