package io.pgqueue.internal.shard;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.pgqueue.QueueDefaults;
import io.pgqueue.internal.lifecycle.PeriodicTasks;
import io.pgqueue.internal.store.OutboxStore;
import io.pgqueue.internal.store.PartitionStore;
import io.pgqueue.internal.store.QueueStores;
import io.pgqueue.shard.ShardException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shards of a queue installation and the partition map a node routes by. Unsharded, the
 * queue's database is the one shard, named {@value QueueDefaults#MAIN_SHARD}, and holds every
 * partition. Sharded, that database (the main shard) also coordinates: it numbers the shards and
 * keeps the partition map, which every node caches and refreshes when its version changes.
 * <p>
 * Opening sharded shards registers new shards (each gets a number and so its own job id range),
 * and, for a new installation, creates the partition map: spread evenly over the configured shards
 * when none of them holds jobs yet, else every partition on the main shard, where the jobs are.
 * <p>
 * Registration, the partition count and the cached map are one class because each decides from
 * the others under the main shard's topology lock; the move itself is {@link PartitionMover}.
 */
public final class Shards {

    /**
     * One shard: a database with the queue's schema.
     * @param name the shard's name
     * @param number the shard's number, which sets its job id range
     * @param stores the stores of its database
     * @param partitions its partition store
     * @param outbox its outbox store (the outbox itself is on the main shard; every shard keeps relay marks)
     */
    public record Shard(String name, int number, QueueStores stores, PartitionStore partitions, OutboxStore outbox) {

        @Override
        public String toString() {
            return this.name;
        }
    }

    /** The most partitions an installation can have. */
    public static final int MAX_PARTITIONS = 32768;

    private static final Logger log = LoggerFactory.getLogger(Shards.class);

    /** The periodic task that reads the partition map's version. */
    private static final String MAP_REFRESH = "partition map refresh";

    /** How long a stop waits for the refresh and the move resumer (a resumed move is interrupted). */
    private static final Duration REFRESH_STOP_TIMEOUT = Duration.ofSeconds(10);

    private final Map<String, Shard> shards;

    private final Shard main;

    private final boolean sharded;

    private volatile int partitions;

    private final Object refreshLock = new Object();

    private volatile PartitionMap map;

    private PeriodicTasks refresher;

    private PeriodicTasks resumer;

    private Shards(Map<String, Shard> shards, boolean sharded, PartitionMap map) {
        this.shards = shards;
        this.main = shards.values().iterator().next();
        this.sharded = sharded;
        this.map = map;
        this.partitions = map.partitions();
    }

    /**
     * The one shard of an unsharded queue.
     * @param stores the stores of the queue's database
     * @return the shards
     */
    public static Shards unsharded(QueueStores stores) {
        Shard main = new Shard(QueueDefaults.MAIN_SHARD, 0, stores, stores.partitions(), stores.outbox());
        Map<String, Shard> shards = new LinkedHashMap<>();
        shards.put(main.name(), main);
        return new Shards(shards, false, PartitionMap.allOn(main.name(), QueueDefaults.PARTITIONS));
    }

