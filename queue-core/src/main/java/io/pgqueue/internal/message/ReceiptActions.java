package io.pgqueue.internal.message;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import io.pgqueue.internal.store.MessageStore.Receipt;
import io.pgqueue.internal.store.MessageStore.ReceiptOutcome;
import io.pgqueue.message.BatchEntry;
import io.pgqueue.message.BatchEntryFailure;
import io.pgqueue.message.BatchResult;
import io.pgqueue.message.MessageQueueAttributes;
import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueEvents;
import io.pgqueue.message.MessageQueueException;
import io.pgqueue.message.MessageQueueInfo;
import io.pgqueue.message.VisibilityChange;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * What {@link MessageEngine} does with a receipt handle: deletes (single ones outside a transaction
 * through the group commit) and visibility changes, one at a time or in batches whose entries
 * fail on their own, each on the shard of its message's partition.
 */
final class ReceiptActions {

    private final MessageShards shards;

    private final MessageQueueEvents events;

    private final Function<String, MessageQueueInfo> queues;

    ReceiptActions(MessageShards shards, MessageQueueEvents events, Function<String, MessageQueueInfo> queues) {
        this.shards = shards;
        this.events = events;
        this.queues = queues;
    }

    void delete(String queueName, String receiptHandle) {
        MessageQueueInfo queue = this.queues.apply(queueName);
        List<Receipt> receipt = List.of(ReceiptHandles.decode(receiptHandle, queue));
        boolean transaction = TransactionSynchronizationManager.isActualTransactionActive();
        ReceiptOutcome outcome = this.shards.byReceipt(receipt, (shard, indexes) -> transaction
                ? shard.store().delete(receipt) : List.of(this.shards.deletes(shard).write(receipt.get(0)))).get(0);
        check(outcome, receiptHandle, false);
        if (outcome == ReceiptOutcome.DONE) {
            this.events.deleted(queue.name(), 1);
        }
    }

    BatchResult<Boolean> deleteBatch(String queueName, List<BatchEntry<String>> entries) {
        MessageQueueInfo queue = this.queues.apply(queueName);
        BatchEntry.checkIds(entries.stream().map(BatchEntry::id).toList());
        return byReceipt(queue, entries, null);
    }

    void changeVisibility(String queueName, String receiptHandle, Duration timeout) {
        BatchResult<Boolean> result = changeVisibilityBatch(queueName,
                List.of(new BatchEntry<>("entry", new VisibilityChange(receiptHandle, timeout))));
        if (!result.failed().isEmpty()) {
            BatchEntryFailure failure = result.failed().get(0);
            throw new MessageQueueException(failure.error(), failure.message());
        }
    }

    BatchResult<Boolean> changeVisibilityBatch(String queueName, List<BatchEntry<VisibilityChange>> entries) {
        MessageQueueInfo queue = this.queues.apply(queueName);
        BatchEntry.checkIds(entries.stream().map(BatchEntry::id).toList());
        List<BatchEntry<String>> handles = new ArrayList<>();
        List<Integer> seconds = new ArrayList<>();
        List<BatchEntryFailure> failed = new ArrayList<>();
        for (BatchEntry<VisibilityChange> entry : entries) {
            try {
                if (entry.value().timeout() == null) {
                    throw new MessageQueueException(MessageQueueError.MISSING_PARAMETER,
                            "The request must contain the parameter VisibilityTimeout.");
                }
                seconds.add(MessageValidation.seconds(entry.value().timeout(), "VisibilityTimeout",
                        MessageQueueAttributes.MAX_VISIBILITY_TIMEOUT));
                handles.add(new BatchEntry<>(entry.id(), entry.value().receiptHandle()));
            }
            catch (MessageQueueException ex) {
                failed.add(new BatchEntryFailure(entry.id(), ex.error(), ex.getMessage()));
            }
        }
        BatchResult<Boolean> result = byReceipt(queue, handles, seconds);
        failed.addAll(result.failed());
        if (seconds.contains(0)) {
            // Every node listens on the main shard too.
            this.shards.main().store().announce(queue.id());
        }
        return new BatchResult<>(result.successful(), failed);
    }

    /**
     * Deletes the messages of a batch's receipt handles, or changes their visibility, on the shards
     * of their messages.
     * @param seconds per entry, the visibility timeout to set, or {@code null} to delete
     */
    private BatchResult<Boolean> byReceipt(MessageQueueInfo queue, List<BatchEntry<String>> entries, List<Integer> seconds) {
        boolean visibility = seconds != null;
        List<BatchEntryFailure> failed = new ArrayList<>();
        List<Integer> indexes = new ArrayList<>();
        List<Receipt> receipts = new ArrayList<>();
        for (int i = 0; i < entries.size(); i++) {
            BatchEntry<String> entry = entries.get(i);
            try {
                receipts.add(ReceiptHandles.decode(entry.value(), queue));
                indexes.add(i);
            }
            catch (MessageQueueException ex) {
                failed.add(new BatchEntryFailure(entry.id(), ex.error(), ex.getMessage()));
            }
        }
        Map<String, Boolean> successful = new LinkedHashMap<>();
        if (!receipts.isEmpty()) {
            List<ReceiptOutcome> outcomes = this.shards.byReceipt(receipts, (shard, picked) -> {
                List<Receipt> those = picked.stream().map(receipts::get).toList();
                return visibility ? shard.store().changeVisibility(those,
                        picked.stream().map(k -> seconds.get(indexes.get(k))).toList()) : shard.store().delete(those);
            });
            int deleted = 0;
            for (int i = 0; i < receipts.size(); i++) {
                BatchEntry<String> entry = entries.get(indexes.get(i));
                try {
                    check(outcomes.get(i), entry.value(), visibility);
                    successful.put(entry.id(), true);
                    deleted += outcomes.get(i) == ReceiptOutcome.DONE ? 1 : 0;
                }
                catch (MessageQueueException ex) {
                    failed.add(new BatchEntryFailure(entry.id(), ex.error(), ex.getMessage()));
                }
            }
            if (!visibility) {
                this.events.deleted(queue.name(), deleted);
            }
        }
        return new BatchResult<>(successful, failed);
    }

    private static void check(ReceiptOutcome outcome, String handle, boolean visibility) {
        switch (outcome) {
            case DONE -> {
            }
            case GONE -> {
                if (visibility) {
                    throw new MessageQueueException(MessageQueueError.RECEIPT_HANDLE_INVALID, "Value " + handle
                            + " for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not "
                            + "available for visibility timeout change.");
                }
            }
            case STALE -> throw new MessageQueueException(MessageQueueError.RECEIPT_HANDLE_INVALID, "The receipt "
                    + "handle has expired: the message was received again after its visibility timeout ran out.");
            case NOT_IN_FLIGHT -> throw new MessageQueueException(MessageQueueError.MESSAGE_NOT_IN_FLIGHT,
                    "Message is not in flight: its visibility timeout ran out.");
        }
    }
}
