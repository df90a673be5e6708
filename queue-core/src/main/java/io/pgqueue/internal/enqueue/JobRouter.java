package io.pgqueue.internal.enqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;

import io.pgqueue.DedupPolicy;
import io.pgqueue.EnqueueOutcome;
import io.pgqueue.EnqueueResult;
import io.pgqueue.InvalidJobException;
import io.pgqueue.JobState;
import io.pgqueue.QueueDefaults;
import io.pgqueue.internal.balance.PartitionLoad;
import io.pgqueue.internal.shard.PartitionMap;
import io.pgqueue.internal.shard.Shards;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.NewJob;
import io.pgqueue.internal.store.PartitionNotHeldException;
import io.pgqueue.shard.ShardException;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Writes prepared jobs where they belong: unsharded, to the one database, single enqueues outside a
 * transaction through the group commit; sharded, to the shard of each job's partition, through the
 * main shard's outbox and its relay where a transaction spans shards. Duplicates of an active job's
 * dedup key are resolved where the job lands. It owns the group committers and the outbox relay.
 */
public final class JobRouter implements AutoCloseable {

    /**
     * Transactions in flight at most for grouped enqueues. One: a NOTIFY holds PostgreSQL's global
     * notification lock from before the commit until its WAL flush, so notifying transactions
     * commit one after the other anyway, and one in flight makes the next group the largest.
     * Measured with 8 producers (mixed workload): 4 in flight sustained 1,000 jobs/s, 2 sustained
     * 4,000, 1 sustained 6,000.
     */
    static final int GROUP_WRITERS = 1;

    /** Jobs in one grouped INSERT at most. */
    static final int GROUP_MAX = 500;

    private final JobStore store;

    /** The shards jobs are routed to; {@code null} for a router on one job store only. */
    private final Shards shards;

    private final Duplicates duplicates;

    private final GroupCommitter<NewJob, Long> groupCommitter;

    /** Per shard but the main one (whose committer is {@link #groupCommitter}), by name. */
    private final Map<String, GroupCommitter<NewJob, Long>> shardCommitters = new ConcurrentHashMap<>();

    private final PartitionLoad load;

    /** Relays the outbox to the shards (sharded only); created on first use. */
    private OutboxRelay relay;

    private boolean closed;

    /**
     * @param store the job store of the queue's database (sharded: the main shard's)
     * @param shards the installation's shards, or {@code null} to write to the one store only
     * @param duplicates resolves jobs whose dedup key an active job holds
     */
    public JobRouter(JobStore store, Shards shards, Duplicates duplicates) {
        this.store = store;
        this.shards = shards;
        this.duplicates = duplicates;
        this.groupCommitter = new GroupCommitter<>("group-commit", store::insert, GROUP_WRITERS, GROUP_MAX);
        this.load = sharded() ? new PartitionLoad(shards.partitions()) : null;
    }

    /** @return whether jobs are routed over several shards */
    public boolean sharded() {
        return this.shards != null && this.shards.sharded();
    }

    /** @return the jobs this node enqueued per partition, which weigh the partitions (sharded only) */
    public Optional<PartitionLoad> load() {
        return Optional.ofNullable(this.load);
    }

    /**
     * Counts jobs enqueued into a partition, which weigh it for the balancer (sharded only).
     * @param partition the partition
     * @param jobs how many
     */
    public void countLoad(int partition, int jobs) {
        if (this.load != null) {
            for (int i = 0; i < jobs; i++) {
                this.load.add(partition);
            }
        }
    }

