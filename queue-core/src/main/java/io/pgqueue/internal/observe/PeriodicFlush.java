package io.pgqueue.internal.observe;

import java.time.Duration;
import java.util.List;

import io.pgqueue.internal.lifecycle.PeriodicTasks;

/**
 * Runs a recorder's write every {@link #INTERVAL} on a thread of its own while started, and once
 * more when stopped, so that nothing gathered before the stop is left unwritten.
 */
final class PeriodicFlush {

    /** How often the write runs. */
    static final Duration INTERVAL = Duration.ofSeconds(10);

    private final String threadName;

    private final String taskName;

    private final Runnable flush;

    private PeriodicTasks writer;

    PeriodicFlush(String threadName, String taskName, Runnable flush) {
        this.threadName = threadName;
        this.taskName = taskName;
        this.flush = flush;
    }

    /** Starts writing every {@link #INTERVAL}; idempotent. */
    synchronized void start() {
        if (this.writer != null) {
            return;
        }
        this.writer = new PeriodicTasks(this.threadName, Duration.ofSeconds(5),
                List.of(new PeriodicTasks.Task(this.taskName, INTERVAL, INTERVAL, this.flush)));
        this.writer.start();
    }

    /** Stops, writing what is left; idempotent. */
    void stop() {
        PeriodicTasks running;
        synchronized (this) {
            running = this.writer;
            this.writer = null;
        }
        if (running != null) {
            running.stop();
            this.flush.run();
        }
    }
}
