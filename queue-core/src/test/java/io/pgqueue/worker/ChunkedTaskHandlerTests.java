package io.pgqueue.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.pgqueue.ChunkItem;
import io.pgqueue.InvalidSettingException;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskSnoozedException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The gathering of concurrent attempts into chunks, without a database: chunks fill up to their
 * size or close after the linger, and each attempt ends as its item says.
 */
class ChunkedTaskHandlerTests {

    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void stop() {
        this.threads.shutdownNow();
    }

    @Test
    void concurrentAttemptsGatherIntoFullChunks() throws Exception {
        List<Integer> sizes = new CopyOnWriteArrayList<>();
        ChunkedTaskHandler<Integer> chunked = new ChunkedTaskHandler<>(chunk -> sizes.add(chunk.size()), 5, Duration.ofSeconds(5));

        Map<Integer, Throwable> ends = attempts(chunked, 10);

        assertThat(ends.values()).containsOnly(NONE);
        assertThat(sizes).containsExactly(5, 5);
    }

    @Test
    void aChunkThatDoesNotFillIsHandledOnceTheLingerPassed() throws Exception {
        List<Integer> sizes = new CopyOnWriteArrayList<>();
        ChunkedTaskHandler<Integer> chunked = new ChunkedTaskHandler<>(chunk -> sizes.add(chunk.size()), 50,
                Duration.ofMillis(200));

        long start = System.nanoTime();
        assertThat(attempts(chunked, 3).values()).containsOnly(NONE);

        assertThat(sizes).containsExactly(3);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(190));
    }

    @Test
    void eachAttemptEndsAsItsItemSaysAndAThrowingCallFailsTheItemsItLeft() throws Exception {
        IllegalStateException gone = new IllegalStateException("row 2 gone");
        ChunkedTaskHandler<Integer> settling = new ChunkedTaskHandler<>(chunk -> {
            for (ChunkItem<Integer> item : chunk) {
                switch (item.payload()) {
                    case 1 -> item.fail(gone);
                    case 2 -> item.snooze(Duration.ofSeconds(3));
                    case 3 -> item.complete();
                    default -> {
                        // left to the call's end
                    }
                }
            }
        }, 4, Duration.ofSeconds(5));

        Map<Integer, Throwable> ends = attempts(settling, 4);

        assertThat(ends.get(0)).isSameAs(NONE);
        assertThat(ends.get(1)).isSameAs(gone);
        assertThat(ends.get(2)).isInstanceOfSatisfying(TaskSnoozedException.class,
                snooze -> assertThat(snooze.delay()).isEqualTo(Duration.ofSeconds(3)));
        assertThat(ends.get(3)).isSameAs(NONE);

        IllegalStateException down = new IllegalStateException("index down");
        ChunkedTaskHandler<Integer> throwing = new ChunkedTaskHandler<>(chunk -> {
            chunk.stream().filter(item -> item.payload() == 0).forEach(ChunkItem::complete);
            throw down;
        }, 3, Duration.ofSeconds(5));

        Map<Integer, Throwable> thrown = attempts(throwing, 3);

        assertThat(thrown.get(0)).isSameAs(NONE);
        assertThat(thrown.get(1)).isSameAs(down);
        assertThat(thrown.get(2)).isSameAs(down);
    }

    @Test
    void aSizeBelowOneOrANegativeLingerIsRefused() {
        assertThatThrownBy(() -> new ChunkedTaskHandler<Integer>(chunk -> {
        }, 0, Duration.ZERO)).isInstanceOf(InvalidSettingException.class).hasMessageContaining("chunk-size");
        assertThatThrownBy(() -> new ChunkedTaskHandler<Integer>(chunk -> {
        }, 1, Duration.ofMillis(-1))).isInstanceOf(InvalidSettingException.class).hasMessageContaining("chunk-linger");
    }

    private static final Throwable NONE = new Throwable("returned");

    /** Runs attempts with payloads 0..n-1 at once; returns what each ended with. */
    private Map<Integer, Throwable> attempts(ChunkedTaskHandler<Integer> handler, int n) throws Exception {
        Map<Integer, Throwable> ends = new ConcurrentHashMap<>();
        List<Future<?>> running = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int payload = i;
            running.add(this.threads.submit(() -> {
                try {
                    handler.handle(payload, context());
                    ends.put(payload, NONE);
                }
                catch (Exception ex) {
                    ends.put(payload, ex);
                }
            }));
        }
        for (Future<?> attempt : running) {
            attempt.get(10, TimeUnit.SECONDS);
        }
        return ends;
    }

    private static TaskContext context() {
        return new TaskContext() {
            @Override
            public long jobId() {
                return 1;
            }

            @Override
            public String task() {
                return "index";
            }

            @Override
            public int attempt() {
                return 1;
            }

            @Override
            public int maxAttempts() {
                return 3;
            }

            @Override
            public Map<String, String> headers() {
                return Map.of();
            }

            @Override
            public java.time.Instant deadline() {
                return null;
            }

            @Override
            public java.time.Instant delayToleranceDeadline() {
                return null;
            }

            @Override
            public boolean isCancellationRequested() {
                return false;
            }

            @Override
            public void progress(String progress) {
            }
        };
    }
}
