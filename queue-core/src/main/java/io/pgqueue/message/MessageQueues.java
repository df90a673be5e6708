package io.pgqueue.message;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Message queues with the model of Amazon SQS, on the queue's database: consumers pull messages,
 * a received message stays invisible for a visibility timeout and is deleted with the receipt
 * handle of that receive, or becomes visible again. Standard queues deliver in roughly the order
 * sent to competing consumers; FIFO queues (names ending in {@code .fifo}) deliver each message
 * group in order, one receive of a group at a time, and send a deduplication id only once in five
 * minutes. A redrive policy moves messages received too often to a dead-letter queue.
 * <p>
 * Every send is committed before the call returns. Outside a transaction, concurrent sends (and
 * deletes) are written together in one transaction (group commit); inside a Spring transaction on
 * the queue's DataSource they join it, and receivers are woken when it commits. A receive that
 * finds no message waits up to its wait time without holding a thread ({@link #receiveAsync}),
 * woken by the NOTIFY of a send on any node.
 * <p>
 * {@link io.pgqueue.PgQueue#messages()} hands them out; they start listening for sends when first used
 * and stop with the queue.
 */
public interface MessageQueues {

    /** @return the latest periodic count of every queue's messages, empty before the first */
    java.util.Optional<CountedQueues> latestCounts();

    /**
     * Tells how FIFO queues deduplicate: per queue (a deduplication id sent within five minutes is a
     * duplicate whatever its group), or, on a sharded installation, per message group, as SQS's
     * high-throughput FIFO queues do ({@code DeduplicationScope=messageGroup}): a group's messages
     * live on the shard of its partition, and its duplicates meet there.
     * @return whether FIFO deduplication ids are kept per message group
     */
    boolean deduplicatesPerGroup();

    /**
     * Checks a queue's name and tags as {@link #createQueue} does, writing nothing: for callers that
     * check a set of queues before creating any.
     * @param name the queue's name
     * @param tags its tags
     * @throws MessageQueueException {@link MessageQueueError#INVALID_PARAMETER_VALUE} for a name or tag that is not valid
     */
    void check(String name, Map<String, String> tags);

    /**
     * Creates a queue, or returns the one of that name if its settings are the same.
     * @param name the name: 1 to 80 letters, digits, '-' and '_'; a FIFO queue's ends in {@code .fifo}
     * @param attributes its settings
     * @param tags its tags
     * @return the queue
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_NAME_EXISTS} when a queue of that name
     * has other settings, or when a setting is not valid
     */
    MessageQueueInfo createQueue(String name, MessageQueueAttributes attributes, Map<String, String> tags);

    /**
     * @param name a queue's name
     * @return the queue, as stored now
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST}
     */
    MessageQueueInfo getQueue(String name);

    /**
     * Lists queues by name.
     * @param prefix what their names start with ({@code ""} for all)
     * @param after only names after this one ({@code ""} from the start), for paging
     * @param limit the most to list, 1 to 1,000
     * @return the queues
     * @throws MessageQueueException {@link MessageQueueError#INVALID_PARAMETER_VALUE} for a limit outside 1 to 1,000
     */
    List<MessageQueueInfo> listQueues(String prefix, String after, int limit);

    /**
     * @param name a dead-letter queue's name
     * @return the queues whose redrive policy names it
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     */
    List<MessageQueueInfo> deadLetterSourceQueues(String name);

    /**
     * Changes a queue's settings; receives and sends on every node follow within a second.
     * @param name the queue's name
     * @param attributes its new settings
     * @return the queue
     * @throws MessageQueueException when the attributes are not valid; nothing is written
     */
    MessageQueueInfo setAttributes(String name, MessageQueueAttributes attributes);

    /**
     * Adds or replaces tags of a queue.
     * @param name the queue's name
     * @param tags the tags to set
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     * @throws MessageQueueException {@link MessageQueueError#INVALID_PARAMETER_VALUE} past 50 tags
     */
    void tagQueue(String name, Map<String, String> tags);

    /**
     * Removes tags of a queue.
     * @param name the queue's name
     * @param keys the tags to remove
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     */
    void untagQueue(String name, Set<String> keys);

    /**
     * Deletes a queue and its messages; receives waiting on it end with none.
     * @param name the queue's name
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     */
    void deleteQueue(String name);

    /**
     * Deletes every message of a queue.
     * @param name the queue's name
     * @return the messages deleted
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     */
    int purge(String name);

    /** @return the messages of every queue, counted by the database now, by queue name */
    Map<String, MessageQueueCounts> counts();

    /**
     * Reads a queue's oldest messages without receiving them: no receipt handle is issued, no
     * visibility or receive count changes (what an operator's console shows).
     * @param name the queue
     * @param limit the most messages, 1 to 100
     * @return the messages, oldest sent first, in whatever state (visible, in flight, delayed)
     * @throws MessageQueueException {@code QueueDoesNotExist} for an unknown queue
     * @throws IllegalArgumentException if the limit is out of range
     */
    List<PeekedMessage> peek(String name, int limit);

    /**
     * Moves the visible messages of a dead-letter queue back to a queue — its source, typically —
     * oldest sent first, in batches of 500, each in its own transaction: they arrive there visible
     * now, with a receive count of 0, keeping their message ids, bodies, attributes and send times.
     * Messages in flight on the dead-letter queue stay. Between two FIFO queues it moves group by
     * group: a group's messages join the end of the same group in the target, in their order, and a
     * group with a message in flight (on the dead-letter queue) stays whole.
     * @param deadLetterQueue the queue the messages leave
     * @param target the queue they join
     * @param max the most messages to move, at least 1
     * @return how many moved
     * @throws MessageQueueException {@code QueueDoesNotExist} for an unknown queue; {@code InvalidParameterValue}
     * if one is a FIFO queue and the other is not, they are the same queue, or {@code max} is below 1
     */
    int redrive(String deadLetterQueue, String target, int max);

    /**
     * Starts a task that moves a dead-letter queue's messages back at a rate (Amazon SQS's
     * {@code StartMessageMoveTask}): every second, on whichever node's sweeper takes it, up to
     * {@code maxPerSecond} of its visible messages, oldest sent first, join the destination, or each
     * the queue it was dead-lettered from, as new arrivals. The task completes when the queue holds
     * no visible message (messages in flight there stay), and fails when the messages left have no
     * queue to go to. Standard queues only.
     * @param source the dead-letter queue (a queue's redrive policy names it)
     * @param destination the queue the messages join, or {@code null} for each message's source queue
     * @param maxPerSecond the most messages a second, 1 to 500, or {@code null} for 500
     * @return the task, running
     * @throws MessageQueueException {@code ResourceNotFoundException} for a queue that does not exist;
     * {@code InvalidParameterValue} for a source no redrive policy names, a destination that is the
     * source or a FIFO queue, or a rate out of range; {@code UnsupportedOperation} for a FIFO source, or
     * while a task runs for the source
     */
    MessageMoveTask startMoveTask(String source, String destination, Integer maxPerSecond);

    /**
     * @param source a dead-letter queue
     * @param limit the most tasks, 1 to 10
     * @return its move tasks, newest first
     * @throws MessageQueueException {@code ResourceNotFoundException} for a queue that does not exist
     */
    List<MessageMoveTask> moveTasks(String source, int limit);

    /**
     * Cancels a running move task; the messages it moved stay moved.
     * @param handle the task's handle
     * @return the task, cancelled
     * @throws MessageQueueException {@code ResourceNotFoundException} for an unknown handle;
     * {@code UnsupportedOperation} for a task that is not running
     */
    MessageMoveTask cancelMoveTask(String handle);

    /**
     * @param name a queue's name
     * @return its messages, counted by the database now
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     */
    MessageQueueCounts counts(String name);

    /**
     * Returns a queue as this node last read it, at most a second ago (settings changed on another
     * node are followed within that second); {@link #getQueue} reads it now.
     * @param name the queue's name
     * @return the queue
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST}
     */
    MessageQueueInfo queue(String name);

    /**
     * Sends a message; it is committed when the call returns (or, inside a transaction, with it).
     * @param queueName the queue's name
     * @param message the message
     * @return the message id and digests
     * @throws MessageQueueException when the message is not valid for the queue; nothing is written
     */
    SentMessage send(String queueName, OutgoingMessage message);

    /**
     * Sends up to ten messages in one transaction. An entry that is not valid fails alone; the
     * others are sent.
     * @param queueName the queue's name
     * @param entries the messages, each with an id unique in the batch
     * @return per entry, the message sent or why not
     * @throws MessageQueueException when the batch itself is not valid (empty, too many entries,
     * ids repeated or malformed, too large together); nothing is written
     */
    BatchResult<SentMessage> sendBatch(String queueName, List<BatchEntry<OutgoingMessage>> entries);

    /**
     * Receives messages, waiting up to the wait time when none is visible; blocks the calling thread.
     * @param queueName the queue's name
     * @param request how many, how long they stay hidden, how long to wait
     * @return the messages, possibly none
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     * @throws MessageQueueException when the request is not valid
     */
    List<ReceivedMessage> receive(String queueName, ReceiveRequest request);

    /**
     * Receives messages. When none is visible and the wait time is above zero, the future completes
     * when messages come (a send on any node wakes it, as does the end of a visibility timeout or
     * delay) or with none at the end of the wait, without holding a thread meanwhile.
     * @param queueName the queue's name
     * @param request how many, how long they stay hidden, how long to wait
     * @return the messages, possibly none
     * @throws MessageQueueException when the request is not valid
     */
    CompletableFuture<List<ReceivedMessage>> receiveAsync(String queueName, ReceiveRequest request);

    /**
     * Deletes a received message. A message already deleted is no error; a handle of a receive that
     * was followed by another (the visibility timeout ran out and another consumer received the
     * message) is refused.
     * @param queueName the queue's name
     * @param receiptHandle the handle of the latest receive
     * @throws MessageQueueException {@link MessageQueueError#RECEIPT_HANDLE_INVALID} for a malformed or stale handle
     */
    void delete(String queueName, String receiptHandle);

    /**
     * Deletes up to ten received messages in one transaction.
     * @param queueName the queue's name
     * @param entries the receipt handles, each with an id unique in the batch
     * @return per entry, done or why not
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     * @throws MessageQueueException when the batch itself is not valid (empty, too many entries, repeated ids)
     */
    BatchResult<Boolean> deleteBatch(String queueName, List<BatchEntry<String>> entries);

    /**
     * Changes how long a received message stays hidden, counted from now; zero makes it visible at once.
     * @param queueName the queue's name
     * @param receiptHandle the handle of the latest receive
     * @param timeout the new visibility timeout, 0 to 12 hours
     * @throws MessageQueueException {@link MessageQueueError#RECEIPT_HANDLE_INVALID} for a malformed or stale
     * handle, {@link MessageQueueError#MESSAGE_NOT_IN_FLIGHT} when the message is visible
     */
    void changeVisibility(String queueName, String receiptHandle, Duration timeout);

    /**
     * Changes the visibility timeout of up to ten received messages in one transaction.
     * @param queueName the queue's name
     * @param entries the changes, each with an id unique in the batch
     * @return per entry, done or why not
     * @throws MessageQueueException {@link MessageQueueError#QUEUE_DOES_NOT_EXIST} when there is no such queue
     * @throws MessageQueueException when the batch itself is not valid (empty, too many entries, repeated ids)
     */
    BatchResult<Boolean> changeVisibilityBatch(String queueName, List<BatchEntry<VisibilityChange>> entries);
}
