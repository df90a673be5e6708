package io.pgqueue.autoconfigure.e2e;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import io.pgqueue.QueueClient;
import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * A small application using the starter as a user would: handlers, a transactional service.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({ E2eApplication.SendPush.class, E2eApplication.Flaky.class, E2eApplication.Slow.class,
        E2eApplication.SyncFolder.class, E2eApplication.Ping.class, E2eApplication.CopyFile.class, E2eApplication.Report.class,
        E2eApplication.UploadService.class })
public class E2eApplication {

    record Push(String user, String file) {
    }

    record Sync(String folder, int version) {
    }

    /** What the handlers saw, for assertions. */
    static final class Recorder {

        final Map<String, List<Object>> payloads = new ConcurrentHashMap<>();

        final Map<String, List<String>> nodes = new ConcurrentHashMap<>();

        final List<Long> pingLatencies = new CopyOnWriteArrayList<>();

        final AtomicInteger flakyAttempts = new AtomicInteger();

        volatile CountDownLatch syncGate = new CountDownLatch(0);

        volatile CountDownLatch syncStarted = new CountDownLatch(1);

        void record(String task, Object payload) {
            this.payloads.computeIfAbsent(task, t -> new CopyOnWriteArrayList<>()).add(payload);
        }

        List<Object> of(String task) {
            return this.payloads.getOrDefault(task, List.of());
        }

        void clear() {
            this.payloads.clear();
            this.pingLatencies.clear();
            this.flakyAttempts.set(0);
        }
    }

    @Bean
    Recorder recorder() {
        return new Recorder();
    }

    @QueueTask(name = "send-push", concurrency = 4, delayTolerance = "1s")
    static class SendPush implements TaskHandler<Push> {

        private final Recorder recorder;

        SendPush(Recorder recorder) {
            this.recorder = recorder;
        }

        @Override
        public void handle(Push payload, TaskContext context) {
            this.recorder.record("send-push", payload);
        }
    }

    @QueueTask(name = "flaky", maxAttempts = 5, retry = @QueueTask.Backoff(kind = QueueTask.Backoff.Kind.FIXED, delay = "50ms"))
    static class Flaky implements TaskHandler<String> {

        private final Recorder recorder;

        Flaky(Recorder recorder) {
            this.recorder = recorder;
        }

        @Override
        public void handle(String payload, TaskContext context) {
            if (this.recorder.flakyAttempts.incrementAndGet() < 3) {
                throw new IllegalStateException("storage backend timed out (attempt " + context.attempt() + ")");
            }
            this.recorder.record("flaky", payload + "@" + context.attempt());
        }
    }

    @QueueTask(name = "slow", timeout = "300ms", maxAttempts = 1)
    static class Slow implements TaskHandler<String> {

        @Override
        public void handle(String payload, TaskContext context) throws InterruptedException {
            Thread.sleep(60_000);
        }
    }

    @QueueTask(name = "sync-folder", dedupKey = "folder", dedupPolicy = QueueTask.DedupMode.RERUN, concurrency = 1)
    static class SyncFolder implements TaskHandler<Sync> {

        private final Recorder recorder;

        SyncFolder(Recorder recorder) {
            this.recorder = recorder;
        }

        @Override
        public void handle(Sync payload, TaskContext context) throws InterruptedException {
            this.recorder.record("sync-folder", payload);
            this.recorder.syncStarted.countDown();
            this.recorder.syncGate.await();
        }
    }

    @QueueTask(name = "ping", concurrency = 2)
    static class Ping implements TaskHandler<Long> {

        private final Recorder recorder;

        Ping(Recorder recorder) {
            this.recorder = recorder;
        }

        @Override
        public void handle(Long enqueuedAtNanos, TaskContext context) {
            this.recorder.pingLatencies.add(System.nanoTime() - enqueuedAtNanos);
        }
    }

    @QueueTask(name = "copy-file", concurrency = 2)
    static class CopyFile implements TaskHandler<Integer> {

        private final Recorder recorder;

        CopyFile(Recorder recorder) {
            this.recorder = recorder;
        }

        @Override
        public void handle(Integer file, TaskContext context) throws InterruptedException {
            Thread.sleep(100);
            this.recorder.record("copy-file", file);
        }
    }

    @QueueTask(name = "report", concurrency = 4, maxAttempts = 1)
    static class Report implements TaskHandler<Integer> {

        @Override
        public void handle(Integer n, TaskContext context) {
            if (n % 10 == 0) {
                throw new IllegalStateException("report " + n + " cannot be built");
            }
        }
    }

    /** A business service that stores an upload and enqueues its notification in one transaction. */
    @Service
    static class UploadService {

        private final JdbcTemplate jdbc;

        private final QueueClient queue;

        UploadService(JdbcTemplate jdbc, QueueClient queue) {
            this.jdbc = jdbc;
            this.queue = queue;
        }

        @Transactional
        public long upload(String user, String file, boolean failAfterEnqueue) {
            this.jdbc.update("INSERT INTO upload VALUES (?, ?)", user, file);
            long id = this.queue.enqueue(SendPush.class, new Push(user, file)).jobId();
            if (failAfterEnqueue) {
                throw new IllegalStateException("virus scan failed");
            }
            return id;
        }
    }
}
