package io.pgqueue.internal.message;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

import io.pgqueue.internal.store.MessageStore.Receipt;
import io.pgqueue.message.MessageQueueError;
import io.pgqueue.message.MessageQueueException;
import io.pgqueue.message.MessageQueueInfo;

/**
 * Receipt handles: the queue, the message, the random receipt of one receive and the FIFO group,
 * as opaque URL-safe text. A handle deletes its message only while its receipt is the latest, so a
 * handle of an earlier receive is refused like an expired lease.
 */
public final class ReceiptHandles {

    private static final String VERSION = "p1";

    private ReceiptHandles() {
    }

    public static String encode(Receipt receipt) {
        String text = VERSION + ":" + receipt.queueId() + ":" + receipt.id() + ":" + receipt.receipt()
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
            String[] parts = new String(Base64.getUrlDecoder().decode(handle), StandardCharsets.UTF_8).split(":", 5);
            if (parts.length >= 4 && parts[0].equals(VERSION)) {
                Receipt receipt = new Receipt(Long.parseLong(parts[1]), Long.parseLong(parts[2]),
                        Long.parseLong(parts[3]), parts.length == 5 ? parts[4] : null);
                if (receipt.queueId() == queue.id()) {
                    return receipt;
                }
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
