package io.pgqueue.benchmark;

import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;

/**
 * Producer threads that make single enqueue calls on a fixed schedule: together {@code rate} calls
 * per second, spread evenly over the threads and over each interval, for a given time. A thread
 * that falls behind its schedule calls again at once (no calls are skipped), so the achieved rate
 * shows whether the target was sustained.
 */
final class PacedProducers {

    private PacedProducers() {
    }

    /**
     * What the producers did.
     * @param enqueued the calls that returned
     * @param seconds the wall time from the first call's schedule to the last call's return
     * @param callMillis the duration of every call, sorted
     */
    record Result(int enqueued, double seconds, double[] callMillis) {

        double perSecond() {
            return this.enqueued / this.seconds;
        }

        double callMillisAt(double quantile) {
            return this.callMillis.length == 0 ? 0 : StarterBenchmark.at(this.callMillis, quantile);
        }
    }

    /**
     * Runs the producers and waits for them.
     * @param producers the number of threads
     * @param rate the calls per second of all threads together
     * @param seconds how long the schedule runs
     * @param enqueue one enqueue call, given a sequence number from 1
     */
    static Result run(int producers, int rate, int seconds, IntConsumer enqueue) throws InterruptedException {
        AtomicInteger sequence = new AtomicInteger();
        AtomicReference<RuntimeException> failure = new AtomicReference<>();
        long[][] calls = new long[producers][];
        int[] made = new int[producers];
        CountDownLatch finished = new CountDownLatch(producers);
        long interval = TimeUnit.SECONDS.toNanos(1) * producers / rate;
        long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(10);
        long end = start + TimeUnit.SECONDS.toNanos(seconds);
        for (int p = 0; p < producers; p++) {
            int index = p;
            calls[p] = new long[(int) (TimeUnit.SECONDS.toNanos(seconds) / interval) + 1];
            Thread thread = new Thread(() -> {
                try {
                    long due = start + interval * index / producers;
                    while (due < end) {
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                            LockSupport.parkNanos(wait);
                        }
                        long before = System.nanoTime();
                        enqueue.accept(sequence.incrementAndGet());
                        calls[index][made[index]++] = System.nanoTime() - before;
                        due += interval;
                    }
                }
                catch (RuntimeException ex) {
                    failure.compareAndSet(null, ex);
                }
                finally {
                    finished.countDown();
                }
            }, "producer-" + p);
            thread.start();
        }
        finished.await();
        if (failure.get() != null) {
            throw failure.get();
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        int total = Arrays.stream(made).sum();
        double[] millis = new double[total];
        int at = 0;
        for (int p = 0; p < producers; p++) {
            for (int i = 0; i < made[p]; i++) {
                millis[at++] = calls[p][i] / 1e6;
            }
        }
        Arrays.sort(millis);
        return new Result(total, elapsed, millis);
    }
}
