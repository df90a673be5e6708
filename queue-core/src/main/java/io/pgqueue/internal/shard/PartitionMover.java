package io.pgqueue.internal.shard;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

import io.pgqueue.internal.store.MessageStore;
import io.pgqueue.internal.store.PartitionStore;
import io.pgqueue.shard.PartitionMoveResult;
import io.pgqueue.shard.ShardException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a partition from its shard (the source) to another (the target) while producers and
 * workers run, journaled on the main shard so that any node can finish a move whose node died.
 * <ol>
 * <li><b>Mark.</b> The move is journaled and the partition marked MOVING in the map (enqueues for it
 * wait) and on the source, after the enqueues in flight on it committed: the source writes no
 * more of its jobs.</li>
 * <li><b>Copy.</b> Its READY jobs leave the source in batches: a batch is deleted from the job
 * table into {@code job_moving} in one transaction on the source, written to the target with a
 * mark of the batch in one transaction there, then dropped from {@code job_moving}. A job is
 * always in exactly one of the three places, and a batch is written once however often a move is
 * resumed. Jobs that workers hold on the source are waited for, up to the drain timeout: those
 * that come back READY (a retry) move too; those still running after it finish on the source.
 * Its message-queue messages leave the same way through {@code message_moving}: standard ones with
 * their ids, receipts and visibility (a message in flight stays in flight, its receipt handle finds
 * it on the target), FIFO groups whole once none of their messages is in flight (after the drain
 * timeout, in flight or not), then the FIFO deduplication ids.</li>
 * <li><b>Switch.</b> The target holds the partition, the relay marks of its outbox rows are copied
 * there, and the map places it on the target, ACTIVE: enqueues go there.</li>
 * <li><b>Clean up.</b> The partition's FAILED jobs follow it (so that an operator re-runs them where
 * the partition is), the source gives the partition up, the journal row goes, and, if jobs left
 * it, the source's job table is vacuumed and analyzed, so the rows that left do not bloat it.</li>
 * </ol>
 * One node moves a partition at a time (a session advisory lock on the main shard, released if
 * the node dies).
 */
public final class PartitionMover {

    private static final Logger log = LoggerFactory.getLogger(PartitionMover.class);

    /** Jobs per batch that leaves the source. */
    static final int BATCH = 5_000;

    /** Messages (or FIFO groups) per batch that leaves the source. */
    static final int MESSAGE_BATCH = 1_000;

    /** The steps at which a move can be observed (and, in tests, interrupted). */
    enum Step {
        /** The map says MOVING; the source has not been told yet. */
        MAP_MARKED,
        /** The source writes no more jobs of the partition. */
        SOURCE_MARKED,
        /** A batch left the job table of the source. */
        BATCH_STAGED,
        /** A batch was written on the target, not yet dropped from the source. */
        BATCH_APPLIED,
        /** The target holds the partition; the map does not say so yet. */
        TARGET_HOLDS,
        /** The map places the partition on the target. */
        SWITCHED,
        /** The source gave the partition up; the journal row is still there. */
        SOURCE_RELEASED
    }

    /** Sees each step of a move as it is reached. */
    interface Observer {

        /** @param step the step just reached */
        void reached(Step step);
    }

    private final Shards shards;

    private final Observer observer;

    /**
     * @param shards the installation's shards
     */
    public PartitionMover(Shards shards) {
        this(shards, step -> {
        });
    }

    PartitionMover(Shards shards, Observer observer) {
        this.shards = shards;
        this.observer = observer;
    }

