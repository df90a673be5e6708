package io.pgqueue.faults;

import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;

/**
 * The child job of a {@link DurableOrderTask} flow: makes an invoice of a receipt and records it as
 * its result, which its parent awaits.
 */
@QueueTask(name = "durable-invoice", concurrency = 4, maxAttempts = 50)
public class DurableInvoiceTask implements TaskHandler<String> {

    @Override
    public void handle(String receipt, TaskContext context) throws InterruptedException {
        Thread.sleep(50);
        context.recordResult("invoice of " + receipt);
    }
}
