package io.pgqueue.internal.schedule;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import io.pgqueue.DedupPolicy;
import io.pgqueue.EnqueueOptions;
import io.pgqueue.EnqueueOutcome;
import io.pgqueue.EnqueueResult;
import io.pgqueue.InvalidJobException;
import io.pgqueue.InvalidSettingException;
import io.pgqueue.JobRequest;
import io.pgqueue.TaskRegistry;
import io.pgqueue.internal.enqueue.Enqueuer;
import io.pgqueue.internal.lifecycle.BackgroundService;
import io.pgqueue.internal.store.ScheduleStore;
import io.pgqueue.schedule.CatchUp;
import io.pgqueue.schedule.CronSlots;
import io.pgqueue.schedule.Schedule;
import io.pgqueue.schedule.ScheduleInfo;
import io.pgqueue.schedule.Schedules;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * The scheduler every node with workers runs, and the schedules' table behind {@link Schedules}:
 * it locks due schedules ({@code FOR UPDATE SKIP LOCKED}), enqueues the jobs of their due slots
 * through the engine's enqueue pipeline and moves their next slot past now, in one transaction.
 */
public final class Scheduler extends BackgroundService implements Schedules {




    /** How late a slot may fire under {@link CatchUp#SKIP}. */
    static final Duration SKIP_GRACE = Duration.ofMinutes(1);

    private static final Logger log = LoggerFactory.getLogger(Scheduler.class);

    /** The shortest wait between two looks, when a due schedule is being fired by another node. */
    private static final Duration BUSY_WAIT = Duration.ofMillis(20);

    private final ScheduleStore store;

    private final Enqueuer enqueuer;

    private final TaskRegistry tasks;

    private final ObjectMapper mapper;

    private final Clock clock;

    private final Duration pollInterval;

    private final Object changes = new Object();

    private boolean changed;

    /**
     * @param store the schedules' table
     * @param enqueuer enqueues the slots' jobs
     * @param tasks the tasks this node can enqueue: it fires only their schedules
     * @param mapper reads the schedules' payloads
     * @param clock the scheduler's clock
     * @param pollInterval the longest the scheduler waits before looking again
     */
    public Scheduler(ScheduleStore store, Enqueuer enqueuer, TaskRegistry tasks, ObjectMapper mapper, Clock clock,
            Duration pollInterval) {
        super("pgqueue-scheduler", Duration.ofSeconds(10));
        this.store = store;
        this.enqueuer = enqueuer;
        this.tasks = tasks;
        this.mapper = mapper;
        this.clock = clock;
        this.pollInterval = pollInterval;
    }

    /**
     * Puts the schedules configured on this node in the table: new ones start at their next slot
     * after now, changed ones keep their next slot unless their expression or zone changed, and
     * configured schedules of the tasks in {@code declaredTasks} that are no longer configured are
     * deleted (a node owns the configured schedules of the tasks it declares).
     * @param configured the schedules configured on this node
     * @param declaredTasks the tasks this node declares
     */
    public void configure(Collection<Schedule> configured, Collection<String> declaredTasks) {
        Instant now = this.clock.instant();
        for (Schedule schedule : configured) {
            requireEnqueueable(schedule);
            this.store.upsertConfigured(schedule, schedule.slots().next(now));
        }
        int deleted = this.store.deleteUnconfigured(declaredTasks, configured.stream().map(Schedule::name).toList());
        if (deleted > 0) {
            log.info("Deleted {} configured schedules of tasks whose settings no longer have them", deleted);
        }
        wakeUp();
    }

    @Override
    public void put(Schedule schedule) {
        requireEnqueueable(schedule);
        if (!this.store.putRuntime(schedule, schedule.slots().next(this.clock.instant()))) {
            throw new IllegalStateException("Schedule '" + schedule.name() + "' is configured with its task; change it "
                    + "in the task's settings (cron, zone), not at runtime");
        }
        wakeUp();
    }

    @Override
    public boolean remove(String name) {
        if (name == null || name.indexOf('\u0000') >= 0) {
            // No schedule has it (Schedule's name rule), and PostgreSQL's text cannot hold U+0000.
            return false;
        }
        if (this.store.source(name).filter("CONFIG"::equals).isPresent()) {
            throw new IllegalStateException("Schedule '" + name + "' is configured with its task; remove the cron "
                    + "setting of the task instead");
        }
        return this.store.removeRuntime(name);
    }

    @Override
    public List<ScheduleInfo> list() {
        return this.store.list();
    }

    @Override
    public List<EnqueueResult> fireDue() {
        List<EnqueueResult> all = new ArrayList<>();
        Set<String> names = this.tasks.all().stream().map(task -> task.name()).collect(Collectors.toSet());
        if (names.isEmpty()) {
            return all;
        }
        // One instant for the whole look: slots that fall due while it fires wait for the next look,
        // so a look fires each schedule at most once under RUN_ONCE and SKIP.
        Instant now = this.clock.instant();
        while (true) {
            AtomicReference<ScheduleStore.Due> locked = new AtomicReference<>();
            List<EnqueueResult> fired;
            try {
                fired = this.store.inTransaction(() -> {
                    List<ScheduleStore.Due> due = this.store.lockDue(now, names, 1);
                    if (due.isEmpty()) {
                        return null;
                    }
                    locked.set(due.get(0));
                    return fire(due.get(0), now);
                });
            }
            catch (InvalidJobException | JacksonException ex) {
                // The job cannot be enqueued however often it is tried; a database failure, by
                // contrast, propagates and the slot is fired at the next look.
                ScheduleStore.Due due = locked.get();
                if (due == null) {
                    throw ex;
                }
                Instant next = due.schedule().slots().next(now);
                log.warn("Schedule '{}' could not enqueue its job of {} and skips it; it fires next at {}: {}",
                        due.schedule().name(), due.nextFire(), next, ex.toString());
                this.store.skipped(due.schedule().name(), due.nextFire(), next);
                continue;
            }
            if (fired == null) {
                return all;
            }
            all.addAll(fired);
        }
    }

