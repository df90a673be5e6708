package io.pgqueue.internal.observe;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import io.pgqueue.internal.store.HistoryStore;
import io.pgqueue.message.MessageQueueCounts;
import io.pgqueue.message.MessageQueueEvents;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts what this node does with each message queue — messages sent, received, deleted — for the
 * queues' history in the database ({@code message_queue_history}), and passes every event on to the
 * application's listener. Adds its counts every {@link PeriodicFlush#INTERVAL} while
 * started, as {@link TaskHistoryRecorder} does for tasks; counts a failed write could not add wait
 * for the next.
 */
public final class MessageHistoryRecorder implements MessageQueueEvents {

    private static final Logger log = LoggerFactory.getLogger(MessageHistoryRecorder.class);

    private final HistoryStore store;

    private final Clock clock;

    private final MessageQueueEvents delegate;

    private final Map<String, LongAdder[]> counts = new ConcurrentHashMap<>();

    private final PeriodicFlush writer = new PeriodicFlush("pgqueue-message-history", "message queue history",
            this::flush);

    /**
     * @param store the history, on the queue's main database
     * @param clock the time the counts are added at
     * @param delegate the application's listener, told of every event too
     */
    public MessageHistoryRecorder(HistoryStore store, Clock clock, MessageQueueEvents delegate) {
        this.store = store;
        this.clock = clock;
        this.delegate = delegate;
    }

    @Override
    public void sent(String queue, int count) {
        add(queue, 0, count);
        this.delegate.sent(queue, count);
    }

    @Override
    public void received(String queue, int count) {
        add(queue, 1, count);
        this.delegate.received(queue, count);
    }

    @Override
    public void firstReceived(String queue, Duration delay) {
        this.delegate.firstReceived(queue, delay);
    }

    @Override
    public void deleted(String queue, int count) {
        add(queue, 2, count);
        this.delegate.deleted(queue, count);
    }

    @Override
    public void counted(Map<String, MessageQueueCounts> counts) {
        this.delegate.counted(counts);
    }

    private void add(String queue, int which, int count) {
        if (count > 0) {
            this.counts.computeIfAbsent(queue, name -> new LongAdder[] { new LongAdder(), new LongAdder(), new LongAdder() })
                [which].add(count);
        }
    }

    /** Starts adding the counts every few seconds; idempotent. */
    public void start() {
        this.writer.start();
    }

    /** Stops, adding what is left; idempotent. */
    public void stop() {
        this.writer.stop();
    }

    /** Adds the counts gathered since the last write. */
    public synchronized void flush() {
        List<HistoryStore.MessageFigures> figures = new ArrayList<>();
        this.counts.forEach((queue, adders) -> {
            long sent = adders[0].sumThenReset();
            long received = adders[1].sumThenReset();
            long deleted = adders[2].sumThenReset();
            if (sent + received + deleted > 0) {
                figures.add(new HistoryStore.MessageFigures(queue, sent, received, deleted));
            }
        });
        try {
            this.store.addMessages(this.clock.instant(), figures);
        }
        catch (RuntimeException ex) {
            figures.forEach(taken -> {
                add(taken.queue(), 0, (int) taken.sent());
                add(taken.queue(), 1, (int) taken.received());
                add(taken.queue(), 2, (int) taken.deleted());
            });
            log.warn("pgqueue could not add this node's message counts to the message queues' history ({}); they are "
                    + "kept for the next write", ex.toString());
        }
    }
}
