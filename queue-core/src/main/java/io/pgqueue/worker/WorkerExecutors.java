package io.pgqueue.worker;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Creates the executor that runs a pool's handlers. The pool never runs more handlers at once than
 * {@code maxThreads}: one per handler slot (the sum of its tasks' concurrency) plus as many again
 * for hung handlers, which ignored their timeout's interrupt and gave up their slot to another job
 * (a task has at most its concurrency of them). So an executor with {@code maxThreads} threads never
 * makes a job wait behind another. The Spring Boot starter supplies virtual threads when
 * {@code spring.threads.virtual.enabled=true} on Java 21+.
 */
@FunctionalInterface
public interface WorkerExecutors {

    /**
     * Creates an executor. If it is an {@link java.util.concurrent.ExecutorService} or
     * {@link AutoCloseable}, it is shut down when the workers stop.
     * @param pool the pool name
     * @param maxThreads the most handlers that run at once in the pool: twice the sum of its tasks'
     * concurrency, which includes room for hung handlers outside the slots
     * @return the executor
     */
    Executor create(String pool, int maxThreads);

    /**
     * Platform threads named {@code pgqueue-<pool>-<n>}, at most {@code maxThreads}, idle ones
     * ending after a minute.
     * @return the factory
     */
    static WorkerExecutors platformThreads() {
        return (pool, maxThreads) -> {
            AtomicInteger count = new AtomicInteger();
            ThreadFactory threads = task -> {
                Thread thread = new Thread(task, "pgqueue-" + pool + "-" + count.incrementAndGet());
                thread.setDaemon(true);
                return thread;
            };
            ThreadPoolExecutor executor = new ThreadPoolExecutor(maxThreads, maxThreads, 60, TimeUnit.SECONDS,
                    new LinkedBlockingQueue<>(), threads);
            executor.allowCoreThreadTimeOut(true);
            return executor;
        };
    }
}
