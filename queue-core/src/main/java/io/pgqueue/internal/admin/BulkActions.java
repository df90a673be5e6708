package io.pgqueue.internal.admin;

import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.pgqueue.BulkAction;
import io.pgqueue.JobPage;
import io.pgqueue.JobQuery;
import io.pgqueue.QueueAction;
import io.pgqueue.internal.lifecycle.PeriodicTasks;
import io.pgqueue.internal.store.ActionStore;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.observe.QueueEvents;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs bulk actions: every job a query matches, on every shard, a page at a time. Each page is
 * found with the listing's search (keyset pages, never OFFSET) and changed by one short statement
 * that re-checks each job's state (a job claimed or finished meanwhile is skipped), so no
 * transaction holds more than a page of rows and a repeated action acts only on what is left. The
 * action's row in {@code queue_action} carries its progress after each page. Actions started with
 * {@link #start} run one at a time on one thread of this node, in the order they were started.
 */
public final class BulkActions {

    private static final Logger log = LoggerFactory.getLogger(BulkActions.class);

    /** How often a node touches the actions it runs or will run (reads call one untouched for five minutes stopped). */
    private static final Duration KEEP_ALIVE = Duration.ofMinutes(1);

    /** The jobs one statement of a bulk action changes at most. */
    public static final int BATCH_SIZE = JobQuery.MAX_LIMIT;

    private final Supplier<List<JobStore>> stores;

    private final ActionStore actions;

    private final QueueEvents events;

    private final String node;

    private ExecutorService executor;

    /** Touches the node's pending actions every minute while there are some. */
    private PeriodicTasks keeper;

    /** The actions this node runs or will run. */
    private final Set<Long> pending = ConcurrentHashMap.newKeySet();

    private volatile boolean stopping;

    /**
     * Creates the runner; its thread starts with the first action.
     * @param stores the job stores of every shard (the main one first; unsharded, the one)
     * @param actions where actions are recorded
     * @param events told of the jobs cancelled
     * @param node this node's name, recorded with each action
     */
    public BulkActions(Supplier<List<JobStore>> stores, ActionStore actions, QueueEvents events, String node) {
        this.stores = stores;
        this.actions = actions;
        this.events = events;
        this.node = node;
    }

    /**
     * Records an action that is done (not a bulk one).
     * @param actor who took it, or {@code null}
     * @param action what
     * @param target on what
     * @param acted how many jobs it changed
     * @param message what it did
     * @return the record
     */
    public QueueAction record(String actor, String action, String target, long acted, String message) {
        log.info("pgqueue action by {}: {} {}: {}", actor == null ? "-" : actor, action, target, message);
        return this.actions.record(actor, action, target, QueueAction.State.DONE, null, acted, this.node, message);
    }

    /**
     * Reads an action.
     * @param id its id
     * @return it, or empty
     */
    public Optional<QueueAction> find(long id) {
        return this.actions.find(id);
    }

    /**
     * Lists actions, newest first.
     * @param before only those with a smaller id, or {@code null} for the newest
     * @param limit the most actions
     * @return the actions
     */
    public List<QueueAction> list(Long before, int limit) {
        return this.actions.list(before, limit);
    }

    /**
     * Counts the jobs a query matches on every shard.
     * @param query the group and the filters
     * @return how many match
     */
    public long count(JobQuery query) {
        return this.stores.get().stream().mapToLong(store -> store.count(query)).sum();
    }

    /**
     * Records a bulk action with the number of jobs it matches, and starts it on this node's
     * bulk-action thread.
     * @param actor who takes it, or {@code null}
     * @param query the jobs
     * @param action what to do to them
     * @return the action as recorded: RUNNING, with the count of matching jobs
     * @throws IllegalArgumentException if the action does not apply to the query's group
     * @throws IllegalStateException if this node is shutting down
     */
    public QueueAction start(String actor, JobQuery query, BulkAction action) {
        QueueAction started = begin(actor, query, action);
        try {
            this.pending.add(started.id());
            executor().execute(new Run(started.id(), query, action));
        }
        catch (RejectedExecutionException ex) {
            this.pending.remove(started.id());
            this.actions.finish(started.id(), QueueAction.State.STOPPED, "Not started: the node is shutting down");
            throw new IllegalStateException("pgqueue is shutting down on this node; take the action on another", ex);
        }
        return started;
    }

    /**
     * Records a bulk action and runs it in the caller's thread.
     * @param actor who takes it, or {@code null}
     * @param query the jobs
     * @param action what to do to them
     * @return the action as it ended
     * @throws IllegalArgumentException if the action does not apply to the query's group
     */
    public QueueAction run(String actor, JobQuery query, BulkAction action) {
        QueueAction started = begin(actor, query, action);
        new Run(started.id(), query, action).run();
        return this.actions.find(started.id()).orElseThrow();
    }

    private QueueAction begin(String actor, JobQuery query, BulkAction action) {
        Objects.requireNonNull(query, "query");
        Objects.requireNonNull(action, "action");
        if (!action.appliesTo(query.group())) {
            throw new IllegalArgumentException("A " + action.name() + " action applies to " + action.groups()
                    + " jobs, not " + query.group());
        }
        long matched = count(query);
        QueueAction recorded = this.actions.record(actor, action.name(), query.describe(), QueueAction.State.RUNNING,
                matched, 0, this.node, action.describe());
        log.info("pgqueue bulk action {} by {}: {} on {} ({} jobs match)", recorded.id(), actor == null ? "-" : actor,
                action.describe(), query.describe(), matched);
        return recorded;
    }

    private synchronized ExecutorService executor() {
        if (this.stopping) {
            throw new RejectedExecutionException("stopping");
        }
        if (this.executor == null) {
            this.executor = Executors.newSingleThreadExecutor(task -> {
                Thread thread = new Thread(task, "pgqueue-bulk-actions");
                thread.setDaemon(true);
                return thread;
            });
            this.keeper = new PeriodicTasks("pgqueue-bulk-actions-keeper", Duration.ofSeconds(5), List.of(
                    new PeriodicTasks.Task("touch pending bulk actions", KEEP_ALIVE, KEEP_ALIVE,
                            () -> this.actions.touch(List.copyOf(this.pending)))));
            this.keeper.start();
        }
        return this.executor;
    }

    /**
     * Stops the running action after its current batch and records it, and those not started, as
     * STOPPED: running either again acts on the jobs left.
     */
    public void stop() {
        ExecutorService running;
        PeriodicTasks keeping;
        synchronized (this) {
            this.stopping = true;
            running = this.executor;
            keeping = this.keeper;
        }
        if (running == null) {
            return;
        }
        keeping.stop();
        for (Runnable waiting : running.shutdownNow()) {
            if (waiting instanceof Run run) {
                this.actions.finish(run.id, QueueAction.State.STOPPED, "Not started: its node shut down");
            }
        }
        try {
            if (!running.awaitTermination(30, TimeUnit.SECONDS)) {
                log.warn("pgqueue's bulk action did not stop within 30 s of shutdown");
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** One bulk action at work. */
    private final class Run implements Runnable {

        private final long id;

        private final JobQuery query;

        private final BulkAction action;

        Run(long id, JobQuery query, BulkAction action) {
            this.id = id;
            this.query = query;
            this.action = action;
        }

        @Override
        public void run() {
            try {
                act();
            }
            finally {
                BulkActions.this.pending.remove(this.id);
            }
        }

        private void act() {
            long acted = 0;
            long skipped = 0;
            try {
                for (JobStore store : BulkActions.this.stores.get()) {
                    JobQuery page = this.query.withLimit(BATCH_SIZE).after(null);
                    while (true) {
                        if (BulkActions.this.stopping || Thread.currentThread().isInterrupted()) {
                            finish(QueueAction.State.STOPPED, acted, skipped, "Stopped: its node shut down");
                            return;
                        }
                        JobPage found = store.list(page);
                        if (found.jobs().isEmpty()) {
                            break;
                        }
                        List<Long> ids = found.jobs().stream().map(JobPage.Job::id).toList();
                        List<String> tasks = store.actOn(this.action, this.query.group(), ids);
                        afterBatch(store, tasks);
                        acted += tasks.size();
                        skipped += ids.size() - tasks.size();
                        BulkActions.this.actions.progress(this.id, tasks.size(), ids.size() - tasks.size());
                        if (found.next() == null) {
                            break;
                        }
                        page = page.after(found.next());
                    }
                }
                finish(QueueAction.State.DONE, acted, skipped, null);
            }
            catch (RuntimeException ex) {
                log.warn("pgqueue bulk action {} failed after {} jobs: {}", this.id, acted, ex.toString(), ex);
                finish(QueueAction.State.FAILED, acted, skipped, "Failed after " + acted + " jobs ("
                        + ex.getClass().getSimpleName() + "); the log of node " + BulkActions.this.node
                        + " says why. Running it again acts on the jobs left");
            }
        }

        private void afterBatch(JobStore store, List<String> tasks) {
            switch (this.action.kind()) {
                case CANCEL -> tasks.stream().filter(Objects::nonNull).forEach(BulkActions.this.events::cancelled);
                case RERUN, RUN_AT -> {
                    // Jobs due now: wake the tasks' workers rather than wait for their next poll.
                    if (!tasks.isEmpty() && this.action.runAt() == null) {
                        store.notifyDue(new LinkedHashSet<>(tasks));
                    }
                }
                default -> {
                }
            }
        }

        private void finish(QueueAction.State state, long acted, long skipped, String why) {
            String message = this.action.describe() + ": " + acted + " job" + (acted == 1 ? "" : "s") + ", " + skipped
                    + " skipped" + (why == null ? "" : ". " + why);
            BulkActions.this.actions.finish(this.id, state, message);
            log.info("pgqueue bulk action {} {}: {}", this.id, state.name().toLowerCase(Locale.ROOT), message);
        }
    }
}
