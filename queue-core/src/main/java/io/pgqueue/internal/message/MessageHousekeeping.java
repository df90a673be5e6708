package io.pgqueue.internal.message;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import io.pgqueue.internal.lifecycle.PeriodicTasks;
import io.pgqueue.message.CountedQueues;
import io.pgqueue.message.MessageQueueCounts;
import io.pgqueue.message.MessageQueueEvents;
import io.pgqueue.message.MessageQueueInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The periodic work of a node using message queues, on one thread ({@code pgqueue-message-sweeper}):
 * every minute, deletes messages past their queue's retention and expired FIFO deduplication ids;
 * every count interval, counts every queue's messages (for metrics, health and the endpoint);
 * every vacuum interval, VACUUMs the message tables (of every shard); every second, steps the running message move
 * tasks. Nodes may do all of it at once.
 */
final class MessageHousekeeping {

    private static final Logger log = LoggerFactory.getLogger(MessageHousekeeping.class);

    /** How often expired messages and deduplication ids are deleted. */
    static final Duration SWEEP_INTERVAL = Duration.ofSeconds(60);

    private static final int SWEEP_BATCH = 10_000;

    /** How often the running message move tasks move a batch. */
    static final Duration MOVE_STEP = Duration.ofSeconds(1);

    /** How long a stop waits for a sweep, count or vacuum under way (it is interrupted). */
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);

    private final MessageShards shards;

    private final Supplier<Map<String, MessageQueueCounts>> counter;

    private final MessageQueueEvents events;

    private final Duration countInterval;

    private final Duration vacuumInterval;

    private final Runnable moveStep;

    private PeriodicTasks thread;

    private volatile CountedQueues counted;

    MessageHousekeeping(MessageShards shards, Supplier<Map<String, MessageQueueCounts>> counter, MessageQueueEvents events,
            Duration countInterval, Duration vacuumInterval, Runnable moveStep) {
        this.shards = shards;
        this.counter = counter;
        this.events = events;
        this.countInterval = countInterval;
        this.vacuumInterval = vacuumInterval;
        this.moveStep = moveStep;
    }

    public synchronized void start() {
        if (this.thread != null) {
            return;
        }
        List<PeriodicTasks.Task> tasks = new ArrayList<>(List.of(
                new PeriodicTasks.Task("message sweep", SWEEP_INTERVAL, SWEEP_INTERVAL, this::sweep),
                new PeriodicTasks.Task("message count", Duration.ZERO, this.countInterval, this::count),
                new PeriodicTasks.Task("message moves", MOVE_STEP, MOVE_STEP, this::moveStep)));
        if (!this.vacuumInterval.isZero()) {
            tasks.add(new PeriodicTasks.Task("message vacuum", this.vacuumInterval, this.vacuumInterval, this::vacuum));
        }
        this.thread = new PeriodicTasks("pgqueue-message-sweeper", STOP_TIMEOUT, tasks);
        this.thread.start();
    }

    public synchronized void stop() {
        if (this.thread != null) {
            this.thread.stop();
            this.thread = null;
        }
    }

    /** @return the latest count, empty before the first */
    public Optional<CountedQueues> latestCounts() {
        return Optional.ofNullable(this.counted);
    }

    /** Deletes messages past their queue's retention, in batches, and expired deduplication ids. */
    public void sweep() {
        try {
            List<MessageQueueInfo> queues = this.shards.main().store().listQueues("", "", Integer.MAX_VALUE);
            for (MessageShards.Shard shard : this.shards.all()) {
                for (MessageQueueInfo queue : queues) {
                    int deleted;
                    do {
                        deleted = shard.store().deleteExpired(queue, SWEEP_BATCH);
                        if (deleted > 0) {
                            log.debug("Deleted {} messages of queue {} on shard '{}' older than its retention", deleted,
                                    queue.name(), shard.name());
                        }
                    }
                    while (deleted == SWEEP_BATCH);
                }
                shard.store().deleteExpiredDeduplicationIds();
            }
        }
        catch (RuntimeException ex) {
            log.warn("Deleting expired messages failed, retrying in {} s: {}", SWEEP_INTERVAL.toSeconds(), ex.toString());
        }
    }

    private void count() {
        try {
            Map<String, MessageQueueCounts> counts = this.counter.get();
            this.counted = new CountedQueues(counts, Instant.now());
            this.events.counted(counts);
        }
        catch (RuntimeException ex) {
            log.debug("Counting the messages of message queues failed: {}", ex.toString());
        }
    }

    private void moveStep() {
        try {
            this.moveStep.run();
        }
        catch (RuntimeException ex) {
            log.warn("A step of the message move tasks failed, retrying in {} s: {}", MOVE_STEP.toSeconds(), ex.toString());
        }
    }

    private void vacuum() {
        for (MessageShards.Shard shard : this.shards.all()) {
            try {
                shard.store().vacuum();
            }
            catch (RuntimeException ex) {
                log.debug("Could not vacuum the message table of shard '{}': {}", shard.name(), ex.toString());
            }
        }
    }
}
