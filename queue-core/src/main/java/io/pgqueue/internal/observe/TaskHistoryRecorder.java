package io.pgqueue.internal.observe;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.pgqueue.AttemptResult;
import io.pgqueue.JobState;
import io.pgqueue.internal.store.HistoryStore;
import io.pgqueue.observe.QueueEvents;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps what this node's handlers did per task — jobs completed, failed and sent back to the
 * queue, waits and run times — and adds it to the tasks' history in the database every
 * {@link PeriodicFlush#INTERVAL} while the node's workers run: one statement for every task, added to the
 * minute and the hour in which it is written. Figures a failed write could not add are kept for the
 * next. Listens to the worker runtime's events, so it costs a counter update per event.
 */
public final class TaskHistoryRecorder implements QueueEvents {

    private static final Logger log = LoggerFactory.getLogger(TaskHistoryRecorder.class);

    /** Old rows are pruned every this many writes (about every ten minutes). */
    private static final int PRUNE_EVERY = 60;

    private final HistoryStore store;

    private final Clock clock;

    private final Map<String, Tally> tallies = new ConcurrentHashMap<>();

    private final PeriodicFlush writer = new PeriodicFlush("pgqueue-history", "task history", this::flush);

    private int writes;

    /**
     * @param store the history, on the queue's main database
     * @param clock the time the figures are added at
     */
    public TaskHistoryRecorder(HistoryStore store, Clock clock) {
        this.store = store;
        this.clock = clock;
    }

    @Override
    public void started(String task, Duration queueWait, Duration startLatency, boolean deadlineMissed) {
        tally(task).waited(Math.max(0, queueWait.toMillis()));
    }

    @Override
    public void executed(String task, AttemptResult outcome, Duration duration) {
        tally(task).ran(Math.max(0, duration.toMillis()));
    }

    @Override
    public void recorded(String task, JobState state) {
        ended(task, state);
    }

    @Override
    public void rescued(String task, JobState state) {
        ended(task, state);
    }

    private void ended(String task, JobState state) {
        switch (state) {
            case COMPLETED -> tally(task).completed();
            case FAILED -> tally(task).failed();
            case READY -> tally(task).retried();
            default -> {
            }
        }
    }

    private Tally tally(String task) {
        return this.tallies.computeIfAbsent(task, name -> new Tally());
    }

    /** Starts adding the figures every {@link PeriodicFlush#INTERVAL}; idempotent. */
    public void start() {
        this.writer.start();
    }

    /** Stops, adding what is left; idempotent. */
    public void stop() {
        this.writer.stop();
    }

    /** Adds the figures gathered since the last write, and now and then prunes old rows. */
    public synchronized void flush() {
        List<HistoryStore.Figures> figures = new ArrayList<>();
        this.tallies.forEach((task, tally) -> {
            HistoryStore.Figures taken = tally.take(task);
            if (taken != null) {
                figures.add(taken);
            }
        });
        try {
            this.store.add(this.clock.instant(), figures);
            if (++this.writes % PRUNE_EVERY == 1) {
                this.store.prune();
            }
        }
        catch (RuntimeException ex) {
            figures.forEach(taken -> tally(taken.task()).giveBack(taken));
            log.warn("pgqueue could not add this node's figures to the task history ({}); they are kept for the next "
                    + "write", ex.toString());
        }
    }

    /** One task's figures since the last write. */
    private static final class Tally {

        private long completed;

        private long failed;

        private long retried;

        private long waits;

        private long waitSum;

        private long waitMax;

        private long runs;

        private long runSum;

        private long runMax;

        synchronized void completed() {
            this.completed++;
        }

        synchronized void failed() {
            this.failed++;
        }

        synchronized void retried() {
            this.retried++;
        }

        synchronized void waited(long millis) {
            this.waits++;
            this.waitSum += millis;
            this.waitMax = Math.max(this.waitMax, millis);
        }

        synchronized void ran(long millis) {
            this.runs++;
            this.runSum += millis;
            this.runMax = Math.max(this.runMax, millis);
        }

        /** @return the figures, reset; {@code null} when there are none */
        synchronized HistoryStore.Figures take(String task) {
            if (this.completed + this.failed + this.retried + this.waits + this.runs == 0) {
                return null;
            }
            HistoryStore.Figures figures = new HistoryStore.Figures(task, this.completed, this.failed, this.retried,
                    this.waits, this.waitSum, this.waitMax, this.runs, this.runSum, this.runMax);
            this.completed = 0;
            this.failed = 0;
            this.retried = 0;
            this.waits = 0;
            this.waitSum = 0;
            this.waitMax = 0;
            this.runs = 0;
            this.runSum = 0;
            this.runMax = 0;
            return figures;
        }

        synchronized void giveBack(HistoryStore.Figures figures) {
            this.completed += figures.completed();
            this.failed += figures.failed();
            this.retried += figures.retried();
            this.waits += figures.waits();
            this.waitSum += figures.waitSumMillis();
            this.waitMax = Math.max(this.waitMax, figures.waitMaxMillis());
            this.runs += figures.runs();
            this.runSum += figures.runSumMillis();
            this.runMax = Math.max(this.runMax, figures.runMaxMillis());
        }
    }
}
