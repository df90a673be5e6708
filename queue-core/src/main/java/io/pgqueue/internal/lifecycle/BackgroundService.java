package io.pgqueue.internal.lifecycle;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one start/stop contract of pgqueue's background services (producers, completer, lease
 * keeper, notification listener, maintenance, statistics poller, group committer, outbox relay,
 * scheduler, and the {@link PeriodicTasks} of the partition map, the balancer and the message
 * housekeeping): each runs its loop on its own named daemon threads.
 * <ul>
 * <li>{@link #start()} is idempotent: a running service is left alone;</li>
 * <li>{@link #stop()} before {@link #start()} does nothing, and so does a second stop;</li>
 * <li>{@link #stop()} waits until the service's threads have ended (up to the service's stop
 * timeout) and its {@link #stopped()} work is done; concurrent stops wait for each other;</li>
 * <li>a stopped service may be started again.</li>
 * </ul>
 * Subclasses implement {@link #run()} as a loop that ends once {@link #isRunning()} turns false,
 * waiting with {@link #pause(Duration)} (which a stop cuts short) or on their own condition, which
 * {@link #wakeUp()} signals.
 */
public abstract class BackgroundService {

    private static final Logger log = LoggerFactory.getLogger(BackgroundService.class);

    private final List<String> threadNames;

    private final Duration stopTimeout;

    private final Object pauses = new Object();

    private volatile boolean running;

    private List<Thread> threads = List.of();

    /**
     * Creates a service with one thread.
     * @param threadName the thread's name
     * @param stopTimeout how long {@link #stop()} waits for the thread to end
     */
    protected BackgroundService(String threadName, Duration stopTimeout) {
        this(List.of(threadName), stopTimeout);
    }

    /**
     * Creates a service with one thread per name.
     * @param threadNames the threads' names
     * @param stopTimeout how long {@link #stop()} waits for all threads to end
     */
    protected BackgroundService(List<String> threadNames, Duration stopTimeout) {
        this.threadNames = List.copyOf(threadNames);
        this.stopTimeout = stopTimeout;
    }

    /** Starts the service's threads; does nothing if it runs. */
    public final synchronized void start() {
        if (this.running) {
            return;
        }
        this.running = true;
        starting();
        List<Thread> started = new ArrayList<>();
        for (String name : this.threadNames) {
            Thread thread = new Thread(this::loop, name);
            thread.setDaemon(true);
            thread.start();
            started.add(thread);
        }
        this.threads = started;
    }

    /** Stops the service and waits for its threads; does nothing if it does not run. */
    public final synchronized void stop() {
        if (!this.running) {
            return;
        }
        this.running = false;
        wakeUp();
        synchronized (this.pauses) {
            this.pauses.notifyAll();
        }
        long deadline = System.nanoTime() + this.stopTimeout.toNanos();
        try {
            for (Thread thread : this.threads) {
                long left = deadline - System.nanoTime();
                thread.join(Math.max(1, left / 1_000_000));
                if (thread.isAlive()) {
                    log.warn("Thread {} did not stop within {} ms", thread.getName(), this.stopTimeout.toMillis());
                }
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        this.threads = List.of();
        stopped();
    }

    /** @return the names of the service's threads, for diagnostics */
    public final List<String> threadNames() {
        return this.threadNames;
    }

    /** @return whether the service runs: started and not stopped */
    public final boolean isRunning() {
        return this.running;
    }

    /** The service's loop, run on each of its threads; returns once {@link #isRunning()} is false. */
    protected abstract void run();

    /** Work done by {@link #start()} before the threads start; nothing by default. */
    protected void starting() {
    }

    /** Makes a {@link #run()} that waits on a condition of its own notice the stop; nothing by default. */
    protected void wakeUp() {
    }

    /** Work done by {@link #stop()} after the threads ended; nothing by default. */
    protected void stopped() {
    }

    /**
     * The longest pause between two tries of failing database work: a service resumes within it of
     * the server coming back, however long the server was away.
     */
    protected static final Duration MAX_RETRY_PAUSE = Duration.ofSeconds(1);

    /**
     * The pause before the next try of failing work: 250 ms, doubling up to {@link #MAX_RETRY_PAUSE}.
     * @param previous the previous pause in milliseconds, {@code 0} after a success
     * @return the next pause in milliseconds
     */
    protected static long retryPause(long previous) {
        return Math.min(Math.max(previous * 2, 250), MAX_RETRY_PAUSE.toMillis());
    }

    /**
     * Waits for the given time or until the service stops, whichever comes first.
     * @param time how long to wait
     * @return whether the service still runs
     */
    protected final boolean pause(Duration time) {
        long deadline = System.nanoTime() + time.toNanos();
        synchronized (this.pauses) {
            long left;
            while (this.running && (left = deadline - System.nanoTime()) > 0) {
                try {
                    this.pauses.wait(Math.max(1, left / 1_000_000));
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
        return this.running;
    }

    private void loop() {
        try {
            run();
        }
        catch (RuntimeException | Error ex) {
            log.error("{} ended unexpectedly", Thread.currentThread().getName(), ex);
        }
    }
}
