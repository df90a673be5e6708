package io.pgqueue.sample.web;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.pgqueue.JobStep;
import io.pgqueue.QueueClient;
import io.pgqueue.SignalResult;
import io.pgqueue.sample.tasks.OrderFlowTask;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * The shop API: an order starts its durable flow ({@link OrderFlowTask}) in the transaction that
 * stores it; the warehouse says it shipped with a signal to that flow.
 */
@RestController
public class OrderController {

    private final JdbcTemplate jdbc;

    private final QueueClient queue;

    public OrderController(JdbcTemplate jdbc, QueueClient queue) {
        this.jdbc = jdbc;
        this.queue = queue;
    }

    /** Places an order: stores it and enqueues its flow, both or neither. */
    @PostMapping("/orders")
    @ResponseStatus(HttpStatus.CREATED)
    @Transactional
    public Map<String, Object> place(@RequestBody NewOrder order) {
        if (order.owner() == null || order.owner().isBlank() || order.amountCents() <= 0) {
            throw new IllegalArgumentException("An order needs an owner and an amount above 0 cents");
        }
        Long orderId = this.jdbc.queryForObject("INSERT INTO shop_order (owner, amount_cents) VALUES (?, ?) RETURNING id",
                Long.class, order.owner(), order.amountCents());
        long jobId = this.queue.enqueue(OrderFlowTask.class, new OrderFlowTask.Order(orderId)).jobId();
        this.jdbc.update("UPDATE shop_order SET job_id = ? WHERE id = ?", jobId, orderId);
        return Map.of("orderId", orderId, "jobId", jobId);
    }

    /** The warehouse shipped the order: its flow goes on (or, if it had not reached the wait yet, will not wait). */
    @PostMapping("/orders/{orderId}/shipped")
    public ResponseEntity<Map<String, Object>> shipped(@PathVariable long orderId, @RequestBody Shipment shipment) {
        Long jobId = jobOf(orderId);
        if (jobId == null) {
            return ResponseEntity.notFound().build();
        }
        SignalResult result = this.queue.signal(jobId, "shipped", shipment.carrier());
        HttpStatus status = switch (result) {
            case WOKEN, DELIVERED, STORED -> HttpStatus.OK;
            case NOT_FOUND -> HttpStatus.NOT_FOUND;
            case DUPLICATE, TOO_LATE, FINISHED -> HttpStatus.CONFLICT;
        };
        return ResponseEntity.status(status).body(Map.of("orderId", orderId, "signal", result.name()));
    }

    /** An order with the steps its flow recorded: what it did, and what it waits for. */
    @GetMapping("/orders/{orderId}")
    public ResponseEntity<Map<String, Object>> order(@PathVariable long orderId) {
        List<Map<String, Object>> rows = this.jdbc.queryForList("SELECT id, owner, amount_cents, job_id, payment_id, "
                + "carrier, shipped_at, followed_up_at FROM shop_order WHERE id = ?", orderId);
        if (rows.isEmpty()) {
            return ResponseEntity.notFound().build();
        }
        Map<String, Object> body = new LinkedHashMap<>(rows.get(0));
        long jobId = ((Number) rows.get(0).get("job_id")).longValue();
        body.put("steps", this.queue.steps(jobId).orElse(List.of()).stream().map(OrderController::describe).toList());
        return ResponseEntity.ok(body);
    }

    private static Map<String, Object> describe(JobStep step) {
        Map<String, Object> described = new LinkedHashMap<>();
        described.put("name", step.name());
        described.put("kind", step.kind());
        if (step.signal() != null) {
            described.put("signal", step.signal());
        }
        if (step.wakeAt() != null) {
            described.put("until", step.wakeAt());
        }
        if (step.result() != null) {
            described.put("result", step.result());
        }
        described.put("finishedAt", step.finishedAt());
        return described;
    }

    private Long jobOf(long orderId) {
        return this.jdbc.query("SELECT job_id FROM shop_order WHERE id = ?", rs -> rs.next() ? rs.getLong(1) : null,
                orderId);
    }

    /**
     * An order.
     * @param owner who orders
     * @param amountCents what it costs
     */
    public record NewOrder(String owner, long amountCents) {
    }

    /**
     * A shipment.
     * @param carrier who carries it
     */
    public record Shipment(String carrier) {
    }
}
