package io.pgqueue.internal.message;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.function.Function;

import javax.sql.DataSource;

import io.pgqueue.QueueDefaults;
import io.pgqueue.internal.enqueue.GroupCommitter;
import io.pgqueue.internal.shard.PartitionHash;
import io.pgqueue.internal.shard.PartitionMap;
import io.pgqueue.internal.shard.Shards;
import io.pgqueue.internal.store.MessageStore;
import io.pgqueue.internal.store.MessageStore.NewMessage;
import io.pgqueue.internal.store.MessageStore.Receipt;
import io.pgqueue.internal.store.MessageStore.ReceiptOutcome;
import io.pgqueue.internal.store.MessageStore.Sent;
import io.pgqueue.internal.store.PartitionNotHeldException;
import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;
import io.pgqueue.shard.ShardException;

/**
 * Where messages live. Unsharded, the queue's database holds them all and its messages have no
 * partition. Sharded, the catalog stays on the main shard and each message is written to the shard
 * holding its partition: a FIFO message's is its group's, a standard message with a group its
 * group's (so a group's order and turns are kept on one shard), any other's is picked at random.
 * Writes wait while a partition moves, and a shard that no longer holds a partition (a stale map)
 * makes the write go again by the refreshed map. It owns the group commits of sends and deletes,
 * one pair per shard.
 */
final class MessageShards implements AutoCloseable {

    /** Sends and deletes in one grouped transaction at most. */
    private static final int GROUP_MAX = 500;

    /**
     * One database holding messages.
     *
     * @param name the shard's name
     * @param dataSource its database
     * @param store its message store
     */
    record Shard(String name, DataSource dataSource, MessageStore store) {
    }

    /** The installation's shards; {@code null} for a queue on one database. */
    private final Shards shards;

    private final Map<String, Shard> all = new LinkedHashMap<>();

    /** The same shards in order, for the receives' rotation. */
    private final List<Shard> ordered;

    private final Shard main;

    private final AtomicInteger rotation = new AtomicInteger();

    private final Map<String, GroupCommitter<NewMessage, Sent>> sends = new ConcurrentHashMap<>();

    private final Map<String, GroupCommitter<Receipt, ReceiptOutcome>> deletes = new ConcurrentHashMap<>();

    private boolean closed;

    private MessageShards(Shards shards, List<Shard> all) {
        this.shards = shards;
        all.forEach(shard -> this.all.put(shard.name(), shard));
        this.ordered = List.copyOf(all);
        this.main = all.get(0);
    }

    /**
     * @param dataSource a queue's one database
     * @param store its message store
     * @return the messages of an unsharded queue
     */
    static MessageShards single(DataSource dataSource, MessageStore store) {
        return new MessageShards(null, List.of(new Shard(QueueDefaults.MAIN_SHARD, dataSource, store)));
    }

    /**
     * @param shards the installation's shards (unsharded: its one database)
     * @return the messages of the installation
     */
    static MessageShards of(Shards shards) {
        return new MessageShards(shards, shards.all().stream()
            .map(shard -> new Shard(shard.name(), shard.stores().dataSource(), shard.stores().messages()))
            .toList());
    }

    /** @return whether messages are spread over several shards */
    boolean sharded() {
        return this.shards != null && this.shards.sharded();
    }

    /** @return the main shard, which holds the catalog and the messages without a partition */
    Shard main() {
        return this.main;
    }

    /** @return every shard, the main one first */
    Collection<Shard> all() {
        return this.all.values();
    }

    /** @return every shard, starting from the next in turn, so that no shard is always tried last */
    List<Shard> rotation() {
        List<Shard> shards = this.ordered;
        if (shards.size() == 1) {
            return shards;
        }
        int first = Math.floorMod(this.rotation.getAndIncrement(), shards.size());
        List<Shard> rotated = new ArrayList<>(shards.size());
        for (int i = 0; i < shards.size(); i++) {
            rotated.add(shards.get((first + i) % shards.size()));
        }
        return rotated;
    }

