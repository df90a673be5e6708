package io.pgqueue.internal.lifecycle;

import java.time.Duration;
import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A background service whose one thread runs periodic tasks, each at its own interval and one after
 * the other: the shape of the queue's housekeeping (the partition map's refresh, finishing stranded
 * moves, the balancer's rounds, the message sweeper). A task that throws is logged and runs again at
 * its next time; {@link #runSoon(String)} brings a task forward. {@link #stop()} interrupts a task
 * that is running, as a task may wait out a long drain, and waits for the thread as every service
 * does.
 */
public final class PeriodicTasks extends BackgroundService {

    private static final Logger log = LoggerFactory.getLogger(PeriodicTasks.class);

    /**
     * One periodic task.
     * @param name its name, for logs and {@link #runSoon(String)}
     * @param firstAfter how long after the start it first runs
     * @param interval how long after one run ends the next begins
     * @param work what it does
     */
    public record Task(String name, Duration firstAfter, Duration interval, Runnable work) {
    }

    private final List<Task> tasks;

    /** When each task is due next ({@link System#nanoTime()}); guarded by {@link #signal}. */
    private final long[] due;

    private final Object signal = new Object();

    /** The thread while it runs a task, for the stop's interrupt. */
    private volatile Thread working;

    /**
     * @param threadName the thread's name
     * @param stopTimeout how long {@link #stop()} waits for the thread to end
     * @param tasks the tasks, at least one
     */
    public PeriodicTasks(String threadName, Duration stopTimeout, List<Task> tasks) {
        super(threadName, stopTimeout);
        if (tasks.isEmpty()) {
            throw new IllegalArgumentException("No periodic task for " + threadName);
        }
        this.tasks = List.copyOf(tasks);
        this.due = new long[tasks.size()];
    }

    @Override
    protected void starting() {
        long now = System.nanoTime();
        synchronized (this.signal) {
            for (int i = 0; i < this.due.length; i++) {
                this.due[i] = now + this.tasks.get(i).firstAfter().toNanos();
            }
        }
    }

    @Override
    protected void run() {
        while (isRunning()) {
            int next = 0;
            synchronized (this.signal) {
                for (int i = 1; i < this.due.length; i++) {
                    next = this.due[i] < this.due[next] ? i : next;
                }
                long now = System.nanoTime();
                long wait = this.due[next] - now;
                if (wait > 0) {
                    try {
                        this.signal.wait(Math.max(1, wait / 1_000_000));
                    }
                    catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    continue;
                }
                this.due[next] = Long.MAX_VALUE;
            }
            Task task = this.tasks.get(next);
            this.working = Thread.currentThread();
            try {
                if (isRunning()) {
                    task.work().run();
                }
            }
            catch (RuntimeException ex) {
                log.warn("pgqueue {} failed, trying again in {} ms: {}", task.name(), task.interval().toMillis(),
                        ex.toString());
            }
            finally {
                this.working = null;
                // An interrupt meant for the task must not cut the next wait short.
                Thread.interrupted();
            }
            synchronized (this.signal) {
                // Unless a runSoon asked for it again meanwhile.
                if (this.due[next] == Long.MAX_VALUE) {
                    this.due[next] = System.nanoTime() + task.interval().toNanos();
                }
            }
        }
    }

    @Override
    protected void wakeUp() {
        synchronized (this.signal) {
            this.signal.notifyAll();
        }
        Thread thread = this.working;
        if (thread != null) {
            thread.interrupt();
        }
    }

    /**
     * Runs a task on the service's thread as soon as the task running now (if any) has ended.
     * @param name the task's name
     * @return whether it will run: {@code false} when the service does not run
     */
    public boolean runSoon(String name) {
        int index = -1;
        for (int i = 0; i < this.tasks.size(); i++) {
            index = this.tasks.get(i).name().equals(name) ? i : index;
        }
        if (index < 0) {
            throw new IllegalArgumentException("No periodic task '" + name + "'");
        }
        synchronized (this.signal) {
            if (!isRunning()) {
                return false;
            }
            this.due[index] = System.nanoTime();
            this.signal.notifyAll();
        }
        return true;
    }
}
