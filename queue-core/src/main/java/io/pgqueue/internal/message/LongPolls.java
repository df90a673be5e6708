package io.pgqueue.internal.message;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import java.util.function.Supplier;

import io.pgqueue.message.ReceivedMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Receives that wait for messages (long polling) without holding a thread or a connection: a
 * waiting receive is a future parked per queue, woken when a send to its queue is announced
 * (NOTIFY, delivered on commit), when the queue's next message becomes visible (a timer set to
 * that time) or at its deadline, when it completes with no messages.
 * <p>
 * A wake-up tries one waiter of the queue; a waiter that got messages wakes the next (more may
 * have come), one that got none goes back to the head of the line. A burst of sends thus costs a
 * few empty receives, not one per waiter.
 */
public final class LongPolls implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LongPolls.class);

    private final Map<Long, Deque<Waiter>> waiters = new ConcurrentHashMap<>();

    /** Per queue, the notifications seen, to catch one that came while a receive was on its way to wait. */
    private final Map<Long, AtomicLong> announced = new ConcurrentHashMap<>();

    private final ScheduledExecutorService timer;

    private final ExecutorService receivers;

    private final LongFunction<Optional<Instant>> nextVisible;

    private final class Waiter {

        final long queueId;

        final Supplier<List<ReceivedMessage>> attempt;

        final CompletableFuture<List<ReceivedMessage>> future = new CompletableFuture<>();

        final long deadline;

        volatile ScheduledFuture<?> timeout;

        Waiter(long queueId, Supplier<List<ReceivedMessage>> attempt, long deadline) {
            this.queueId = queueId;
            this.attempt = attempt;
            this.deadline = deadline;
        }
    }

    /**
     * @param receiverThreads the threads that run woken receives
     * @param nextVisible per queue id, when its next message becomes visible
     */
    public LongPolls(int receiverThreads, LongFunction<Optional<Instant>> nextVisible) {
        AtomicInteger threads = new AtomicInteger();
        this.timer = Executors.newSingleThreadScheduledExecutor(runnable -> daemon(runnable, "pgqueue-long-poll-timer"));
        this.receivers = Executors.newFixedThreadPool(receiverThreads,
                runnable -> daemon(runnable, "pgqueue-long-poll-" + threads.incrementAndGet()));
        this.nextVisible = nextVisible;
    }

    private static Thread daemon(Runnable runnable, String name) {
        Thread thread = new Thread(runnable, name);
        thread.setDaemon(true);
        return thread;
    }

    /** @return the notifications seen for a queue so far, to pass to {@link #await} */
    public long announcements(long queueId) {
        return counter(queueId).get();
    }

    private AtomicLong counter(long queueId) {
        return this.announced.computeIfAbsent(queueId, id -> new AtomicLong());
    }

    /**
     * Parks a receive that found no messages until messages come or the wait ends.
     * @param queueId the queue
     * @param attempt receives, returning the messages or none
     * @param wait how long to wait at most
     * @param seen {@link #announcements} taken before the receive that found none
     * @return the messages, or none at the deadline
     */
    public CompletableFuture<List<ReceivedMessage>> await(long queueId, Supplier<List<ReceivedMessage>> attempt,
            Duration wait, long seen) {
        Waiter waiter = new Waiter(queueId, attempt, System.nanoTime() + wait.toNanos());
        waiter.timeout = this.timer.schedule(() -> expire(waiter), wait.toNanos(), TimeUnit.NANOSECONDS);
        Deque<Waiter> line = this.waiters.computeIfAbsent(queueId, id -> new ArrayDeque<>());
        synchronized (line) {
            line.addLast(waiter);
        }
        if (announcements(queueId) != seen) {
            wake(queueId);
        }
        else {
            scheduleNextVisible(queueId, waiter.deadline);
        }
        return waiter.future;
    }

    /**
     * Messages were sent to a queue: tries its first waiter.
     * @param queueId the queue
     */
    public void announce(long queueId) {
        counter(queueId).incrementAndGet();
        wake(queueId);
    }

    /** Notifications may have been lost (the listener reconnected): tries one waiter of every queue. */
    public void announceAll() {
        this.waiters.keySet().forEach(this::announce);
    }

    private void wake(long queueId) {
        Deque<Waiter> line = this.waiters.get(queueId);
        if (line == null) {
            return;
        }
        Waiter waiter;
        synchronized (line) {
            waiter = line.pollFirst();
        }
        if (waiter == null) {
            return;
        }
        try {
            this.receivers.execute(() -> attempt(waiter, line));
        }
        catch (RuntimeException ex) {
            // Closing: the waiter ends empty.
            waiter.future.complete(List.of());
        }
    }

    private void attempt(Waiter waiter, Deque<Waiter> line) {
        if (waiter.future.isDone()) {
            wake(waiter.queueId);
            return;
        }
        long seen = announcements(waiter.queueId);
        List<ReceivedMessage> messages;
        try {
            messages = waiter.attempt.get();
        }
        catch (RuntimeException ex) {
            waiter.timeout.cancel(false);
            waiter.future.completeExceptionally(ex);
            return;
        }
        if (!messages.isEmpty()) {
            waiter.timeout.cancel(false);
            if (!waiter.future.complete(messages)) {
                log.warn("{} messages received for a receive that had ended; they become visible again after their "
                        + "visibility timeout", messages.size());
            }
            wake(waiter.queueId);
            return;
        }
        synchronized (line) {
            line.addFirst(waiter);
        }
        if (announcements(waiter.queueId) != seen) {
            wake(waiter.queueId);
        }
        else {
            scheduleNextVisible(waiter.queueId, waiter.deadline);
        }
    }

    /** Wakes the queue when its next message becomes visible, if that is before the deadline. */
    private void scheduleNextVisible(long queueId, long deadline) {
        Optional<Instant> next;
        try {
            next = this.nextVisible.apply(queueId);
        }
        catch (RuntimeException ex) {
            log.debug("Could not read when the next message of queue {} becomes visible: {}", queueId, ex.toString());
            return;
        }
        next.ifPresent(at -> {
            long delay = Math.max(0, Duration.between(Instant.now(), at).toNanos());
            if (System.nanoTime() + delay < deadline) {
                // A few milliseconds late: the database's clock decides visibility.
                this.timer.schedule(() -> wake(queueId), delay + TimeUnit.MILLISECONDS.toNanos(5), TimeUnit.NANOSECONDS);
            }
        });
    }

    private void expire(Waiter waiter) {
        Deque<Waiter> line = this.waiters.get(waiter.queueId);
        if (line != null) {
            synchronized (line) {
                line.remove(waiter);
            }
        }
        waiter.future.complete(List.of());
    }

    /** Ends every waiting receive with no messages and stops the threads. */
    @Override
    public void close() {
        this.timer.shutdownNow();
        this.receivers.shutdown();
        this.waiters.values().forEach(line -> {
            synchronized (line) {
                line.forEach(waiter -> waiter.future.complete(List.of()));
                line.clear();
            }
        });
    }
}