    /**
     * @param group a FIFO group or a standard message's group, or {@code null}
     * @return the partition of a message sent with it, {@code null} unsharded
     */
    Integer partitionOf(String group) {
        if (!sharded()) {
            return null;
        }
        return group == null ? ThreadLocalRandom.current().nextInt(this.shards.partitions())
                : PartitionHash.partitionOf(group, this.shards.partitions());
    }

    /** @return the group commit of single sends on a shard */
    GroupCommitter<NewMessage, Sent> sends(Shard shard) {
        return this.sends.computeIfAbsent(shard.name(), name -> committer("message-send" + suffix(name),
                shard.store()::send));
    }

    /** @return the group commit of single deletes on a shard */
    GroupCommitter<Receipt, ReceiptOutcome> deletes(Shard shard) {
        return this.deletes.computeIfAbsent(shard.name(), name -> committer("message-delete" + suffix(name),
                shard.store()::delete));
    }

    private static String suffix(String shard) {
        return QueueDefaults.MAIN_SHARD.equals(shard) ? "" : "-" + shard;
    }

    private synchronized <T, R> GroupCommitter<T, R> committer(String name, Function<List<T>, List<R>> writer) {
        GroupCommitter<T, R> committer = new GroupCommitter<>(name, writer, 1, GROUP_MAX);
        if (this.closed) {
            // After the stop, writes are made one by one.
            committer.close();
        }
        return committer;
    }

