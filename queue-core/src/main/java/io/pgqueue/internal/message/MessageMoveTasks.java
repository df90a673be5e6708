package io.pgqueue.internal.message;

import java.util.List;
import java.util.UUID;

import io.pgqueue.internal.store.MessageMoveStore;
import io.pgqueue.internal.store.MessageMoveStore.Advance;
import io.pgqueue.internal.store.MessageStore;
import io.pgqueue.message.MessageMoveTask;
import io.pgqueue.message.MessageMoveTask.Status;
import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;
import io.pgqueue.message.MessageQueueInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Message move tasks: started, listed and cancelled by callers; stepped once a second by the
 * sweeper of every node using message queues, each task by one node at a time (under its row's
 * lock). A step moves up to the task's rate (500 when it has none) of the source's visible
 * messages, oldest sent first, to the destination or each back to the queue it was dead-lettered
 * from, in one transaction with the task's progress. A task completes when the source holds no
 * visible message; it fails when the messages left have no queue to go to.
 */
final class MessageMoveTasks {

    private static final Logger log = LoggerFactory.getLogger(MessageMoveTasks.class);

    private final MessageMoveStore moves;

    private final MessageShards shards;

    private final MessageQueueCatalog catalog;

    MessageMoveTasks(MessageMoveStore moves, MessageShards shards, MessageQueueCatalog catalog) {
        this.moves = moves;
        this.shards = shards;
        this.catalog = catalog;
    }

    MessageMoveTask start(String source, String destination, Integer maxPerSecond) {
        MessageQueueInfo from = existing(source, "source");
        if (from.fifo()) {
            throw new MessageQueueException(MessageQueueError.UNSUPPORTED_OPERATION, "Move tasks move messages of "
                    + "standard queues; " + source + " is a FIFO queue (redrive it with QueueAdmin or the console)");
        }
        if (this.catalog.deadLetterSourceQueues(source).isEmpty()) {
            throw MessageQueueException.invalidParameter("Source queue must be configured as a Dead Letter Queue: no "
                    + "queue's redrive policy names " + source);
        }
        Long to = null;
        if (destination != null) {
            MessageQueueInfo target = existing(destination, "destination");
            if (target.fifo() || target.id() == from.id()) {
                throw MessageQueueException.invalidParameter("The destination of a move task is a standard queue other "
                        + "than its source, not " + destination);
            }
            to = target.id();
        }
        if (maxPerSecond != null && (maxPerSecond < 1 || maxPerSecond > MessageMoveTask.MAX_PER_SECOND)) {
            throw MessageQueueException.invalidParameter("MaxNumberOfMessagesPerSecond must be 1 to "
                    + MessageMoveTask.MAX_PER_SECOND + ", not " + maxPerSecond);
        }
        return this.moves.start(UUID.randomUUID().toString(), from.id(), to, maxPerSecond)
            .orElseThrow(() -> new MessageQueueException(MessageQueueError.UNSUPPORTED_OPERATION, "A move task is "
                    + "running for " + source + " already: cancel it or wait for it to end"));
    }

    List<MessageMoveTask> list(String source, int limit) {
        if (limit < 1 || limit > 10) {
            throw MessageQueueException.invalidParameter("MaxResults must be 1 to 10, not " + limit);
        }
        return this.moves.list(existing(source, "source").id(), limit);
    }

    MessageMoveTask cancel(String handle) {
        MessageMoveTask task = find(handle);
        if (!this.moves.cancel(handle)) {
            throw new MessageQueueException(MessageQueueError.UNSUPPORTED_OPERATION, "The move task is "
                    + find(handle).status() + ": only a running task can be cancelled");
        }
        log.info("Message move task {} from {} cancelled after {} messages", handle, task.source(), find(handle).moved());
        return find(handle);
    }

    private MessageMoveTask find(String handle) {
        return this.moves.find(handle == null ? "" : handle).orElseThrow(() -> new MessageQueueException(
                MessageQueueError.RESOURCE_NOT_FOUND, "No move task has the handle " + handle));
    }

    private MessageQueueInfo existing(String name, String role) {
        try {
            return this.catalog.getQueue(name);
        }
        catch (MessageQueueException ex) {
            if (ex.error() == MessageQueueError.QUEUE_DOES_NOT_EXIST) {
                throw new MessageQueueException(MessageQueueError.RESOURCE_NOT_FOUND, "The " + role + " queue " + name
                        + " does not exist");
            }
            throw ex;
        }
    }

    /** Steps every running task once (those another node steps now are skipped). */
    void step() {
        for (long id : this.moves.running()) {
            this.moves.step(id, task -> {
                if (task.destinationGone()) {
                    return new Advance(0, Status.FAILED, "The destination queue was deleted");
                }
                int batch = task.maxPerSecond() == null ? MessageMoveTask.MAX_PER_SECOND : task.maxPerSecond();
                MessageStore catalog = this.shards.main().store();
                List<Long> existing = catalog.listQueues("", "", Integer.MAX_VALUE).stream().map(MessageQueueInfo::id)
                    .toList();
                int moved = 0;
                long left = 0;
                long unmovable = 0;
                for (MessageShards.Shard shard : this.shards.rotation()) {
                    MessageStore messages = shard.store();
                    if (moved < batch) {
                        moved += messages.redrive(task.sourceQueueId(), task.destinationQueueId(), existing, batch - moved);
                    }
                    long here = messages.counts(task.sourceQueueId()).visible();
                    left += here;
                    unmovable += moved < batch && here > 0
                            ? messages.unmovable(task.sourceQueueId(), task.destinationQueueId(), existing) : 0;
                }
                if (left == 0) {
                    return new Advance(moved, Status.COMPLETED, null);
                }
                if (unmovable > 0 && unmovable >= left) {
                    return new Advance(moved, Status.FAILED, unmovable + " messages have no queue to go back to (sent "
                            + "to the dead-letter queue directly, dead-lettered before their source was recorded, or "
                            + "their source queue was deleted): start a task with a destination");
                }
                return new Advance(moved, Status.RUNNING, null);
            });
        }
    }
}