    /**
     * Moves a partition to another shard, or finishes its move if one is journaled.
     * @param partition the partition
     * @param target the shard to move it to
     * @param drainTimeout how long to wait for the partition's jobs that workers hold on the source
     * @return what the move did
     * @throws ShardException if the partition or the shard is unknown, the partition is on the target
     * already, or another node moves it now
     */
    public PartitionMoveResult move(int partition, String target, Duration drainTimeout) {
        if (!this.shards.sharded()) {
            throw new ShardException("The queue is unsharded: there is no other shard to move partition " + partition
                    + " to; configure shards under pgqueue.shards");
        }
        if (partition < 0 || partition >= this.shards.partitions()) {
            throw new ShardException("There is no partition " + partition + "; partitions are 0 to "
                    + (this.shards.partitions() - 1));
        }
        Shards.Shard to = this.shards.find(target).orElseThrow(() -> new ShardException("There is no shard '" + target
                + "'; shards are " + this.shards.all().stream().map(Shards.Shard::name).toList()));
        PartitionStore coordinator = this.shards.main().partitions();
        try (AutoCloseable lock = coordinator.tryLockMove(partition)
            .orElseThrow(() -> new ShardException("Partition " + partition + " is being moved by another node"))) {
            long started = System.nanoTime();
            Optional<PartitionStore.Move> journaled = journaled(partition);
            if (journaled.isPresent() && !journaled.get().target().equals(to.name())) {
                throw new ShardException("Partition " + partition + " is moving to shard '" + journaled.get().target()
                        + "' already; that move is finished first (move it to '" + journaled.get().target() + "')");
            }
            PartitionStore.Move move = journaled.orElse(null);
            if (move == null) {
                PartitionMap map = this.shards.refresh();
                String source = map.shardOf(partition);
                if (source.equals(to.name())) {
                    throw new ShardException("Partition " + partition + " is on shard '" + source + "' already");
                }
                if (!coordinator.beginMove(partition, source, to.name())) {
                    throw new ShardException("Partition " + partition + " is not ACTIVE on shard '" + source
                            + "'; read the map again and retry");
                }
                move = new PartitionStore.Move(partition, source, to.name(), false);
                log.info("pgqueue moves partition {} from shard '{}' to shard '{}'", partition, source, to.name());
            }
            else {
                log.info("pgqueue resumes the move of partition {} from shard '{}' to shard '{}'", partition, move.source(),
                        move.target());
            }
            long[] counts = run(move, drainTimeout, journaled.isPresent());
            this.shards.refresh();
            PartitionMoveResult result = new PartitionMoveResult(partition, move.source(), move.target(), counts[0], counts[1],
                    counts[2], Duration.ofNanos(System.nanoTime() - started));
            log.info("pgqueue moved partition {} from shard '{}' to shard '{}': {} jobs and {} messages in {} ms{}",
                    partition, move.source(), move.target(), result.jobsMoved(), result.messagesMoved(),
                    result.duration().toMillis(),
                    result.jobsLeft() == 0 ? "" : "; " + result.jobsLeft() + " running jobs finish on the source");
            return result;
        }
        catch (RuntimeException ex) {
            throw ex;
        }
        catch (Exception ex) {
            // Only the lock's release throws checked exceptions.
            throw new IllegalStateException("Could not release the move lock of partition " + partition, ex);
        }
    }

    /**
     * Finishes every journaled move no other node is working on: those whose node died.
     * @param drainTimeout how long to wait for jobs that workers hold on a source
     * @return what the moves did
     */
    public List<PartitionMoveResult> resumeAll(Duration drainTimeout) {
        if (!this.shards.sharded()) {
            return List.of();
        }
        return this.shards.main().partitions().moves().stream()
            .filter(move -> this.shards.find(move.source()).isPresent() && this.shards.find(move.target()).isPresent())
            .flatMap(move -> {
                try {
                    return Stream.of(move(move.partition(), move.target(), drainTimeout));
                }
                catch (ShardException ex) {
                    log.debug("Not resuming the move of partition {}: {}", move.partition(), ex.getMessage());
                    return Stream.empty();
                }
            })
            .toList();
    }

    private Optional<PartitionStore.Move> journaled(int partition) {
        return this.shards.main().partitions().moves().stream().filter(move -> move.partition() == partition).findFirst();
    }

