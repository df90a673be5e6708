package io.pgqueue.sample;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.pgqueue.JobStep;
import io.pgqueue.QueueClient;
import io.pgqueue.sample.tasks.SendPushTask;
import io.pgqueue.sample.web.OrderController;
import io.pgqueue.test.AutoConfigurePgQueueTest;
import io.pgqueue.test.QueueTester;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The durable order flow with the test kit: the order is charged once, waits for the warehouse's
 * signal, sleeps until the follow-up is due on the queue's clock, and follows up once.
 */
@SpringBootTest(properties = { "sample.embedded-postgres.enabled=false", "sample.orders.follow-up-delay=1h" })
@AutoConfigurePgQueueTest
class OrderFlowTests {

    @Autowired
    OrderController orders;

    @Autowired
    QueueTester queue;

    @Autowired
    QueueClient client;

    @Autowired
    JdbcTemplate jdbc;

    @Test
    void anOrderIsChargedOnceWaitsForItsShipmentSleepsAndIsFollowedUpOnce() {
        Map<String, Object> placed = this.orders.place(new OrderController.NewOrder("ann", 4200));
        long orderId = ((Number) placed.get("orderId")).longValue();
        long jobId = ((Number) placed.get("jobId")).longValue();

        assertThat(this.queue.drain("order-flow").snoozed()).as("charged, waiting for the shipment").isEqualTo(1);
        assertThat(steps(jobId)).containsExactly("charge STEP", "signal:shipped SIGNAL WAITING");
        assertThat(this.queue.drain("order-flow").ran()).as("nothing to do before the shipment").isZero();

        assertThat(this.orders.shipped(orderId, new OrderController.Shipment("ups")).getBody())
            .containsEntry("signal", "WOKEN");
        assertThat(this.queue.drain("order-flow").snoozed()).as("shipped, asleep until the follow-up").isEqualTo(1);
        this.queue.advance(Duration.ofHours(1));
        assertThat(this.queue.drain("order-flow").completed()).isEqualTo(1);

        assertThat(this.jdbc.queryForObject("SELECT count(*) FROM payment WHERE order_id = ?", Long.class, orderId))
            .isOne();
        assertThat(this.jdbc.queryForObject("SELECT carrier || ' ' || (payment_id IS NOT NULL) || ' ' "
                + "|| (followed_up_at IS NOT NULL) FROM shop_order WHERE id = ?", String.class, orderId))
            .isEqualTo("ups true true");
        this.queue.assertEnqueued("send-push", new SendPushTask.Push("ann", "How was your order?"));
        assertThat(steps(jobId)).containsExactly("charge STEP", "signal:shipped SIGNAL RECEIVED", "mark-shipped STEP",
                "before-follow-up SLEEP", "follow-up STEP");
        assertThat(this.orders.shipped(orderId, new OrderController.Shipment("dhl")).getStatusCode())
            .isEqualTo(HttpStatus.CONFLICT);
        assertThat(this.orders.order(orderId).getBody()).containsKey("steps");
    }

    @Test
    void aShipmentBeforeTheFlowWaitsIsKeptAndTheFlowDoesNotWait() {
        Map<String, Object> placed = this.orders.place(new OrderController.NewOrder("bob", 990));
        long orderId = ((Number) placed.get("orderId")).longValue();

        assertThat(this.orders.shipped(orderId, new OrderController.Shipment("dhl")).getBody())
            .containsEntry("signal", "STORED");
        assertThat(this.queue.drain("order-flow").snoozed()).as("charged and shipped, asleep").isEqualTo(1);
        this.queue.advance(Duration.ofHours(1));

        assertThat(this.queue.drain("order-flow").completed()).isEqualTo(1);
        assertThat(this.jdbc.queryForObject("SELECT carrier FROM shop_order WHERE id = ?", String.class, orderId))
            .isEqualTo("dhl");
    }

    @Test
    void aBadOrderIsRefusedAndNothingIsWritten() {
        long before = this.jdbc.queryForObject("SELECT count(*) FROM shop_order", Long.class);
        assertThatThrownBy(() -> this.orders.place(new OrderController.NewOrder("ann", 0)))
            .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("amount above 0");
        assertThat(this.jdbc.queryForObject("SELECT count(*) FROM shop_order", Long.class)).isEqualTo(before);
        assertThat(this.orders.shipped(Long.MAX_VALUE, new OrderController.Shipment("ups")).getStatusCode())
            .isEqualTo(HttpStatus.NOT_FOUND);
    }

    private List<String> steps(long jobId) {
        return this.client.steps(jobId).orElseThrow().stream()
            .map(step -> step.name() + " " + step.kind() + (step.signal() == null ? "" : " " + step.signal()))
            .toList();
    }
}
