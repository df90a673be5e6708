package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.pgqueue.QueueConfig;
import io.pgqueue.TaskDefinition;
import io.pgqueue.internal.shard.LimitShare;
import io.pgqueue.internal.store.FencedResult;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.internal.store.NodeStore;
import io.pgqueue.internal.store.QueueStores;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.worker.WorkerSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The part of a node's worker runtime that works on one shard: a producer per pool claiming from
 * it, the completer that writes its jobs' starts and outcomes, the lease keeper of its jobs, the
 * listener for its notifications, and its rescue, retention and vacuum. Unsharded there is one, on
 * the queue's database. The pools' slots, the held jobs and the handler threads are the node's,
 * shared by every shard, so what a node holds is bounded per pool whatever the number of shards.
 */
public final class ShardWorkers {

    private static final Logger log = LoggerFactory.getLogger(ShardWorkers.class);

    /**
     * What the shards of a node share.
     * @param settings the worker settings
     * @param held the jobs the node holds
     * @param pools the pools' slots, by pool name
     * @param events where events go
     * @param timers the node's timer thread
     * @param nodes the node registry (on the main shard), which maintenance keeps clean
     * @param capacityFreed called when outcomes were written, freeing capacity in the pools
     * @param mapChannel sharded, the channel on which the main shard announces partition map changes; else {@code null}
     * @param mapChanged called when such an announcement arrives
     */
    record Shared(WorkerSettings settings, HeldJobs held, Map<String, PoolSlots> pools, QueueEvents events,
            ScheduledExecutorService timers, NodeStore nodes, Runnable capacityFreed, String mapChannel,
            Runnable mapChanged) {
    }

    private final String name;

    private final boolean main;

    private final JobStore store;

    private final Shared shared;

    private final Completer completer;

    private final LeaseKeeper leaseKeeper;

    private final Maintenance maintenance;

    private final NotificationListener listener;

    private final Map<String, Producer> producers = new LinkedHashMap<>();

    private final Map<String, Producer> producersByChannel = new LinkedHashMap<>();

    private final Map<String, String> tasksByChannel = new LinkedHashMap<>();

    private volatile boolean running;

    private final LimitShare limitShare;

    /** Whether some task of this node has slots that finished jobs free (global concurrency, groups). */
    private final boolean slotted;

    /**
     * @param name the shard's name
     * @param main whether it is the main shard (its threads keep the unsharded names)
     * @param stores the shard's stores
     * @param share the share of the tasks' global limits the shard enforces
     * @param shared what the node's shards share
     */
    ShardWorkers(String name, boolean main, QueueStores stores, LimitShare share, Shared shared) {
        this.name = name;
        this.limitShare = share;
        this.main = main;
        this.store = stores.jobs();
        this.shared = shared;
        String suffix = main ? "" : "-" + name;
        WorkerSettings settings = shared.settings();
        QueueConfig config = stores.config();
        this.completer = new Completer(this.store, settings.lease(), settings.batchSizes().write(), new Writes(),
                shared.events(), suffix);
        this.maintenance = new Maintenance(this.store, shared.nodes(), config.retention(), settings,
                new Rescuer(this.store, settings.batchSizes().maintenance(), shared.events(), shared.pools().values().stream()
                    .flatMap(pool -> pool.definitions().stream()).filter(TaskDefinition::history).map(TaskDefinition::name)
                    .toList()), suffix);
        this.slotted = shared.pools().values().stream().flatMap(pool -> pool.definitions().stream())
            .anyMatch(ShardWorkers::holdsSlot);
        for (Map.Entry<String, PoolSlots> pool : shared.pools().entrySet()) {
            Producer producer = new Producer(pool.getKey(), pool.getValue(), settings, this, shared.held(),
                    shared.events(), suffix);
            this.producers.put(pool.getKey(), producer);
            for (String task : pool.getValue().tasks()) {
                String channel = this.store.channel(task);
                this.producersByChannel.put(channel, producer);
                this.tasksByChannel.put(channel, task);
            }
        }
        // Hung handlers are the node's, not a shard's: the main shard's lease keeper looks for them.
        this.leaseKeeper = new LeaseKeeper(this.store, shared.held(), settings, this.completer,
                main ? List.copyOf(shared.pools().values()) : List.of(), job -> job.shard == this, suffix);
        List<String> channels = new ArrayList<>(settings.notifications() ? this.producersByChannel.keySet() : List.of());
        if (main && shared.mapChannel() != null) {
            // The main shard announces partition map changes: read the map at once, not at the next check.
            channels.add(shared.mapChannel());
        }
        this.listener = new NotificationListener(stores.dataSource(), List.copyOf(channels),
                this::onNotification, () -> wake(null), suffix);
    }

    String name() {
        return this.name;
    }

    JobStore store() {
        return this.store;
    }

    /** @return where the starts and outcomes of this shard's jobs are recorded */
    Completer completer() {
        return this.completer;
    }

    void start() {
        this.completer.start();
        this.producers.values().forEach(Producer::start);
        this.listener.start();
        this.leaseKeeper.start();
        this.maintenance.start();
        this.running = true;
    }

    /** Stops listening and claiming; buffered jobs go back to READY. */
    void stopClaiming() {
        this.running = false;
        this.listener.stop();
        this.producers.values().forEach(Producer::stop);
    }