    /** @return jobs moved, jobs left running on the source, messages moved */
    private long[] run(PartitionStore.Move move, Duration drainTimeout, boolean resumed) {
        int partition = move.partition();
        Shards.Shard source = shard(move.source());
        Shards.Shard target = shard(move.target());
        long moved = 0;
        long left = 0;
        long messages = 0;
        if (!move.switched()) {
            this.observer.reached(Step.MAP_MARKED);
            source.partitions().markMoving(partition);
            this.observer.reached(Step.SOURCE_MARKED);
            long deadline = System.nanoTime() + drainTimeout.toNanos();
            MessageStore sourceMessages = source.stores().messages();
            while (true) {
                moved += applyStaged(source, target, partition);
                while (source.partitions().stageBatch(partition, BATCH) > 0) {
                    this.observer.reached(Step.BATCH_STAGED);
                    moved += applyStaged(source, target, partition);
                }
                boolean late = System.nanoTime() - deadline > 0;
                messages += applyStagedMessages(source, target, partition);
                while (sourceMessages.stageBatch(partition, MESSAGE_BATCH, late) > 0) {
                    this.observer.reached(Step.BATCH_STAGED);
                    messages += applyStagedMessages(source, target, partition);
                }
                PartitionStore.PartitionJobs jobs = source.partitions().partitionJobs(partition);
                long messagesLeft = sourceMessages.partitionMessages(partition);
                if (jobs.ready() == 0 && messagesLeft == 0 && (jobs.claimed() == 0 || late)) {
                    left = jobs.claimed();
                    break;
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(jobs.ready() > 0 ? 1 : 20));
            }
            // No message of the partition is written while it moves: its deduplication ids are all here.
            sourceMessages.stageDeduplicationIds(partition);
            messages += applyStagedMessages(source, target, partition);
            target.partitions().copyRelayedMarks(partition, source.partitions().relayedMarks(partition));
            target.partitions().holdActive(partition);
            this.observer.reached(Step.TARGET_HOLDS);
            this.shards.main().partitions().switchMove(partition, target.name());
            this.observer.reached(Step.SWITCHED);
        }
        bringFailedJobs(source, target, partition);
        source.partitions().release(partition);
        this.observer.reached(Step.SOURCE_RELEASED);
        this.shards.main().partitions().finishMove(partition);
        if (moved > 0 || resumed) {
            // Rows left the job table, in this run or in one that died.
            try {
                source.stores().jobs().vacuumAndAnalyzeActiveJobs();
            }
            catch (RuntimeException ex) {
                log.warn("Could not vacuum shard '{}' after partition {} left it: {}", source.name(), partition,
                        ex.toString());
            }
        }
        return new long[] {moved, left, messages};
    }

    /**
     * Brings a partition's FAILED jobs to the shard that holds it now, so that they are re-run
     * there. Runs after the switch, and again if the move is resumed: a job written before is
     * left as it is, and jobs that failed on the source after their partition left come too.
     */
    private static void bringFailedJobs(Shards.Shard source, Shards.Shard target, int partition) {
        long after = -1;
        while (true) {
            PartitionStore.FailedJobs jobs = source.partitions().failedJobs(partition, after, BATCH);
            if (jobs.ids().isEmpty()) {
                return;
            }
            bring(source, target, jobs);
            after = jobs.ids().get(jobs.ids().size() - 1);
        }
    }

    /**
     * Brings a FAILED job from a shard that no longer holds its partition to the one that does.
     * @param source the shard it is on
     * @param target the shard of its partition
     * @param jobId the job
     * @return whether it was FAILED on the source and is on the target now
     */
    public static boolean bringFailedJob(Shards.Shard source, Shards.Shard target, long jobId) {
        PartitionStore.FailedJobs job = source.partitions().failedJob(jobId);
        bring(source, target, job);
        return !job.ids().isEmpty();
    }

    private static void bring(Shards.Shard source, Shards.Shard target, PartitionStore.FailedJobs jobs) {
        target.partitions().writeFinished(jobs);
        source.partitions().dropFailed(jobs.ids());
    }

    /** Writes the batches staged on the source to the target, then drops them; @return jobs written */
    private long applyStaged(Shards.Shard source, Shards.Shard target, int partition) {
        long written = 0;
        for (long batch : source.partitions().stagedBatches(partition)) {
            String rows = source.partitions().stagedBatch(partition, batch);
            long inserted = target.partitions().applyBatch(source.number(), batch, partition, rows,
                    target.stores().jobs().channel(""));
            this.observer.reached(Step.BATCH_APPLIED);
            source.partitions().dropBatch(partition, batch);
            written += Math.max(inserted, 0);
        }
        return written;
    }

    /** Writes the message batches staged on the source to the target, then drops them; @return messages written */
    private long applyStagedMessages(Shards.Shard source, Shards.Shard target, int partition) {
        MessageStore from = source.stores().messages();
        long written = 0;
        for (long batch : from.stagedBatches(partition)) {
            long inserted = target.stores().messages().applyBatch(source.number(), batch, partition,
                    from.stagedBatch(partition, batch));
            this.observer.reached(Step.BATCH_APPLIED);
            from.dropBatch(partition, batch);
            written += Math.max(inserted, 0);
        }
        return written;
    }

    private Shards.Shard shard(String name) {
        return this.shards.find(name).orElseThrow(() -> new ShardException("A move involves shard '" + name
                + "', which is not configured; configure it under pgqueue.shards to finish the move"));
    }
}
