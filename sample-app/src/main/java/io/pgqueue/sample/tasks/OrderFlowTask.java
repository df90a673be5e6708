package io.pgqueue.sample.tasks;

import java.time.Duration;
import java.util.Optional;

import io.pgqueue.QueueClient;
import io.pgqueue.QueueTask;
import io.pgqueue.StepRetry;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import io.pgqueue.retry.RetryPolicy;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowCallbackHandler;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * An order's life as one durable handler (docs/durable.md): charge the customer, wait — holding no
 * thread — for the warehouse's "shipped" signal (POST /orders/{id}/shipped), sleep until it is time
 * to ask for a review, then follow up with a push. Each step runs once however often the job runs
 * (a crash, a retry, the end of a wait): a recorded step returns its value; the charge
 * carries the step's key as its idempotency key, and the follow-up marks the order in the transaction
 * that enqueues the push, so the one run a crash could repeat does nothing twice.
 */
@QueueTask(name = "order-flow", maxAttempts = 10)
public class OrderFlowTask implements TaskHandler<OrderFlowTask.Order> {

    /**
     * An order to see through.
     * @param orderId the order
     */
    public record Order(long orderId) {
    }

    private final JdbcTemplate jdbc;

    private final QueueClient queue;

    private final TransactionTemplate transactions;

    private final Duration followUpDelay;

    public OrderFlowTask(JdbcTemplate jdbc, QueueClient queue, PlatformTransactionManager transactions,
            @Value("${sample.orders.follow-up-delay:1m}") Duration followUpDelay) {
        this.jdbc = jdbc;
        this.queue = queue;
        this.transactions = new TransactionTemplate(transactions);
        this.followUpDelay = followUpDelay;
    }

    @Override
    public void handle(Order order, TaskContext context) {
        long paymentId = context.step("charge", StepRetry.of(3, RetryPolicy.fixed(Duration.ofMillis(200))), Long.class,
                () -> charge(order.orderId(), context.stepKey("charge")));
        Optional<String> carrier = context.awaitSignal("shipped", String.class, Duration.ofDays(14));
        context.step("mark-shipped", () -> this.jdbc.update("UPDATE shop_order SET payment_id = ?, carrier = ?, "
                + "shipped_at = now() WHERE id = ?", paymentId, carrier.orElse("not shipped"), order.orderId()));
        context.sleep("before-follow-up", this.followUpDelay);
        context.step("follow-up", () -> this.transactions.executeWithoutResult(status -> {
            // Marked and enqueued in one transaction: a run of the step that a crash repeats finds the mark.
            this.jdbc.query("UPDATE shop_order SET followed_up_at = now() WHERE id = ? AND followed_up_at IS NULL "
                    + "RETURNING owner", (RowCallbackHandler) rs -> this.queue.enqueue(SendPushTask.class,
                            new SendPushTask.Push(rs.getString("owner"), "How was your order?")), order.orderId());
        }));
    }

    /** Takes the payment, once per key: a second call with the key returns the first payment. */
    private long charge(long orderId, String idempotencyKey) {
        return this.jdbc.queryForObject("INSERT INTO payment (order_id, idempotency_key, amount_cents) "
                + "SELECT id, ?, amount_cents FROM shop_order WHERE id = ? "
                + "ON CONFLICT (idempotency_key) DO UPDATE SET idempotency_key = EXCLUDED.idempotency_key RETURNING id",
                Long.class, idempotencyKey, orderId);
    }
}
