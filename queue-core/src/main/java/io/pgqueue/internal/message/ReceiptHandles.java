package io.pgqueue.internal.message;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

import io.pgqueue.internal.store.MessageStore.Receipt;
import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;
import io.pgqueue.message.MessageQueueInfo;

/**
 * Receipt handles: the queue, the message's partition, the message, the random receipt of one
 * receive and the FIFO group, as opaque URL-safe text. A handle deletes its message only while its
 * receipt is the latest, so a handle of an earlier receive is refused like an expired lease. The
 * partition (not the shard) finds the message's shard, so a handle stays valid when its partition
 * moves. A message without a partition (unsharded, or on the main shard for good) gets a handle of
 * the earlier form, without one.
 */
public final class ReceiptHandles {

    private static final String VERSION = "p2";

    /** Handles without a partition, which earlier releases gave out. */
    private static final String UNPARTITIONED = "p1";

    private ReceiptHandles() {
    }

    /**
     * @param receipt a receipt
     * @return its handle
     */
    public static String encode(Receipt receipt) {
        // A message without a partition gets the earlier form, which nodes of the earlier release read too.
        String text = (receipt.partition() == null ? UNPARTITIONED : VERSION + ":" + receipt.partition()) + ":"
                + receipt.queueId() + ":" + receipt.id() + ":" + receipt.receipt()
                + (receipt.groupId() == null ? "" : ":" + receipt.groupId());
        return Base64.getUrlEncoder().withoutPadding().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * @param handle a receipt handle
     * @param queue the queue the call names
     * @return the receipt
     * @throws MessageQueueException when the handle is malformed or belongs to another queue
     */
    public static Receipt decode(String handle, MessageQueueInfo queue) {
        if (handle == null || handle.isEmpty()) {
            throw new MessageQueueException(MessageQueueError.MISSING_PARAMETER,
                    "The request must contain the parameter ReceiptHandle.");
        }
        try {
            String text = new String(Base64.getUrlDecoder().decode(handle), StandardCharsets.UTF_8);
            Receipt receipt = null;
            if (text.startsWith(VERSION + ":")) {
                String[] parts = text.split(":", 6);
                if (parts.length >= 5) {
                    receipt = new Receipt(Long.parseLong(parts[2]), Integer.valueOf(parts[1]), Long.parseLong(parts[3]),
                            Long.parseLong(parts[4]), parts.length == 6 ? parts[5] : null);
                }
            }
            else if (text.startsWith(UNPARTITIONED + ":")) {
                String[] parts = text.split(":", 5);
                if (parts.length >= 4) {
                    receipt = new Receipt(Long.parseLong(parts[1]), null, Long.parseLong(parts[2]),
                            Long.parseLong(parts[3]), parts.length == 5 ? parts[4] : null);
                }
            }
            if (receipt != null && receipt.queueId() == queue.id()) {
                return receipt;
            }
        }
        catch (IllegalArgumentException ex) {
            // reported below
        }
        throw new MessageQueueException(MessageQueueError.RECEIPT_HANDLE_INVALID,
                "The input receipt handle \"" + abbreviate(handle) + "\" is not a valid receipt handle of queue "
                        + queue.name() + ".");
    }

    private static String abbreviate(String handle) {
        return handle.length() <= 64 ? handle : handle.substring(0, 61) + "...";
    }
}
