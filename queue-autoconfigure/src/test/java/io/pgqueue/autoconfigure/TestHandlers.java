package io.pgqueue.autoconfigure;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.pgqueue.ChunkHandler;
import io.pgqueue.ChunkItem;
import io.pgqueue.DedupPolicy;
import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import io.pgqueue.schedule.Schedules;
import tools.jackson.databind.JsonNode;

/**
 * Handler classes for the auto-configuration tests, valid and invalid.
 */
final class TestHandlers {

    private TestHandlers() {
    }

    record Push(String user, String file) {
    }

    record Sync(String folder, int version) {
    }

    @QueueTask(name = "send-push", concurrency = 3, delayTolerance = "1s", maxAttempts = 5, priority = 7,
            retry = @QueueTask.Backoff(kind = QueueTask.Backoff.Kind.FIXED, delay = "250ms"))
    static class SendPush implements TaskHandler<Push> {

        @Override
        public void handle(Push payload, TaskContext context) {
        }
    }

    @QueueTask(name = "sync-folder", dedupKey = "'folder-' + folder", dedupPolicy = QueueTask.DedupMode.RERUN,
            terminal = IllegalArgumentException.class, pool = "slow", timeout = "10m", globalConcurrency = 2,
            rate = "600/1m", groupKey = "folder", groupConcurrency = 1)
    static class SyncFolder implements TaskHandler<Sync> {

        @Override
        public void handle(Sync payload, TaskContext context) {
        }
    }

    @QueueTask(name = "index-push", concurrency = 8, chunkSize = 4, chunkLinger = "50ms")
    static class IndexPushes implements ChunkHandler<Push> {

        @Override
        public void handle(List<ChunkItem<Push>> chunk) {
        }
    }

    @QueueTask(name = "send-push")
    static class AnotherSendPush implements TaskHandler<Push> {

        @Override
        public void handle(Push payload, TaskContext context) {
        }
    }

    @QueueTask(name = "not-a-handler")
    static class NotAHandler {
    }

    @QueueTask(name = "raw")
    @SuppressWarnings("rawtypes")
    static class RawHandler implements TaskHandler {

        @Override
        public void handle(Object payload, TaskContext context) {
        }
    }

    @QueueTask(name = "bad name!")
    static class BadName implements TaskHandler<Push> {

        @Override
        public void handle(Push payload, TaskContext context) {
        }
    }

    @QueueTask(name = "bad-timeout", timeout = "soon")
    static class BadTimeout implements TaskHandler<Push> {

        @Override
        public void handle(Push payload, TaskContext context) {
        }
    }

    @QueueTask(name = "bad-spel", dedupKey = "folder +")
    static class BadSpel implements TaskHandler<Push> {

        @Override
        public void handle(Push payload, TaskContext context) {
        }
    }

    @QueueTask(name = "merge-without-merger", dedupPolicy = QueueTask.DedupMode.MERGE_IF_READY)
    static class MergeWithoutMerger implements TaskHandler<Push> {

        @Override
        public void handle(Push payload, TaskContext context) {
        }
    }

    @QueueTask(name = "custom-without-bean", retry = @QueueTask.Backoff(kind = QueueTask.Backoff.Kind.CUSTOM,
            policyBean = "missingPolicy"))
    static class CustomWithoutBean implements TaskHandler<Push> {

        @Override
        public void handle(Push payload, TaskContext context) {
        }
    }

    @QueueTask(name = "merging", dedupPolicy = QueueTask.DedupMode.MERGE_IF_READY)
    static class Merging implements TaskHandler<List<String>>, DedupPolicy.PayloadMerger {

        @Override
        public void handle(List<String> payload, TaskContext context) {
        }

        @Override
        public JsonNode merge(JsonNode existing, JsonNode incoming) {
            return existing;
        }
    }

    /** Runs every second, from its cron expression; records the slots it ran for. */
    @QueueTask(name = "tick", cron = "* * * * * *", zone = "Europe/Amsterdam")
    static class Tick implements TaskHandler<JsonNode> {

        static final List<String> SLOTS = new CopyOnWriteArrayList<>();

        @Override
        public void handle(JsonNode payload, TaskContext context) {
            SLOTS.add(context.headers().get(Schedules.SLOT_HEADER));
        }
    }
}