    /**
     * Opens the shards of a sharded installation: registers new ones, creates the partition map if
     * there is none, and reads it.
     * @param main the stores of the main shard (the queue's own database, which coordinates)
     * @param others the stores of the other shards, by name, each created for a shard
     * @param partitions the partition count a new installation is created with, {@code null} for
     * the recorded count ({@value QueueDefaults#PARTITIONS} for a new installation)
     * @return the shards
     * @throws ShardException if a database belongs to another installation or shard, the map
     * places partitions on a shard that is not configured, or the installation records another
     * partition count than the one asked for
     */
    public static Shards open(QueueStores main, Map<String, QueueStores> others, Integer partitions) {
        Map<String, QueueStores> all = new LinkedHashMap<>();
        all.put(QueueDefaults.MAIN_SHARD, main);
        others.forEach((name, stores) -> {
            if (all.putIfAbsent(name, stores) != null) {
                throw new ShardException("A shard may not be named '" + name + "': that is the name of the shard on the "
                        + "queue's own DataSource");
            }
        });
        Map<String, PartitionStore> stores = new LinkedHashMap<>();
        all.forEach((name, shard) -> stores.put(name, shard.partitions()));
        PartitionStore coordinator = stores.get(QueueDefaults.MAIN_SHARD);
        int count = partitionCount(coordinator, stores, partitions);
        PartitionStore.Installation installation = coordinator.installation();
        Map<String, Integer> numbers = coordinator.withTopologyLock(
                () -> coordinator.registerShards(List.copyOf(all.keySet())));
        Map<String, Shard> shards = new LinkedHashMap<>();
        for (Map.Entry<String, QueueStores> entry : all.entrySet()) {
            String name = entry.getKey();
            PartitionStore store = stores.get(name);
            int number = numbers.get(name);
            if (!store.claimIdentity(installation.id(), name, number)) {
                PartitionStore.Installation found = store.installation();
                throw new ShardException("The database configured as shard '" + name + "' is shard '" + found.shardName()
                        + "' (number " + found.shardNumber() + ") of installation " + found.id() + ", not shard '" + name
                        + "' (number " + number + ") of installation " + installation.id() + "; give each shard its own "
                        + "database and keep its name");
            }
            store.enterIdRange(number);
            QueueStores shardStores = entry.getValue();
            shards.put(name, new Shard(name, number, shardStores, store, shardStores.outbox()));
        }
        coordinator.withTopologyLock(() -> {
            if (!coordinator.mapExists()) {
                createMap(coordinator, shards);
            }
            return null;
        });
        PartitionMap map = PartitionMap.of(coordinator.map(), count);
        Set<String> unknown = new TreeSet<>(map.partitionsPerShard().keySet());
        unknown.removeAll(shards.keySet());
        if (!unknown.isEmpty()) {
            throw new ShardException("The partition map places partitions on shards " + unknown + ", which are not "
                    + "configured (configured: " + shards.keySet() + "); configure them under pgqueue.shards, or move "
                    + "their partitions off them first");
        }
        log.info("pgqueue shards {} open; partition map version {}: {}", shards.keySet(), map.version(),
                map.partitionsPerShard());
        return new Shards(shards, true, map);
    }

    /**
     * Settles the installation's partition count: the one asked for if the installation is new
     * (no shard has held a job or a map), else the recorded one, which every shard must record.
     */
    private static int partitionCount(PartitionStore coordinator, Map<String, PartitionStore> stores, Integer wanted) {
        return coordinator.withTopologyLock(() -> {
            int count = adoptedCount(coordinator, wanted);
            stores.forEach((name, store) -> {
                if (!store.adoptPartitionCount(count)) {
                    throw new ShardException("The database of shard '" + name + "' records "
                            + store.installation().partitions() + " partitions and holds jobs, but the installation has "
                            + count + "; give the shard an empty database of its own");
                }
            });
            return count;
        });
    }

    private static int adoptedCount(PartitionStore store, Integer wanted) {
        int recorded = store.installation().partitions();
        if (wanted == null || wanted == recorded) {
            return recorded;
        }
        if (wanted < 1 || wanted > MAX_PARTITIONS) {
            throw new ShardException("An installation cannot have " + wanted + " partitions; choose 1 to " + MAX_PARTITIONS);
        }
        if (!store.adoptPartitionCount(wanted)) {
            throw new ShardException("The installation records " + recorded + " partitions, not " + wanted + ": the "
                    + "count is chosen when the installation is created and is kept once a job has a partition; ask for "
                    + recorded + " or leave the count unset");
        }
        log.info("pgqueue installation created with {} partitions", wanted);
        return wanted;
    }