    private List<EnqueueResult> fire(ScheduleStore.Due due, Instant now) {
        Schedule schedule = due.schedule();
        CronSlots slots = schedule.slots();
        List<Instant> missed = new ArrayList<>();
        Instant next = slots.next(now);
        switch (schedule.catchUp()) {
            case RUN_ALL -> {
                for (Instant slot = due.nextFire(); !slot.isAfter(now); slot = slots.next(slot)) {
                    missed.add(slot);
                    if (missed.size() == MAX_CATCH_UP) {
                        // The rest at the next look: the next slot is the one after the last fired.
                        next = slots.next(slot);
                        log.info("Schedule '{}' missed more than {} slots; they are fired {} at a time",
                                schedule.name(), MAX_CATCH_UP, MAX_CATCH_UP);
                        break;
                    }
                }
            }
            case RUN_ONCE -> add(missed, slots.latest(due.nextFire(), now));
            case SKIP -> {
                Instant from = now.minus(SKIP_GRACE);
                add(missed, slots.latest(due.nextFire().isAfter(from) ? due.nextFire() : from, now));
            }
        }
        List<EnqueueResult> jobs = new ArrayList<>();
        JsonNode payload = this.mapper.readTree(schedule.payload());
        for (Instant slot : missed) {
            EnqueueOptions options = EnqueueOptions.defaults()
                .withRunAt(slot)
                .withDedup("schedule:" + schedule.name() + ":" + slot.toEpochMilli(), DedupPolicy.keepExisting())
                .withHeader(SCHEDULE_HEADER, schedule.name())
                .withHeader(SLOT_HEADER, slot.toString());
            jobs.add(this.enqueuer.enqueueAll(List.of(JobRequest.of(schedule.task(), payload, options))).get(0));
        }
        EnqueueResult last = jobs.isEmpty() ? null : jobs.get(jobs.size() - 1);
        // A job relayed to another shard is known by its outbox entry's id until it arrives there.
        Long lastJob = last == null || last.outcome() == EnqueueOutcome.RELAYED ? null : last.jobId();
        this.store.fired(schedule.name(), next, missed.isEmpty() ? null : missed.get(missed.size() - 1), lastJob);
        return jobs;
    }

    private static void add(List<Instant> slots, Instant slot) {
        if (slot != null) {
            slots.add(slot);
        }
    }

    /** The task must be declared here and the payload JSON readable as its handler's payload. */
    private void requireEnqueueable(Schedule schedule) {
        JsonNode payload;
        try {
            payload = this.mapper.readTree(schedule.payload());
        }
        catch (JacksonException ex) {
            throw new InvalidSettingException("payload", schedule.payload(), "is not JSON: " + ex.getOriginalMessage());
        }
        this.enqueuer.check(JobRequest.of(schedule.task(), payload));
    }

    @Override
    protected void run() {
        long failures = 0;
        while (isRunning()) {
            Duration wait = this.pollInterval;
            try {
                fireDue();
                Set<String> names = this.tasks.all().stream().map(task -> task.name()).collect(Collectors.toSet());
                Instant next = names.isEmpty() ? null : this.store.nextFire(names).orElse(null);
                if (next != null) {
                    Duration until = Duration.between(this.clock.instant(), next);
                    // Still due after firing: another node holds it and is firing it now.
                    wait = until.compareTo(BUSY_WAIT) < 0 ? BUSY_WAIT : until.compareTo(wait) < 0 ? until : wait;
                }
                if (failures > 0) {
                    log.info("The scheduler fires schedules again after {} failed attempts", failures);
                }
                failures = 0;
            }
            catch (RuntimeException ex) {
                if (failures++ == 0) {
                    log.warn("The scheduler could not fire due schedules, trying again: {}", ex.toString());
                }
                wait = Duration.ofMillis(Math.min(this.pollInterval.toMillis(), MAX_RETRY_PAUSE.toMillis()));
            }
            if (!await(wait)) {
                return;
            }
        }
    }

    /** Waits until the time passed, a schedule changed or the scheduler stops. @return whether it still runs */
    private boolean await(Duration time) {
        long deadline = System.nanoTime() + time.toNanos();
        synchronized (this.changes) {
            long left;
            while (isRunning() && !this.changed && (left = deadline - System.nanoTime()) > 0) {
                try {
                    this.changes.wait(Math.max(1, left / 1_000_000));
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            this.changed = false;
        }
        return isRunning();
    }

    /** Schedules changed, or the scheduler stops: look again at once. */
    @Override
    protected void wakeUp() {
        synchronized (this.changes) {
            this.changed = true;
            this.changes.notifyAll();
        }
    }
}
