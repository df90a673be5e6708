package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

import io.pgqueue.AttemptResult;
import io.pgqueue.JobState;
import io.pgqueue.internal.lifecycle.BackgroundService;
import io.pgqueue.internal.store.FencedResult;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.observe.QueueEvents;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.dao.NonTransientDataAccessException;
import org.springframework.dao.NonTransientDataAccessResourceException;

/**
 * Writes STARTING→RUNNING transitions and attempt outcomes in batches: one thread takes everything
 * that accumulated since its last write and writes it with one statement per kind. Under load the
 * batches grow by themselves, and writes start at most every 5 ms while outcomes keep coming; when
 * idle a single outcome is written at once, while starts wait up to 5 ms for their outcomes to join
 * them (a job that finishes by then needs no start write).
 * Nothing is lost when the database is briefly unavailable: failed writes are retried, and if the
 * node dies first the leases expire and the jobs are rescued (at-least-once).
 */
public final class Completer extends BackgroundService implements JobExecutor.Recorder {

    /** Receives what the completer's writes found. Called on the completer's thread; must return quickly. */
    interface Listener {

        /**
         * A batch of STARTING→RUNNING transitions was written.
         * @param result lost leases and cancellation requests among them
         */
        void startsWritten(FencedResult result);

        /**
         * A batch of outcomes was written; their capacity is free again.
         * @param leases the leases the outcomes were written with
         * @param result the new states, and the leases that were lost before the write
         */
        void outcomesWritten(List<Lease> leases, FencedResult result);

        /**
         * A job went back to READY (retry, re-run): a local pool may look for it when it is due
         * rather than at the next poll.
         * @param task the job's task
         * @param delay how long until it is due
         */
        void requeued(String task, Duration delay);
    }

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

    /**
     * Least time between the starts of two writes while outcomes keep coming: an outcome that
     * arrives within it of the last write waits for the rest of it, and the outcomes that arrive
     * meanwhile join the same write. After a quiet spell an outcome is written at once. With 8
     * producers enqueuing single jobs at 5,000-10,000 jobs/s, writes at once came every ~1 ms with ~7
     * outcomes each; spaced, ~29 each, the machine's CPU spent 3-8 % less for the same work and the
     * producers reached 7,892 / 8,784 jobs/s at a 10,000 target against 7,281 / 8,050. Starts linger as long
     * ({@link #START_LINGER_NANOS}).
     */
    static final long OUTCOME_SPACING_NANOS = Duration.ofMillis(5).toNanos();

    /** When the last write started ({@link System#nanoTime()}); only the writer thread uses it. */
    private long lastWriteAt = System.nanoTime() - OUTCOME_SPACING_NANOS;

    private final JobStore store;

    private final Duration lease;

    private final int batchSize;

    private final Listener listener;

    private final QueueEvents events;

    private final ReentrantLock lock = new ReentrantLock();

    private final Condition pending = this.lock.newCondition();

    private final Condition drained = this.lock.newCondition();

    private List<Lease> starts = new ArrayList<>();

    /** When {@link #starts} last went from empty to not empty ({@link System#nanoTime()}). */
    private long startsSince;

    private List<Outcome> outcomes = new ArrayList<>();

    private int writing;

    /**
     * Creates a completer.
     * @param store where to write
     * @param lease the lease a STARTING→RUNNING write sets
     * @param batchSize the most starts or outcomes written in one statement
     * @param listener receives what the writes found
     * @param events receives the states the outcomes led to
     * @param threadSuffix appended to the writer thread's name
     */
    Completer(JobStore store, Duration lease, int batchSize, Listener listener, QueueEvents events, String threadSuffix) {
        super("pgqueue-completer" + threadSuffix, RETRY_DELAY.multipliedBy(5));
        this.store = store;
        this.lease = lease;
        this.batchSize = batchSize;
        this.listener = listener;
        this.events = events;
    }

    @Override
    public void started(Lease lease) {
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

    @Override
    public void finished(Outcome outcome) {
        this.lock.lock();
        try {
            this.outcomes.add(outcome);
            if (this.outcomes.size() == 1 || this.outcomes.size() == this.batchSize) {
                this.pending.signal();
            }
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

    @Override
    protected void wakeUp() {
        this.lock.lock();
        try {
            this.pending.signal();
        }
        finally {
            this.lock.unlock();
        }
    }

    @Override
    protected void run() {
        while (true) {
            List<Lease> startBatch;
            List<Outcome> outcomeBatch;
            this.lock.lock();
            try {
                while (true) {
                    if (this.outcomes.isEmpty() && this.starts.isEmpty()) {
                        if (!isRunning()) {
                            return;
                        }
                        this.pending.await(100, TimeUnit.MILLISECONDS);
                        continue;
                    }
                    // Outcomes wait out the spacing since the last write, starts alone their linger.
                    long due = this.outcomes.isEmpty() ? this.startsSince + START_LINGER_NANOS
                            : this.lastWriteAt + OUTCOME_SPACING_NANOS;
                    long left = due - System.nanoTime();
                    if (left <= 0 || !isRunning() || this.outcomes.size() >= this.batchSize) {
                        break;
                    }
                    this.pending.awaitNanos(left);
                }
                this.lastWriteAt = System.nanoTime();
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
            if (!written && isRunning()) {
                if (left == before) {
                    // Nothing got through (the database is away?): wait before the next round.
                    pause(RETRY_DELAY);
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
                this.listener.startsWritten(this.store.markRunning(toStart, this.lease));
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
            this.listener.outcomesWritten(outcomes.stream().map(Outcome::lease).toList(), result);
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
        result.applied().forEach((id, state) -> this.events.recorded(result.tasks().get(id), state));
        for (Outcome outcome : written) {
            long id = outcome.lease().jobId();
            if (result.applied().get(id) == JobState.READY) {
                this.listener.requeued(result.tasks().get(id),
                        outcome.kind() == AttemptResult.RETRY || outcome.kind() == AttemptResult.SNOOZED
                                ? outcome.retryDelay() : Duration.ZERO);
            }
        }
    }

    private <T> List<T> take(List<T> items) {
        return items.size() <= this.batchSize ? items : new ArrayList<>(items.subList(0, this.batchSize));
    }

    private static <T> List<T> rest(List<T> items, List<T> taken) {
        return taken == items ? new ArrayList<>() : new ArrayList<>(items.subList(taken.size(), items.size()));
    }
}