    /**
     * Creates the map of a new installation. No job has been written to a partition yet (writes
     * need the map), so each shard is made to hold exactly its share, whatever an interrupted
     * earlier attempt left.
     */
    private static void createMap(PartitionStore coordinator, Map<String, Shard> shards) {
        boolean empty = shards.values().stream().noneMatch(shard -> shard.partitions().hasActiveJobs());
        List<String> names = List.copyOf(shards.keySet());
        int count = coordinator.installation().partitions();
        List<String> assignment = new ArrayList<>(count);
        Map<String, List<Integer>> held = new LinkedHashMap<>();
        names.forEach(name -> held.put(name, new ArrayList<>()));
        for (int p = 0; p < count; p++) {
            String shard = empty ? names.get(p % names.size()) : QueueDefaults.MAIN_SHARD;
            assignment.add(shard);
            held.get(shard).add(p);
        }
        held.forEach((name, partitions) -> shards.get(name).partitions().holdExactly(partitions));
        long version = coordinator.createMap(assignment);
        log.info("pgqueue created the partition map (version {}): {} partitions {}", version, count,
                empty ? "spread over shards " + names : "on shard '" + QueueDefaults.MAIN_SHARD + "', which holds the "
                        + "jobs already queued; move partitions to the other shards to spread the load");
    }

    /** @return whether the installation has shards (else its one database holds everything) */
    public boolean sharded() {
        return this.sharded;
    }

    /** @return the main shard: the queue's own database, which coordinates the others */
    public Shard main() {
        return this.main;
    }

    /** @return every shard, the main one first */
    public Collection<Shard> all() {
        return this.shards.values();
    }

    /**
     * Returns the share of every task's global limits a shard enforces: its position among the
     * shards by registered number, which every node configured with the same shards agrees on.
     * @param shard one of the shards
     * @return its share
     */
    public LimitShare limitShare(Shard shard) {
        List<Integer> numbers = this.shards.values().stream().map(Shard::number).sorted().toList();
        return new LimitShare(numbers.indexOf(shard.number()), numbers.size());
    }

    /**
     * @param name a shard's name
     * @return the shard, or empty if there is none of that name
     */
    public Optional<Shard> find(String name) {
        return Optional.ofNullable(this.shards.get(name));
    }

    /** @return the partition count */
    public int partitions() {
        return this.partitions;
    }

    /** @return the partition map this node routes by */
    public PartitionMap map() {
        return this.map;
    }

    /**
     * Returns the partition of a job: that of its key, or one picked at random.
     * @param key the dedup or partition key, or {@code null}
     * @return the partition
     */
    public int partitionOf(String key) {
        return key == null ? ThreadLocalRandom.current().nextInt(this.partitions)
                : PartitionHash.partitionOf(key, this.partitions);
    }

    /**
     * @param partition a partition
     * @return the shard that holds it, by this node's map
     */
    public Shard shardOf(int partition) {
        return this.shards.get(this.map.shardOf(partition));
    }

    /**
     * Returns the shard whose id range a job id is from: where the job was written first. Its
     * partition may have moved on since.
     * @param jobId the job id
     * @return the shard, or empty if no configured shard has that range
     */
    public Optional<Shard> homeOf(long jobId) {
        int number = (int) (jobId >>> PartitionStore.ID_RANGE_BITS);
        return this.shards.values().stream().filter(shard -> shard.number() == number).findFirst();
    }

    /**
     * Reads the map's version and, if it changed, the map.
     * @return the current map
     */
    public PartitionMap refresh() {
        if (!this.sharded) {
            return this.map;
        }
        synchronized (this.refreshLock) {
            PartitionStore coordinator = this.main.partitions();
            if (coordinator.mapVersion() != this.map.version()) {
                PartitionMap fresh = PartitionMap.of(coordinator.map(), this.partitions);
                if (fresh.version() > this.map.version()) {
                    log.debug("pgqueue partition map version {} -> {}", this.map.version(), fresh.version());
                    this.map = fresh;
                }
            }
            return this.map;
        }
    }

    /**
     * Reads the map's version soon, on the refresh thread if it runs (the map changed: a
     * notification said so); never throws.
     */
    public void refreshSoon() {
        PeriodicTasks refresher;
        synchronized (this) {
            refresher = this.refresher;
        }
        if (refresher == null || !refresher.runSoon(MAP_REFRESH)) {
            refreshQuietly();
        }
    }

