package io.pgqueue.message;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.pgqueue.internal.message.MessageEngine;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fair queues: a standard queue's messages sent with a message group are served group by group in
 * turn, so a group's backlog does not hold back the messages of other groups, while each group's
 * messages keep their order; messages without a group, and messages visible again after a
 * receive, come first.
 */
class FairMessageQueueTests {

    @RegisterExtension
    static final TestMessageEngines engine = new TestMessageEngines(TestQueue.perClass());

    static MessageEngine messages() {
        return engine.messages();
    }

    @BeforeEach
    void createQueue() {
        messages().createQueue("tenants", MessageQueueAttributes.defaults(), Map.of());
    }

    private static void send(String group, int from, int count) {
        List<BatchEntry<OutgoingMessage>> batch = new ArrayList<>();
        for (int i = from; i < from + count; i++) {
            OutgoingMessage message = OutgoingMessage.of(group + " " + i);
            batch.add(new BatchEntry<>("m" + i, group == null ? message : message.withGroupId(group)));
            if (batch.size() == 10) {
                messages().sendBatch("tenants", batch);
                batch.clear();
            }
        }
        if (!batch.isEmpty()) {
            messages().sendBatch("tenants", batch);
        }
    }

    private static List<String> receive(int max) {
        return messages().receive("tenants", ReceiveRequest.of(max).withWaitTime(Duration.ZERO)
            .withVisibilityTimeout(Duration.ofMinutes(5))).stream().map(ReceivedMessage::body).toList();
    }

    @Test
    void aGroupsBacklogDoesNotHoldBackTheOtherGroups() {
        send("noisy", 0, 500);
        send("quiet-a", 0, 2);
        send("quiet-b", 0, 2);

        List<String> first = receive(10);

        assertThat(first).contains("quiet-a 0", "quiet-a 1", "quiet-b 0", "quiet-b 1")
            .filteredOn(body -> body.startsWith("noisy")).containsExactly("noisy 0", "noisy 1", "noisy 2", "noisy 3",
                    "noisy 4", "noisy 5");
        // A quiet group that sends again, with the backlog still there, is served next again.
        send("quiet-a", 2, 1);
        assertThat(receive(3)).contains("quiet-a 2");
    }

    @Test
    void eachGroupKeepsItsOrderAndTheGroupsTakeTurns() {
        send("a", 0, 30);
        send("b", 0, 10);
        send("c", 0, 20);

        Map<String, List<Integer>> byGroup = new LinkedHashMap<>();
        List<String> order = new ArrayList<>();
        for (List<String> batch = receive(10); !batch.isEmpty(); batch = receive(10)) {
            for (String body : batch) {
                String[] parts = body.split(" ");
                byGroup.computeIfAbsent(parts[0], any -> new ArrayList<>()).add(Integer.parseInt(parts[1]));
                order.add(parts[0]);
            }
        }

        assertThat(byGroup.get("a")).hasSize(30).isSorted();
        assertThat(byGroup.get("b")).hasSize(10).isSorted();
        assertThat(byGroup.get("c")).hasSize(20).isSorted();
        // The first three receives of ten are ten turns of the three groups: b is done by then, not last.
        assertThat(order.subList(0, 30)).filteredOn("b"::equals).hasSize(10);
    }

    @Test
    void messagesWithoutAGroupAndMessagesVisibleAgainComeFirst() {
        send("noisy", 0, 50);
        List<ReceivedMessage> taken = messages().receive("tenants", ReceiveRequest.of(2).withWaitTime(Duration.ZERO)
            .withVisibilityTimeout(Duration.ofMinutes(5)));
        taken.forEach(message -> messages().changeVisibility("tenants", message.receiptHandle(), Duration.ZERO));
        send(null, 0, 1);

        assertThat(receive(3)).containsExactlyInAnyOrder("noisy 0", "noisy 1", "null 0");
        assertThat(receive(10)).first().isEqualTo("noisy 2");
        assertThat(messages().counts("tenants").visible()).isEqualTo(38);
    }
}