    /**
     * Waits until every recorded outcome is written, then stops the completer.
     * @return whether all were written in time
     */
    boolean drain(Duration timeout) throws InterruptedException {
        boolean drained = this.completer.awaitDrained(timeout);
        this.completer.stop();
        return drained;
    }

    /** Stops the lease keeper and the maintenance. */
    void stopRest() {
        this.leaseKeeper.stop();
        this.maintenance.stop();
    }

    /**
     * Sets the paused tasks on every producer of the shard.
     * @param paused the names of all paused tasks
     */
    void setPaused(Set<String> paused) {
        this.producers.values().forEach(producer -> producer.setPaused(paused));
    }

    /** Capacity was freed: the producers whose last claim left jobs behind claim again. */
    void capacityFreed() {
        this.producers.values().forEach(Producer::outcomesWritten);
    }

    /**
     * Wakes the producers: new jobs may be due on this shard.
     * @param task the task, or {@code null} for every task
     */
    void wake(String task) {
        this.producers.values().forEach(producer -> producer.wake(task));
    }

    private void onNotification(String channel, String payload) {
        if (channel.equals(this.shared.mapChannel())) {
            this.shared.mapChanged().run();
            return;
        }
        Producer producer = this.producersByChannel.get(channel);
        if (producer == null) {
            return;
        }
        if (JobStore.SLOT_FREED.equals(payload)) {
            producer.slotFreed(this.tasksByChannel.get(channel));
        }
        else {
            producer.wake(this.tasksByChannel.get(channel));
        }
    }

    /** @return whether a job of the task holds a slot that its finish frees for claims waiting on it */
    private static boolean holdsSlot(TaskDefinition definition) {
        return definition.globalConcurrency() > 0 || definition.groups() != null;
    }

    /**
     * Jobs of tasks with a global concurrency or groups finished here: this node's producers and,
     * through a notification, every other node's look again if they wait for a slot.
     */
    private void slotsFreed(Set<String> tasks) {
        for (String task : tasks) {
            Producer producer = this.producersByChannel.get(this.store.channel(task));
            if (producer != null) {
                producer.slotFreed(task);
            }
        }
        try {
            this.store.notifySlotsFreed(tasks);
        }
        catch (RuntimeException ex) {
            log.debug("Could not announce finished jobs of {}{}; other nodes look again at their next poll: {}", tasks,
                    describe(), ex.toString());
        }
    }

    /**
     * Hands jobs this node will not run back to READY, keeping their attempt and place, each on the
     * shard it was claimed from.
     * @param pool the pool, for the log
     * @param jobs the jobs
     * @param which which jobs these are, for the log
     * @param held the node's held jobs
     */
    static void handBack(String pool, List<RunningJob> jobs, String which, HeldJobs held) {
        if (jobs.isEmpty()) {
            return;
        }
        jobs.forEach(held::forget);
        Map<ShardWorkers, List<RunningJob>> byShard = new LinkedHashMap<>();
        jobs.forEach(job -> byShard.computeIfAbsent(job.shard, shard -> new ArrayList<>()).add(job));
        byShard.forEach((shard, part) -> {
            try {
                shard.store.release(part.stream().map(RunningJob::lease).toList());
                log.info("Pool '{}' handed {} {} jobs back to the queue{}", pool, part.size(), which, shard.describe());
            }
            catch (RuntimeException ex) {
                log.warn("Pool '{}' could not hand back {} {} jobs{}; they return when their leases expire: {}", pool,
                        part.size(), which, shard.describe(), ex.toString());
            }
        });
    }

    /** @return the share of the tasks' global limits this shard enforces */
    LimitShare limitShare() {
        return this.limitShare;
    }

    /** @return nothing for the main shard, else " on shard 'name'": for logs */
    String describe() {
        return this.main ? "" : " on shard '" + this.name + "'";
    }

    /** Applies what the completer's writes found to the held jobs and the pools. */
    private final class Writes implements Completer.Listener {

        @Override
        public void startsWritten(FencedResult result) {
            ShardWorkers.this.shared.held().apply(result, ShardWorkers.this.completer);
        }

        @Override
        public void outcomesWritten(List<Lease> leases, FencedResult result) {
            Set<String> limited = new HashSet<>();
            if (ShardWorkers.this.slotted) {
                for (Lease lease : leases) {
                    RunningJob job = ShardWorkers.this.shared.held().get(lease.jobId());
                    if (job != null && holdsSlot(job.task.definition())) {
                        limited.add(job.task());
                    }
                }
            }
            ShardWorkers.this.shared.held().written(leases, result.lost());
            ShardWorkers.this.shared.capacityFreed().run();
            if (!limited.isEmpty()) {
                slotsFreed(limited);
            }
        }

        /** A job went back to READY here (retry, re-run): look for it when it is due, not at the next poll. */
        @Override
        public void requeued(String task, Duration delay) {
            Producer producer = ShardWorkers.this.producersByChannel.get(ShardWorkers.this.store.channel(task));
            if (producer == null || delay.compareTo(ShardWorkers.this.shared.settings().pollInterval()) >= 0) {
                return;
            }
            if (delay.isZero()) {
                producer.wake(task);
            }
            else if (ShardWorkers.this.running) {
                ShardWorkers.this.shared.timers().schedule(() -> producer.wake(task), delay.toNanos(),
                        TimeUnit.NANOSECONDS);
            }
        }
    }
}
