package io.pgqueue.internal.lifecycle;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

class PeriodicTasksTests {

    @Test
    void eachTaskRunsAtItsOwnIntervalAndOneThatThrowsRunsAgain() {
        AtomicInteger often = new AtomicInteger();
        AtomicInteger failing = new AtomicInteger();
        AtomicInteger seldom = new AtomicInteger();
        PeriodicTasks tasks = new PeriodicTasks("pgqueue-periodic-test", Duration.ofSeconds(5), List.of(
                new PeriodicTasks.Task("often", Duration.ZERO, Duration.ofMillis(10), often::incrementAndGet),
                new PeriodicTasks.Task("failing", Duration.ZERO, Duration.ofMillis(10), () -> {
                    failing.incrementAndGet();
                    throw new IllegalStateException("database down");
                }),
                new PeriodicTasks.Task("seldom", Duration.ofHours(1), Duration.ofHours(1), seldom::incrementAndGet)));
        tasks.start();
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> often.get() >= 5 && failing.get() >= 5);
            assertThat(seldom).hasValue(0);
        }
        finally {
            tasks.stop();
        }
        int afterStop = often.get();
        assertThat(tasks.isRunning()).isFalse();
        assertThat(often.get()).isEqualTo(afterStop);
    }

    @Test
    void runSoonRunsATaskBeforeItsTimeAndNothingOnceStopped() throws Exception {
        CountDownLatch ran = new CountDownLatch(1);
        PeriodicTasks tasks = new PeriodicTasks("pgqueue-periodic-test", Duration.ofSeconds(5),
                List.of(new PeriodicTasks.Task("refresh", Duration.ofHours(1), Duration.ofHours(1), ran::countDown)));

        assertThat(tasks.runSoon("refresh")).as("before the start").isFalse();
        tasks.start();
        assertThat(tasks.runSoon("refresh")).isTrue();
        assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
        tasks.stop();

        assertThat(tasks.runSoon("refresh")).as("after the stop").isFalse();
    }

    @Test
    void stopInterruptsARunningTaskAndWaitsForIt() {
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        PeriodicTasks tasks = new PeriodicTasks("pgqueue-periodic-test", Duration.ofSeconds(10),
                List.of(new PeriodicTasks.Task("drain", Duration.ZERO, Duration.ofHours(1), () -> {
                    started.countDown();
                    try {
                        Thread.sleep(60_000);
                    }
                    catch (InterruptedException ex) {
                        interrupted.set(true);
                    }
                })));
        tasks.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> started.getCount() == 0);

        long before = System.nanoTime();
        tasks.stop();

        assertThat(interrupted).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - before)).isLessThan(Duration.ofSeconds(5));
        assertThat(Thread.getAllStackTraces().keySet()).noneMatch(thread -> thread.getName().equals("pgqueue-periodic-test")
                && thread.isAlive());
    }
}
