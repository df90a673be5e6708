package io.pgqueue.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import io.pgqueue.JobState;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.store.FencedResult;
import io.pgqueue.store.JobStore;
import io.pgqueue.store.Lease;
import io.pgqueue.store.Outcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.NonTransientDataAccessException;
import org.springframework.dao.NonTransientDataAccessResourceException;

/**
 * Writes STARTING→RUNNING transitions and attempt outcomes in batches: one thread takes everything
 * that accumulated since its last write and writes it with one statement per kind. Under load the
 * batches grow by themselves; when idle a single outcome is written at once, while starts wait up
 * to 5 ms for their outcomes to join them (a job that finishes by then needs no start write).
 * Nothing is lost when the database is briefly unavailable: failed writes are retried, and if the
 * node dies first the leases expire and the jobs are rescued (at-least-once).
 */
final class Completer {

    private static final Logger log = LoggerFactory.getLogger(Completer.class);

    private static final Duration RETRY_DELAY = Duration.ofSeconds(1);

    /**
     * How long starts wait for an outcome before they are written on their own. A handler that
     * finishes within it needs no start write at all (a start written with its job's outcome is
     * left out); written at once, half the jobs of a no-op handler at 200 jobs/s had a start
     * write of their own (990 of 2,000), one more statement per job. RUNNING shows that much later
     * in the table; the lease, set by the claim, is not at stake.
     */
    static final long START_LINGER_NANOS = Duration.ofMillis(5).toNanos();

    private final JobStore store;

    private final Duration lease;

    private final int batchSize;

    private final Consumer<FencedResult> onStarted;

    private final BiConsumer<String, Duration> onRequeued;

    private final QueueEvents events;

    private final Consumer<List<Lease>> onWritten;

    private final ReentrantLock lock = new ReentrantLock();

    private final Condition pending = this.lock.newCondition();

    private final Condition drained = this.lock.newCondition();

    private List<Lease> starts = new ArrayList<>();

    /** When {@link #starts} last went from empty to not empty ({@link System#nanoTime()}). */
    private long startsSince;

    private List<Outcome> outcomes = new ArrayList<>();

    /** Task of each pending outcome's job, by job id. */
    private final Map<Long, String> tasks = new HashMap<>();

    private int writing;

    private volatile boolean running;

    private Thread thread;

    /**
     * Creates a completer.
     * @param onStarted receives the result of each STARTING→RUNNING batch (lost leases, cancel requests)
     * @param onRequeued receives the task and delay of each job that went back to READY (retry or
     * re-run), so a local pool can look for it without waiting for the poll
     */
    Completer(JobStore store, Duration lease, int batchSize, Consumer<FencedResult> onStarted,
            BiConsumer<String, Duration> onRequeued, Consumer<List<Lease>> onWritten, QueueEvents events) {
        this.events = events;
        this.onWritten = onWritten;
        this.store = store;
        this.lease = lease;
        this.batchSize = batchSize;
        this.onStarted = onStarted;
        this.onRequeued = onRequeued;
    }

