package io.pgqueue.autoconfigure;

import java.util.concurrent.CountDownLatch;

import io.pgqueue.PgQueue;
import io.pgqueue.QueueSchemaException;
import io.pgqueue.store.QueueSchema;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the queue once the application context is ready (after the queue's schema migration) and
 * stops it gracefully before the DataSource closes: {@link PgQueue#start()} and {@link PgQueue#stop()},
 * which run the queue's services in their one order (statistics, message queues, balancer, then the
 * workers and the scheduler; stopped in reverse).
 */
public class QueueLifecycle implements SmartLifecycle {

    /**
     * The lifecycle phase: started late, after the rest of the application is ready; stopped
     * early, before the web server's graceful shutdown, while the DataSource is still open.
     */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 512;

    private final PgQueue queue;

    private boolean running;

    /** Released when the queue stops; a non-daemon thread waits on it, keeping the JVM alive. */
    private CountDownLatch keepAlive;

    /**
     * Creates the lifecycle.
     * @param queue the queue it starts and stops
     */
    public QueueLifecycle(PgQueue queue) {
        this.queue = queue;
    }

    /**
     * Starts the queue and, on a node that runs workers, a non-daemon thread
     * {@code pgqueue-keep-alive} that lives as long as it runs: the queue's own threads are daemons,
     * and a node without a web server (a dedicated worker deployment) must keep running until it is
     * told to stop (SIGTERM, context close).
     */
    @Override
    public synchronized void start() {
        try {
            this.queue.start();
        }
        catch (QueueSchemaException ex) {
            throw new QueueConfigurationException(ex.getMessage(), "Let pgqueue migrate its schema at start-up "
                    + "(pgqueue.flyway.enabled=true, the default), or apply the migrations in "
                    + QueueSchema.MIGRATION_LOCATION + " to schema '" + this.queue.config().schema() + "' before "
                    + "starting the application.", ex);
        }
        this.running = true;
        if (this.keepAlive == null && this.queue.workerSettings().isPresent()) {
            CountDownLatch latch = new CountDownLatch(1);
            Thread thread = new Thread(() -> awaitQuietly(latch), "pgqueue-keep-alive");
            thread.setDaemon(false);
            thread.start();
            this.keepAlive = latch;
        }
    }

    /** Stops the queue: the workers gracefully first, then the rest. */
    @Override
    public synchronized void stop() {
        try {
            this.queue.stop();
        }
        finally {
            this.running = false;
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
    public synchronized boolean isRunning() {
        return this.running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }
}
