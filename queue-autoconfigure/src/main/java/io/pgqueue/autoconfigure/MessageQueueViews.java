package io.pgqueue.autoconfigure;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.pgqueue.message.MessageQueueCounts;
import io.pgqueue.message.MessageQueueHistory;
import io.pgqueue.message.MessageQueueInfo;
import io.pgqueue.message.MessageQueues;
import io.pgqueue.message.PeekedMessage;
import io.pgqueue.message.RedrivePolicy;
import org.jspecify.annotations.Nullable;

/**
 * A message queue as the console and the {@code queues} endpoint describe it: its counts, rates,
 * dead-letter queues, peeked messages and history, in the same JSON shape for both.
 */
public final class MessageQueueViews {

    /** The window the rates are averaged over. */
    public static final Duration RATE_WINDOW = Duration.ofMinutes(5);

    private MessageQueueViews() {
    }

    /**
     * @param messages the message queues
     * @param info the queue
     * @param counts its counts, or {@code null} when it was not counted yet
     * @param recent its messages sent, received and deleted over the last {@link #RATE_WINDOW}
     * ({@code QueueAdmin.messageCounts}), or {@code null} for none
     * @return {@code name}, {@code fifo}, {@code visible}, {@code inFlight}, {@code delayed},
     * {@code oldestAgeSeconds}, {@code deadLetterQueue}, {@code maxReceiveCount},
     * {@code deadLetterSources}, {@code visibilityTimeoutSeconds}, {@code retentionSeconds} and the
     * rates {@code sentPerMinute}, {@code receivedPerMinute}, {@code deletedPerMinute}
     */
    public static Map<String, Object> summary(MessageQueues messages, MessageQueueInfo info,
            @Nullable MessageQueueCounts counts, @Nullable Map<String, Long> recent) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("name", info.name());
        body.put("fifo", info.fifo());
        body.put("visible", counts == null ? 0 : counts.visible());
        body.put("inFlight", counts == null ? 0 : counts.inFlight());
        body.put("delayed", counts == null ? 0 : counts.delayed());
        body.put("oldestAgeSeconds", counts == null ? 0 : counts.oldestAge().toSeconds());
        RedrivePolicy redrive = info.attributes().redrivePolicy();
        body.put("deadLetterQueue", redrive == null ? null : redrive.deadLetterQueue());
        body.put("maxReceiveCount", redrive == null ? null : redrive.maxReceiveCount());
        body.put("deadLetterSources", messages.deadLetterSourceQueues(info.name()).stream()
            .map(MessageQueueInfo::name).toList());
        body.put("visibilityTimeoutSeconds", info.attributes().visibilityTimeout().toSeconds());
        body.put("retentionSeconds", info.attributes().retention().toSeconds());
        double minutes = RATE_WINDOW.toMinutes();
        body.put("sentPerMinute", recent == null ? 0.0 : recent.get("sent") / minutes);
        body.put("receivedPerMinute", recent == null ? 0.0 : recent.get("received") / minutes);
        body.put("deletedPerMinute", recent == null ? 0.0 : recent.get("deleted") / minutes);
        return body;
    }

    /**
     * @param peeked a queue's oldest messages, peeked
     * @param now the time their states are read at
     * @param jobData whether bodies and attributes are shown
     * @param redacted the fields no one sees
     * @param hidden what a hidden body reads as
     * @param hiddenJson what hidden attributes read as
     * @return per message {@code messageId}, {@code state}, {@code sentAt}, {@code visibleAt},
     * {@code receiveCount}, {@code groupId}, {@code body}, {@code attributes}
     */
    public static List<Map<String, Object>> messages(List<PeekedMessage> peeked, Instant now, boolean jobData,
            RedactedFields redacted, String hidden, String hiddenJson) {
        return peeked.stream().map(message -> {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("messageId", message.messageId());
            entry.put("state", message.state(now));
            entry.put("sentAt", message.sentAt());
            entry.put("visibleAt", message.visibleAt());
            entry.put("receiveCount", message.receiveCount());
            entry.put("groupId", message.groupId());
            entry.put("body", jobData ? redacted.redact(message.body()) : hidden);
            entry.put("attributes", jobData ? redacted.redact(message.attributes())
                    : message.attributes() == null ? null : hiddenJson);
            return entry;
        }).toList();
    }

    /**
     * @param history a queue's history
     * @param window the window's name ({@code 1h}, {@code 24h}, {@code 7d})
     * @param span the window
     * @return {@code window}, {@code windowSeconds}, {@code stepSeconds} and {@code points} of
     * {@code at}, {@code sent}, {@code received}, {@code deleted}
     */
    public static Map<String, Object> history(MessageQueueHistory history, String window, Duration span) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("window", window);
        body.put("windowSeconds", span.toSeconds());
        body.put("stepSeconds", history.step().toSeconds());
        body.put("points", history.points().stream().map(point -> Map.of("at", point.at(), "sent", point.sent(),
                "received", point.received(), "deleted", point.deleted())).toList());
        return body;
    }
}