    /**
     * Writes prepared jobs, each in its partition, in the caller's transaction if there is one.
     * @param jobs the jobs
     * @param policies each job's dedup policy
     * @return per job, in order, its id and what happened
     */
    public List<EnqueueResult> write(List<NewJob> jobs, List<DedupPolicy> policies) {
        for (int i = 0; i < jobs.size(); i++) {
            if (jobs.get(i).dedupKey() != null && policies.get(i) instanceof DedupPolicy.Unique unique
                    && unique.states().contains(JobState.COMPLETED) && !this.store.keepsCompleted()) {
                throw new InvalidJobException("A '" + jobs.get(i).task() + "' job's unique policy lets completed jobs "
                        + "hold its key, but completed jobs are not kept (pgqueue.retention.completed is 0); keep them at "
                        + "least as long as the period (" + unique.period() + "), or leave COMPLETED out");
            }
        }
        if (!sharded()) {
            return enqueueOn(this.store, this.groupCommitter, jobs, policies);
        }
        List<EnqueueResult> results = enqueueRouted(jobs, policies);
        jobs.forEach(job -> this.load.add(job.partition()));
        return results;
    }

    /** @return the installation's partition count */
    public int partitionCount() {
        return this.shards == null ? QueueDefaults.PARTITIONS : this.shards.partitions();
    }