    synchronized void start(String name) {
        if (this.thread != null) {
            return;
        }
        this.running = true;
        this.thread = new Thread(this::run, name);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    void started(Lease lease) {
        this.lock.lock();
        try {
            if (this.starts.isEmpty()) {
                // Only the first start wakes the writer, to set its deadline; the others join it.
                this.startsSince = System.nanoTime();
                this.pending.signal();
            }
            this.starts.add(lease);
        }
        finally {
            this.lock.unlock();
        }
    }

    void finished(Outcome outcome, String task) {
        this.lock.lock();
        try {
            this.outcomes.add(outcome);
            this.tasks.put(outcome.lease().jobId(), task);
            this.pending.signal();
        }
        finally {
            this.lock.unlock();
        }
    }

    /**
     * Waits until everything handed over so far is written, or the timeout passes.
     * @return whether everything was written
     */
    boolean awaitDrained(Duration timeout) throws InterruptedException {
        long nanos = timeout.toNanos();
        this.lock.lock();
        try {
            while (!this.starts.isEmpty() || !this.outcomes.isEmpty() || this.writing > 0) {
                if (nanos <= 0) {
                    return false;
                }
                nanos = this.drained.awaitNanos(nanos);
            }
            return true;
        }
        finally {
            this.lock.unlock();
        }
    }

    synchronized void stop() throws InterruptedException {
        if (this.thread == null) {
            return;
        }
        this.running = false;
        this.lock.lock();
        try {
            this.pending.signal();
        }
        finally {
            this.lock.unlock();
        }
        this.thread.join(RETRY_DELAY.toMillis() * 5);
        this.thread = null;
    }

    private void run() {
        while (true) {
            List<Lease> startBatch;
            List<Outcome> outcomeBatch;
            this.lock.lock();
            try {
                while (this.outcomes.isEmpty()) {
                    if (!this.starts.isEmpty()) {
                        long left = this.startsSince + START_LINGER_NANOS - System.nanoTime();
                        if (left <= 0 || !this.running) {
                            break;
                        }
                        this.pending.awaitNanos(left);
                    }
                    else if (!this.running) {
                        return;
                    }
                    else {
                        this.pending.await(100, TimeUnit.MILLISECONDS);
                    }
                }
                startBatch = take(this.starts);
                outcomeBatch = take(this.outcomes);
                this.starts = rest(this.starts, startBatch);
                this.outcomes = rest(this.outcomes, outcomeBatch);
                this.writing++;
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                return;
            }
            finally {
                this.lock.unlock();
            }
            int before = startBatch.size() + outcomeBatch.size();
            write(startBatch, outcomeBatch);
            int left = startBatch.size() + outcomeBatch.size();
            boolean written = left == 0;
            this.lock.lock();
            try {
                this.writing--;
                if (!written) {
                    // Put them back in front; the next round retries.
                    this.starts.addAll(0, startBatch);
                    this.outcomes.addAll(0, outcomeBatch);
                }
                this.drained.signalAll();
            }
            finally {
                this.lock.unlock();
            }
            if (!written && this.running) {
                if (left == before) {
                    // Nothing got through (the database is away?): wait before the next round.
                    sleep();
                }
            }
            else if (!written) {
                log.warn("Gave up writing {} outcomes at shutdown; their jobs return after their leases expire",
                        outcomeBatch.size());
                return;
            }
        }
    }

    /** Writes a batch; what was written is removed from the lists, what is left is to be retried. */
    private void write(List<Lease> startBatch, List<Outcome> outcomeBatch) {
        try {
            if (!startBatch.isEmpty()) {
                // A job that already finished needs no RUNNING state on its way out.
                Set<Lease> finished = new HashSet<>();
                outcomeBatch.forEach(outcome -> finished.add(outcome.lease()));
                List<Lease> toStart = startBatch.stream().filter(lease -> !finished.contains(lease)).toList();
                this.onStarted.accept(this.store.markRunning(toStart, this.lease));
                // Written: a retry of the outcomes below must not write these again.
                startBatch.clear();
            }
        }
        catch (RuntimeException ex) {
            log.warn("Could not write {} job starts and {} outcomes; retrying: {}", startBatch.size(),
                    outcomeBatch.size(), ex.toString());
            return;
        }
        List<Outcome> unwritten = new ArrayList<>();
        record(outcomeBatch, unwritten);
        outcomeBatch.clear();
        outcomeBatch.addAll(unwritten);
    }

    /**
     * Records outcomes in one statement. If the statement fails because of the data (a trigger or
     * constraint that rejects one row, say) rather than the connection, the batch is split in
     * halves until the rows that fail are alone: one bad outcome must not hold back the others,
     * whose leases would lapse and whose jobs would run again.
     */
    private void record(List<Outcome> outcomes, List<Outcome> unwritten) {
        if (outcomes.isEmpty()) {
            return;
        }
        try {
            FencedResult result = this.store.record(outcomes);
            this.onWritten.accept(outcomes.stream().map(Outcome::lease).toList());
            requeued(outcomes, result);
            if (!result.lost().isEmpty()) {
                log.info("Outcomes of {} jobs were not recorded: their leases had expired and the jobs were "
                        + "taken back ({})", result.lost().size(), result.lost());
            }
        }
        catch (RuntimeException ex) {
            if (outcomes.size() > 1 && rejectedByData(ex)) {
                int half = outcomes.size() / 2;
                record(outcomes.subList(0, half), unwritten);
                record(outcomes.subList(half, outcomes.size()), unwritten);
                return;
            }
            log.warn("Could not write {} outcomes ({}); retrying: {}", outcomes.size(),
                    outcomes.size() == 1 ? outcomes.get(0).lease() : "a batch", ex.toString());
            unwritten.addAll(outcomes);
        }
    }

    /** Whether the database rejected the statement for its data, not for want of a connection. */
    private static boolean rejectedByData(RuntimeException ex) {
        return ex instanceof NonTransientDataAccessException && !(ex instanceof NonTransientDataAccessResourceException);
    }

    private void requeued(List<Outcome> written, FencedResult result) {
        Map<Long, String> tasksOfBatch = new HashMap<>();
        this.lock.lock();
        try {
            written.forEach(outcome -> tasksOfBatch.put(outcome.lease().jobId(), this.tasks.remove(outcome.lease().jobId())));
        }
        finally {
            this.lock.unlock();
        }
        result.applied().forEach((id, state) -> this.events.recorded(result.tasks().get(id), state));
        for (Lease lost : result.lost()) {
            String task = tasksOfBatch.get(lost.jobId());
            if (task != null) {
                this.events.leaseLost(task);
            }
        }
        for (Outcome outcome : written) {
            if (result.applied().get(outcome.lease().jobId()) == JobState.READY) {
                String task = tasksOfBatch.get(outcome.lease().jobId());
                if (task != null) {
                    this.onRequeued.accept(task, outcome.kind() == Outcome.Kind.RETRY ? outcome.retryDelay() : Duration.ZERO);
                }
            }
        }
    }

    private <T> List<T> take(List<T> items) {
        return items.size() <= this.batchSize ? items : new ArrayList<>(items.subList(0, this.batchSize));
    }

    private static <T> List<T> rest(List<T> items, List<T> taken) {
        return taken == items ? new ArrayList<>() : new ArrayList<>(items.subList(taken.size(), items.size()));
    }

    private static void sleep() {
        try {
            Thread.sleep(RETRY_DELAY.toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
