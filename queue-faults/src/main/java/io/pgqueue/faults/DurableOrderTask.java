package io.pgqueue.faults;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import io.pgqueue.worker.WorkerSettings;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * A durable order flow, as the sample application's: charge, spawn an invoice as a child job and
 * await it, wait for the signal "shipped", sleep, follow up. Each step's work records its begin and its end in a file of the node's own,
 * {@code <node>.steps} in {@code faults.record-dir} (outside the database, so that work done just
 * before a kill -9 is on record), and works for the order's step time in between:
 * {@code B <job> <step> <epoch millis>} and {@code D <job> <step> <epoch millis>}. The scenario
 * compares them with the steps the database recorded.
 */
@Component
@QueueTask(name = "durable-order", concurrency = 4, maxAttempts = 50)
public class DurableOrderTask implements TaskHandler<DurableOrderTask.Order> {

    private final ObjectProvider<WorkerSettings> settings;

    private final Path directory;

    private RecordFile file;

    DurableOrderTask(ObjectProvider<WorkerSettings> settings, @Value("${faults.record-dir}") Path directory) {
        this.settings = settings;
        this.directory = directory;
    }

    @Override
    public void handle(Order order, TaskContext context) {
        String receipt = context.step("charge", String.class, () -> work(context, "charge", order));
        long invoice = context.spawn("invoice", "durable-invoice", receipt);
        String invoiced = context.awaitChild(invoice, String.class);
        Optional<String> carrier = context.awaitSignal("shipped", String.class, Duration.ofMinutes(10));
        context.sleep("cool-off", Duration.ofMillis(order.sleepMillis()));
        context.step("follow-up", () -> work(context, "follow-up " + carrier.orElse("none") + " " + invoiced, order));
    }

    private String work(TaskContext context, String step, Order order) throws InterruptedException {
        String name = step.split(" ", 2)[0];
        append("B " + context.jobId() + " " + name + " " + System.currentTimeMillis());
        Thread.sleep(order.stepMillis());
        append("D " + context.jobId() + " " + name + " " + System.currentTimeMillis());
        return context.stepKey(name);
    }

    private synchronized void append(String line) {
        if (this.file == null) {
            this.file = new RecordFile(this.directory.resolve(this.settings.getObject().nodeId() + ".steps"));
        }
        this.file.append(line);
    }

    /**
     * One order.
     * @param stepMillis how long each step's work takes
     * @param sleepMillis how long the flow sleeps after the shipment
     */
    public record Order(int stepMillis, int sleepMillis) {
    }
}