    /**
     * Writes jobs to the shards of their partitions. Jobs all on the main shard are written there,
     * in the caller's transaction if there is one; jobs all on one other shard, outside a
     * transaction, are written there. Otherwise, so that the jobs exist if and only if the
     * transaction (the caller's, or one opened here) commits, those of other shards go to the
     * main shard's outbox and are relayed after the commit. A shard that no longer holds a
     * partition (the map here was stale, or the partition moved) writes nothing: the map is read
     * again and the jobs routed anew, waiting while a partition moves.
     */
    private List<EnqueueResult> enqueueRouted(List<NewJob> jobs, List<DedupPolicy> policies) {
        long deadline = System.nanoTime() + QueueDefaults.PARTITION_MOVE_WAIT.toNanos();
        List<Integer> partitions = jobs.stream().map(NewJob::partition).distinct().toList();
        while (true) {
            PartitionMap map = this.shards.map();
            if (partitions.stream().anyMatch(map::isMoving)) {
                map = this.shards.awaitSettled(partitions, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            }
            Map<String, List<Integer>> byShard = new LinkedHashMap<>();
            for (int i = 0; i < jobs.size(); i++) {
                byShard.computeIfAbsent(map.shardOf(jobs.get(i).partition()), shard -> new ArrayList<>()).add(i);
            }
            Shards.Shard main = this.shards.main();
            try {
                if (byShard.size() == 1) {
                    Shards.Shard shard = shard(byShard.keySet().iterator().next());
                    if (shard == main || !TransactionSynchronizationManager.isActualTransactionActive()) {
                        return enqueueOn(shard.stores().jobs(), committer(shard), jobs, policies);
                    }
                }
                return enqueueThroughOutbox(jobs, policies, byShard);
            }
            catch (PartitionNotHeldException ex) {
                if (System.nanoTime() - deadline > 0) {
                    throw new ShardException("A shard does not hold partitions " + ex.partitions() + " that the "
                            + "partition map places there; nothing was written");
                }
                this.shards.refresh();
            }
        }
    }

    /**
     * Writes the jobs of the main shard there and the others to its outbox, in one transaction on
     * the main shard (the caller's, if there is one); the outbox relay takes them to their shards
     * after the commit.
     */
    private List<EnqueueResult> enqueueThroughOutbox(List<NewJob> jobs, List<DedupPolicy> policies,
            Map<String, List<Integer>> byShard) {
        Shards.Shard main = this.shards.main();
        List<Integer> local = byShard.getOrDefault(main.name(), List.of());
        List<Integer> remote = new ArrayList<>();
        byShard.forEach((name, indexes) -> {
            if (!name.equals(main.name())) {
                remote.addAll(indexes);
            }
        });
        List<String> policyNames = remote.stream().map(i -> this.duplicates.recordedName(jobs.get(i), policies.get(i))).toList();
        EnqueueResult[] results = new EnqueueResult[jobs.size()];
        PartitionNotHeldException[] notHeld = {null};
        main.stores().jobs().inTransaction(() -> {
            if (!local.isEmpty()) {
                try {
                    List<EnqueueResult> written = enqueueOn(main.stores().jobs(), this.groupCommitter,
                            local.stream().map(jobs::get).toList(), local.stream().map(policies::get).toList());
                    for (int k = 0; k < local.size(); k++) {
                        results[local.get(k)] = written.get(k);
                    }
                }
                catch (PartitionNotHeldException ex) {
                    // Nothing was written: return normally, so the caller's transaction is not marked rollback-only.
                    notHeld[0] = ex;
                    return null;
                }
            }
            List<Long> ids = main.outbox().write(remote.stream().map(jobs::get).toList(), policyNames);
            for (int k = 0; k < remote.size(); k++) {
                NewJob job = jobs.get(remote.get(k));
                results[remote.get(k)] = new EnqueueResult(ids.get(k),
                        job.dedupKey() == null ? EnqueueOutcome.CREATED : EnqueueOutcome.RELAYED);
            }
            return null;
        });
        if (notHeld[0] != null) {
            throw notHeld[0];
        }
        if (TransactionSynchronizationManager.isSynchronizationActive()) {
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCommit() {
                    relay().wake();
                }
            });
        }
        else {
            relay().wake();
        }
        return List.of(results);
    }

    private Shards.Shard shard(String name) {
        return this.shards.find(name).orElseThrow(() -> new ShardException(
                "The partition map places partitions on shard '" + name + "', which is not configured"));
    }

    /** @return the outbox relay, started on first use */
    public synchronized OutboxRelay relay() {
        if (this.relay == null) {
            this.relay = new OutboxRelay(this.shards, this.duplicates);
        }
        if (!this.closed && !this.relay.isRunning()) {
            this.relay.start();
        }
        return this.relay;
    }

    private GroupCommitter<NewJob, Long> committer(Shards.Shard shard) {
        if (shard == this.shards.main()) {
            return this.groupCommitter;
        }
        return this.shardCommitters.computeIfAbsent(shard.name(),
                name -> new GroupCommitter<>("group-commit", shard.stores().jobs()::insert, GROUP_WRITERS, GROUP_MAX));
    }

    /** Writes jobs to one database, in the caller's transaction if there is one. */
    private List<EnqueueResult> enqueueOn(JobStore store, GroupCommitter<NewJob, Long> committer, List<NewJob> jobs,
            List<DedupPolicy> policies) {
        if (jobs.stream().allMatch(job -> job.dedupKey() == null)) {
            if (jobs.size() == 1 && !TransactionSynchronizationManager.isActualTransactionActive()) {
                // A single job outside any transaction: share one INSERT with concurrent callers.
                return created(Collections.singletonList(committer.write(jobs.get(0))));
            }
            return created(store.insert(jobs));
        }
        // Resolving a duplicate takes several statements: keep them in one transaction.
        PartitionNotHeldException[] notHeld = {null};
        List<EnqueueResult> resolved = store.inTransaction(() -> {
            // Jobs of unique keys that a finished job holds are decided first, and not written.
            Map<Integer, EnqueueResult> held = this.duplicates.heldByFinished(store, jobs, policies);
            List<Integer> written = IntStream.range(0, jobs.size()).filter(i -> !held.containsKey(i)).boxed().toList();
            List<Long> ids;
            try {
                ids = written.isEmpty() ? List.of() : store.insert(written.stream().map(jobs::get).toList());
            }
            catch (PartitionNotHeldException ex) {
                // Nothing was written: return normally, so the caller's transaction is not marked rollback-only.
                notHeld[0] = ex;
                return null;
            }
            EnqueueResult[] results = new EnqueueResult[jobs.size()];
            held.forEach((i, result) -> results[i] = result);
            List<Integer> duplicates = new ArrayList<>();
            for (int k = 0; k < ids.size(); k++) {
                int i = written.get(k);
                if (ids.get(k) != null) {
                    results[i] = this.duplicates.heldAfterInsert(store, jobs.get(i), policies.get(i), ids.get(k))
                        .orElse(new EnqueueResult(ids.get(k), EnqueueOutcome.CREATED));
                }
                else {
                    duplicates.add(i);
                }
            }
            // Lock existing holders in key order, as the insert did, so concurrent batches cannot deadlock.
            duplicates.sort(Comparator.comparing((Integer i) -> jobs.get(i).task()).thenComparing(i -> jobs.get(i).dedupKey()));
            for (int i : duplicates) {
                results[i] = this.duplicates.resolve(store, jobs.get(i), policies.get(i));
            }
            return List.of(results);
        });
        if (notHeld[0] != null) {
            throw notHeld[0];
        }
        return resolved;
    }

    /**
     * Stops the group-commit writers and the outbox relay; enqueues after this are written one by one.
     */
    @Override
    public void close() {
        this.groupCommitter.close();
        this.shardCommitters.values().forEach(GroupCommitter::close);
        synchronized (this) {
            this.closed = true;
            if (this.relay != null) {
                this.relay.stop();
            }
        }
    }

    /**
     * @param partition a partition
     * @return the job store of the shard the partition map places it on, whatever transaction is
     * open: for a caller whose transaction is on that shard's database (a durable handler's spawn)
     */
    public JobStore storeHolding(int partition) {
        return sharded() ? this.shards.shardOf(partition).stores().jobs() : this.store;
    }

    /**
     * @param partition a partition
     * @param what names the jobs in the error
     * @return the job store of the partition's shard, which must be writable in the caller's transaction
     * @throws InvalidJobException if the partition is on another shard than the caller's transaction's
     */
    public JobStore storeOf(int partition, String what) {
        if (!sharded()) {
            return this.store;
        }
        Shards.Shard shard = this.shards.shardOf(partition);
        if (shard != this.shards.main() && TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new InvalidJobException("The " + what + " belong to partition " + partition + " on shard '"
                    + shard.name() + "', which the caller's transaction (on the main shard) cannot write: enqueue "
                    + "them outside a transaction, or without a partition key");
        }
        return shard.stores().jobs();
    }

    /**
     * @return a partition for a workflow without a key: on the main shard when a transaction is active
     * @throws InvalidJobException if a transaction is active and the main shard holds no partition
     */
    public int workflowPartition() {
        if (!sharded() || !TransactionSynchronizationManager.isActualTransactionActive()) {
            return ThreadLocalRandom.current().nextInt(partitionCount());
        }
        PartitionMap map = this.shards.map();
        List<Integer> local = new ArrayList<>();
        for (int partition = 0; partition < partitionCount(); partition++) {
            if (map.shardOf(partition).equals(this.shards.main().name()) && !map.isMoving(partition)) {
                local.add(partition);
            }
        }
        if (local.isEmpty()) {
            throw new InvalidJobException("The main shard holds no partition, so a workflow cannot join the caller's "
                    + "transaction; enqueue it outside a transaction");
        }
        return local.get(ThreadLocalRandom.current().nextInt(local.size()));
    }

    /**
     * The job stores a job may be in: unsharded the one; sharded every shard's, the shard whose id
     * range the id is from first (where the job stays unless its partition moved).
     * @param jobId the job id
     * @return the stores, in the order to look
     */
    public List<JobStore> storesOf(long jobId) {
        if (!sharded()) {
            return List.of(this.store);
        }
        List<JobStore> stores = new ArrayList<>();
        this.shards.homeOf(jobId).ifPresent(home -> stores.add(home.stores().jobs()));
        this.shards.all().stream().map(shard -> shard.stores().jobs()).filter(jobs -> !stores.contains(jobs))
            .forEach(stores::add);
        return stores;
    }

    /**
     * @param ids the new jobs' ids
     * @return a result for each, created
     */
    public static List<EnqueueResult> created(List<Long> ids) {
        return ids.stream().map(id -> new EnqueueResult(id, EnqueueOutcome.CREATED)).toList();
    }
}