    private void refreshQuietly() {
        try {
            refresh();
        }
        catch (RuntimeException ex) {
            log.debug("Could not read the partition map: {}", ex.toString());
        }
    }

    /**
     * Waits until none of the partitions is moving, refreshing the map.
     * @param partitions the partitions
     * @param timeout how long to wait at most
     * @return the map in which none of them is moving
     * @throws ShardException if one still moves after the timeout
     */
    public PartitionMap awaitSettled(Collection<Integer> partitions, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long pause = TimeUnit.MILLISECONDS.toNanos(2);
        while (true) {
            PartitionMap current = refresh();
            List<Integer> moving = partitions.stream().filter(current::isMoving).distinct().toList();
            if (moving.isEmpty()) {
                return current;
            }
            if (System.nanoTime() - deadline > 0) {
                throw new ShardException("Partitions " + moving + " are still moving after " + timeout.toMillis()
                        + " ms; nothing was written, try again later");
            }
            LockSupport.parkNanos(pause);
            pause = Math.min(pause * 2, TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    /**
     * Settles an unsharded installation's partition count (the one asked for if the installation is
     * new, else the recorded one) and checks that its database is not the main shard of a sharded
     * installation: a node configured without the shards would write jobs of partitions that live
     * elsewhere. Sharded, it does nothing: {@link #open} did both.
     * @param partitions the partition count a new installation is created with, {@code null} for
     * the recorded count
     * @throws ShardException if the database's partition map places partitions on other shards, or
     * the installation records another partition count than the one asked for
     */
    public void openUnsharded(Integer partitions) {
        if (this.sharded) {
            return;
        }
        PartitionStore store = this.main.partitions();
        if (!store.partitioned()) {
            // A schema older than partitions: the schema check of whatever uses it says what to do.
            return;
        }
        int count = store.withTopologyLock(() -> adoptedCount(store, partitions));
        if (count != this.partitions) {
            this.partitions = count;
            this.map = PartitionMap.allOn(this.main.name(), count);
        }
        if (!store.mapExists()) {
            return;
        }
        Set<String> elsewhere = new TreeSet<>(PartitionMap.of(store.map(), count).partitionsPerShard().keySet());
        elsewhere.remove(QueueDefaults.MAIN_SHARD);
        if (!elsewhere.isEmpty()) {
            throw new ShardException("The queue's database coordinates shards " + elsewhere + ", which hold partitions; "
                    + "configure them under pgqueue.shards on this node too");
        }
    }

    /**
     * Starts checking the map's version once per interval and, every
     * {@link QueueDefaults#MOVE_RESUME_INTERVAL}, finishing journaled moves whose node died
     * (sharded only).
     * @param interval how often
     */
    public synchronized void startRefreshing(Duration interval) {
        if (!this.sharded || this.refresher != null) {
            return;
        }
        this.refresher = new PeriodicTasks("pgqueue-partition-map", REFRESH_STOP_TIMEOUT,
                List.of(new PeriodicTasks.Task(MAP_REFRESH, interval, interval, this::refreshQuietly)));
        // A thread of its own: finishing a stranded move must not hold up the map's refresh.
        PartitionMover mover = new PartitionMover(this);
        Duration resume = QueueDefaults.MOVE_RESUME_INTERVAL;
        this.resumer = new PeriodicTasks("pgqueue-move-resumer", REFRESH_STOP_TIMEOUT,
                List.of(new PeriodicTasks.Task("finishing of stranded partition moves", resume, resume,
                        () -> mover.resumeAll(QueueDefaults.MOVE_DRAIN_TIMEOUT))));
        this.refresher.start();
        this.resumer.start();
    }

    /** Stops checking the map's version and finishing stranded moves. */
    public synchronized void stopRefreshing() {
        if (this.refresher != null) {
            this.refresher.stop();
            this.resumer.stop();
            this.refresher = null;
            this.resumer = null;
        }
    }
}
