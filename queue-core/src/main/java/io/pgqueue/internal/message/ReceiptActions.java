package io.pgqueue.internal.message;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;

import io.pgqueue.internal.enqueue.GroupCommitter;
import io.pgqueue.internal.store.MessageStore.Receipt;
import io.pgqueue.internal.store.MessageStore.ReceiptOutcome;
import io.pgqueue.internal.store.MessageStore;
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
 * fail on their own.
 */
final class ReceiptActions {

    private final MessageStore store;

    private final MessageQueueEvents events;

    private final GroupCommitter<Receipt, ReceiptOutcome> deletes;

    private final Function<String, MessageQueueInfo> queues;

    ReceiptActions(MessageStore store, MessageQueueEvents events, GroupCommitter<Receipt, ReceiptOutcome> deletes,
            Function<String, MessageQueueInfo> queues) {
        this.store = store;
        this.events = events;
        this.deletes = deletes;
        this.queues = queues;
    }

    void delete(String queueName, String receiptHandle) {
        MessageQueueInfo queue = this.queues.apply(queueName);
        Receipt receipt = ReceiptHandles.decode(receiptHandle, queue);
        ReceiptOutcome outcome = TransactionSynchronizationManager.isActualTransactionActive()
                ? this.store.delete(List.of(receipt)).get(0) : this.deletes.write(receipt);
        check(outcome, receiptHandle, false);
        if (outcome == ReceiptOutcome.DONE) {
            this.events.deleted(queue.name(), 1);
        }
    }

    BatchResult<Boolean> deleteBatch(String queueName, List<BatchEntry<String>> entries) {
        MessageQueueInfo queue = this.queues.apply(queueName);
        BatchEntry.checkIds(entries.stream().map(BatchEntry::id).toList());
        return byReceipt(queue, entries, (receipts, indexes) -> this.store.delete(receipts), false);
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
        BatchResult<Boolean> result = byReceipt(queue, handles,
                (receipts, indexes) -> this.store.changeVisibility(receipts, indexes.stream().map(seconds::get).toList()),
                true);
        failed.addAll(result.failed());
        if (seconds.contains(0)) {
            this.store.announce(queue.id());
        }
        return new BatchResult<>(result.successful(), failed);
    }

    private BatchResult<Boolean> byReceipt(MessageQueueInfo queue, List<BatchEntry<String>> entries,
            BiFunction<List<Receipt>, List<Integer>, List<ReceiptOutcome>> apply, boolean visibility) {
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
            List<ReceiptOutcome> outcomes = apply.apply(receipts, indexes);
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