    /**
     * Writes items each on the shard of its partition: per shard, one call of {@code write} with
     * that shard's items, in their order. Items of a partition that moves wait for the move;
     * items a shard refused (it no longer holds their partition) go again by the refreshed map.
     * @param <T> the item type
     * @param <R> the result type
     * @param items the items
     * @param partition an item's partition, {@code null} for the main shard
     * @param write writes items on a shard, returning a result per item in order
     * @return per item, in order, its result
     * @throws ShardException if a partition still moves, or no shard takes it, after
     * {@link QueueDefaults#PARTITION_MOVE_WAIT}
     */
    <T, R> List<R> route(List<T> items, Function<T, Integer> partition, BiFunction<Shard, List<T>, List<R>> write) {
        if (!sharded()) {
            return write.apply(this.main, items);
        }
        List<R> results = new ArrayList<>(items.size());
        items.forEach(item -> results.add(null));
        List<Integer> pending = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            pending.add(i);
        }
        long deadline = System.nanoTime() + QueueDefaults.PARTITION_MOVE_WAIT.toNanos();
        while (!pending.isEmpty()) {
            Map<Shard, List<Integer>> byShard = byShard(pending.stream().map(i -> partition.apply(items.get(i))).toList(),
                    pending, deadline);
            pending = new ArrayList<>();
            for (Map.Entry<Shard, List<Integer>> entry : byShard.entrySet()) {
                List<Integer> indexes = entry.getValue();
                try {
                    List<R> written = write.apply(entry.getKey(), indexes.stream().map(items::get).toList());
                    for (int k = 0; k < indexes.size(); k++) {
                        results.set(indexes.get(k), written.get(k));
                    }
                }
                catch (PartitionNotHeldException ex) {
                    if (System.nanoTime() - deadline > 0) {
                        throw new ShardException("Shard '" + entry.getKey().name() + "' does not hold partitions "
                                + ex.partitions() + " that the partition map places there; nothing was written");
                    }
                    this.shards.refresh();
                    pending.addAll(indexes);
                }
            }
        }
        return results;
    }

    /**
     * Receipts each on the shard of its message's partition. A moving partition's receipts go to the
     * shard it leaves without waiting: its message is there until the move stages it (and a FIFO
     * group in flight is not moved before its messages are deleted or visible again, which this
     * delete may be). A receipt whose message its shard did not find ({@link ReceiptOutcome#GONE})
     * is tried again, once its partition's move is over, where the refreshed map places the
     * partition, if that changed: its message moved with the partition.
     * @param receipts the receipts
     * @param apply the action on a shard, an outcome per receipt in order
     * @return per receipt, in order, what became of it
     */
    List<ReceiptOutcome> byReceipt(List<Receipt> receipts,
            BiFunction<Shard, List<Integer>, List<ReceiptOutcome>> apply) {
        if (!sharded()) {
            List<Integer> all = new ArrayList<>();
            for (int i = 0; i < receipts.size(); i++) {
                all.add(i);
            }
            return apply.apply(this.main, all);
        }
        long deadline = System.nanoTime() + QueueDefaults.PARTITION_MOVE_WAIT.toNanos();
        List<ReceiptOutcome> outcomes = new ArrayList<>(receipts.size());
        Map<Integer, String> triedOn = new LinkedHashMap<>();
        receipts.forEach(receipt -> outcomes.add(null));
        List<Integer> pending = new ArrayList<>();
        for (int i = 0; i < receipts.size(); i++) {
            pending.add(i);
        }
        PartitionMap map = this.shards.map();
        while (!pending.isEmpty()) {
            // Missed on the shard a partition is leaving: the move took the message along, wait for it to end.
            List<Integer> moved = new ArrayList<>();
            for (int index : pending) {
                Integer partition = receipts.get(index).partition();
                if (partition != null && map.isMoving(partition) && map.shardOf(partition).equals(triedOn.get(index))
                        && !moved.contains(partition)) {
                    moved.add(partition);
                }
            }
            if (!moved.isEmpty()) {
                map = this.shards.awaitSettled(moved, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
            }
            Map<Shard, List<Integer>> byShard = new LinkedHashMap<>();
            for (int index : pending) {
                Integer partition = checked(receipts.get(index).partition(), map);
                Shard shard = partition == null ? this.main : this.all.get(map.shardOf(partition));
                byShard.computeIfAbsent(shard, s -> new ArrayList<>()).add(index);
            }
            pending = new ArrayList<>();
            List<Integer> gone = new ArrayList<>();
            for (Map.Entry<Shard, List<Integer>> entry : byShard.entrySet()) {
                List<Integer> indexes = entry.getValue();
                List<ReceiptOutcome> done = apply.apply(entry.getKey(), indexes);
                for (int k = 0; k < indexes.size(); k++) {
                    outcomes.set(indexes.get(k), done.get(k));
                    triedOn.put(indexes.get(k), entry.getKey().name());
                    if (done.get(k) == ReceiptOutcome.GONE && receipts.get(indexes.get(k)).partition() != null) {
                        gone.add(indexes.get(k));
                    }
                }
            }
            if (!gone.isEmpty()) {
                map = this.shards.refresh();
                for (int index : gone) {
                    int partition = receipts.get(index).partition();
                    if (map.isMoving(partition) || !map.shardOf(partition).equals(triedOn.get(index))) {
                        pending.add(index);
                    }
                }
            }
        }
        return outcomes;
    }

    /** Groups indexes by the shard of their partitions, waiting for the moving ones until the deadline. */
    private Map<Shard, List<Integer>> byShard(List<Integer> partitions, List<Integer> indexes, long deadline) {
        PartitionMap map = this.shards.map();
        List<Integer> moving = partitions.stream().filter(Objects::nonNull).filter(map::isMoving).distinct().toList();
        if (!moving.isEmpty()) {
            map = this.shards.awaitSettled(moving, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        }
        Map<Shard, List<Integer>> byShard = new LinkedHashMap<>();
        for (int k = 0; k < indexes.size(); k++) {
            Integer partition = partitions.get(k);
            Shard shard = partition == null ? this.main : this.all.get(map.shardOf(partition));
            byShard.computeIfAbsent(shard, s -> new ArrayList<>()).add(indexes.get(k));
        }
        return byShard;
    }

    /** @return the partition a receipt handle names, if it is one of the installation's */
    private static Integer checked(Integer partition, PartitionMap map) {
        if (partition != null && (partition < 0 || partition >= map.partitions())) {
            throw new MessageQueueException(MessageQueueError.RECEIPT_HANDLE_INVALID, "The receipt handle names "
                    + "partition " + partition + ", which does not exist: it is not a handle of this queue.");
        }
        return partition;
    }

    /** Ends the group commits (later writes are made one by one); idempotent. */
    @Override
    public synchronized void close() {
        this.closed = true;
        this.sends.values().forEach(GroupCommitter::close);
        this.deletes.values().forEach(GroupCommitter::close);
    }
}
