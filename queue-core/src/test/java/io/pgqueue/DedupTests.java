package io.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.node.JsonNodeFactory;

import static org.assertj.core.api.Assertions.assertThat;

@Order(1)
class DedupTests {

    static final int THREADS = 16;

    static final int CALLS_PER_THREAD = 25;

    static final DedupPolicy SUM = DedupPolicy.mergeIfReady((existing, incoming) -> JsonNodeFactory.instance
        .objectNode()
        .put("n", existing.get("n").asInt() + incoming.get("n").asInt()));

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(TestQueue.task("keep"),
            TaskDefinition.builder("replace").dedupPolicy(DedupPolicy.replaceIfReady()).build(),
            TaskDefinition.builder("merge").dedupPolicy(SUM).build(),
            TaskDefinition.builder("sync").dedupPolicy(DedupPolicy.rerun()).build());

    static ExecutorService threads;

    @BeforeAll
    static void startThreads() {
        threads = Executors.newFixedThreadPool(THREADS);
    }

    @AfterAll
    static void stop() {
        threads.shutdownNow();
    }

    @Test
    void keepExistingReturnsTheActiveJob() {
        EnqueueResult first = queue.client().enqueue("keep", "v1", key("k"));
        EnqueueResult second = queue.client().enqueue("keep", "v2", key("k"));

        assertThat(first.outcome()).isEqualTo(EnqueueOutcome.CREATED);
        assertThat(second).isEqualTo(new EnqueueResult(first.jobId(), EnqueueOutcome.KEPT_EXISTING));
        assertThat(queue.job(first.jobId()).payload()).isEqualTo("\"v1\"");
        // Another key, or another task with the same key, is a different job.
        assertThat(queue.client().enqueue("keep", "v3", key("other")).created()).isTrue();
        assertThat(queue.client().enqueue("replace", "v4", key("k")).created()).isTrue();
    }

    @Test
    void theKeyIsFreeAgainOnceTheJobFinished() {
        long first = queue.client().enqueue("keep", "v1", key("k")).jobId();
        complete(first);

        EnqueueResult again = queue.client().enqueue("keep", "v2", key("k"));

        assertThat(again.created()).isTrue();
        assertThat(again.jobId()).isNotEqualTo(first);
    }

    @Test
    void replaceUpdatesAReadyJob() {
        long id = queue.client().enqueue("replace", "v1", key("k")).jobId();

        EnqueueResult result = queue.client().enqueue("replace", "v2",
                key("k").withPriority(9).withDelay(Duration.ofMinutes(10)).withDelayTolerance(Duration.ofSeconds(3)));

        assertThat(result).isEqualTo(new EnqueueResult(id, EnqueueOutcome.REPLACED));
        JobSnapshot job = queue.job(id);
        assertThat(job.payload()).isEqualTo("\"v2\"");
        assertThat(job.priority()).isEqualTo(9);
        assertThat(queue.secondsUntilDue(id)).isBetween(595.0, 600.5);
        assertThat(Duration.between(job.scheduleTime(), job.delayToleranceDeadline())).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void replaceLeavesARunningJobAlone() {
        long id = queue.client().enqueue("replace", "v1", key("k")).jobId();
        queue.claim("replace", 1);

        assertThat(queue.client().enqueue("replace", "v2", key("k")).outcome()).isEqualTo(EnqueueOutcome.KEPT_EXISTING);
        assertThat(queue.job(id).payload()).isEqualTo("\"v1\"");
    }

    @Test
    void mergeCombinesPayloadsOfAReadyJob() {
        long id = queue.client().enqueue("merge", n(2), key("k")).jobId();

        assertThat(queue.client().enqueue("merge", n(3), key("k")).outcome()).isEqualTo(EnqueueOutcome.MERGED);
        assertThat(queue.job(id).payload()).isEqualTo("{\"n\": 5}");

        queue.claim("merge", 1);
        assertThat(queue.client().enqueue("merge", n(4), key("k")).outcome()).isEqualTo(EnqueueOutcome.KEPT_EXISTING);
        assertThat(queue.job(id).payload()).isEqualTo("{\"n\": 5}");
    }

    @Test
    void rerunOfARunningJobRunsItExactlyOnceMore() {
        long id = queue.client().enqueue("sync", "state-1", key("folder-9")).jobId();
        ClaimedJob firstRun = queue.claim("sync", 1).get(0);
        queue.store().markRunning(List.of(firstRun.lease()), TestQueue.LEASE);

        // Three changes arrive while the sync runs: they coalesce into one more run with the newest state.
        for (int i = 2; i <= 4; i++) {
            EnqueueResult result = queue.client().enqueue("sync", "state-" + i, key("folder-9"));
            assertThat(result).isEqualTo(new EnqueueResult(id, EnqueueOutcome.RERUN_SCHEDULED));
        }
        assertThat(queue.job(id).rerunRequested()).isTrue();

        assertThat(queue.store().record(List.of(Outcome.completed(firstRun.lease()))).applied())
            .containsEntry(id, JobState.READY);
        JobSnapshot again = queue.job(id);
        assertThat(again.state()).isEqualTo(JobState.READY);
        assertThat(again.attempt()).isZero();
        assertThat(again.rerunRequested()).isFalse();

        ClaimedJob secondRun = queue.claim("sync", 1).get(0);
        assertThat(secondRun.payload()).isEqualTo("\"state-4\"");
        queue.store().record(List.of(Outcome.completed(secondRun.lease())));
        assertThat(queue.state(id)).isEqualTo(JobState.COMPLETED);
        assertThat(queue.activeJobs()).isZero();
    }

    @Test
    void aRerunRequestedWhileTheJobWasBufferedIsServedByItsComingRun() {
        long id = queue.client().enqueue("sync", "state-1", key("folder-3")).jobId();
        long later = queue.client().enqueue("sync", "other", key("folder-4")).jobId();
        JobSnapshot before = queue.job(id);
        ClaimedJob buffered = queue.claim("sync", 1).get(0);
        assertThat(buffered.id()).isEqualTo(id);
        assertThat(queue.client().enqueue("sync", "state-2", key("folder-3")).outcome())
            .isEqualTo(EnqueueOutcome.RERUN_SCHEDULED);

        // The node stops before the job started and hands it back: it has not run with state-1,
        // so its one coming run (with state-2) is all the re-run asks for.
        assertThat(queue.store().release(List.of(buffered.lease())).applied()).containsEntry(id, JobState.READY);
        JobSnapshot released = queue.job(id);
        assertThat(released.rerunRequested()).isFalse();
        assertThat(released.attempt()).isZero();
        assertThat(released.scheduleTime()).as("keeps its place in the queue").isEqualTo(before.scheduleTime());

        ClaimedJob run = queue.claim("sync", 1).get(0);
        assertThat(run.id()).as("still ahead of the job enqueued after it").isEqualTo(id).isNotEqualTo(later);
        assertThat(run.payload()).isEqualTo("\"state-2\"");
        assertThat(queue.store().record(List.of(Outcome.completed(run.lease()))).applied()).containsEntry(id,
                JobState.COMPLETED);
    }

    @Test
    void rerunOfAReadyJobJustTakesTheNewPayload() {
        long id = queue.client().enqueue("sync", "state-1", key("k")).jobId();

        assertThat(queue.client().enqueue("sync", "state-2", key("k")))
            .isEqualTo(new EnqueueResult(id, EnqueueOutcome.REPLACED));
        assertThat(queue.job(id).payload()).isEqualTo("\"state-2\"");
        assertThat(queue.job(id).rerunRequested()).isFalse();
    }

    @Test
    void rerunSurvivesAFailedRun() {
        long id = queue.client().enqueue("sync", "s1", key("k").withMaxAttempts(1)).jobId();
        ClaimedJob run = queue.claim("sync", 1).get(0);
        queue.client().enqueue("sync", "s2", key("k"));

        queue.store().record(List.of(Outcome.failed(run.lease(), "boom")));

        assertThat(queue.state(id)).isEqualTo(JobState.READY);
        assertThat(queue.claim("sync", 1).get(0).payload()).isEqualTo("\"s2\"");
    }

    @Test
    void batchWithDuplicatesInsideIt() {
        List<EnqueueResult> results = queue.client().enqueueAll(List.of(
                JobRequest.of("merge", n(1), key("a")), JobRequest.of("merge", n(10), key("b")),
                JobRequest.of("merge", n(2), key("a")), JobRequest.of("merge", n(20), key("b")),
                JobRequest.of("merge", n(100), EnqueueOptions.defaults())));

        assertThat(results).extracting(EnqueueResult::outcome).containsExactly(EnqueueOutcome.CREATED,
                EnqueueOutcome.CREATED, EnqueueOutcome.MERGED, EnqueueOutcome.MERGED, EnqueueOutcome.CREATED);
        assertThat(queue.job(results.get(0).jobId()).payload()).isEqualTo("{\"n\": 3}");
        assertThat(queue.job(results.get(1).jobId()).payload()).isEqualTo("{\"n\": 30}");
        assertThat(queue.activeJobs()).isEqualTo(3);
    }

    @Test
    void concurrentKeepExistingCreatesOneJob() throws Exception {
        Set<Long> ids = ConcurrentHashMap.newKeySet();
        race(() -> ids.add(queue.client().enqueue("keep", "x", key("hot")).jobId()));

        assertThat(ids).hasSize(1);
        assertThat(queue.activeJobs()).isEqualTo(1);
    }

    @Test
    void concurrentReplaceCreatesOneJob() throws Exception {
        Set<Long> ids = ConcurrentHashMap.newKeySet();
        race(() -> ids.add(queue.client().enqueue("replace", "x", key("hot")).jobId()));

        assertThat(ids).hasSize(1);
        assertThat(queue.activeJobs()).isEqualTo(1);
    }

    @Test
    void concurrentMergesLoseNothing() throws Exception {
        race(() -> queue.client().enqueue("merge", n(1), key("hot")));

        assertThat(queue.activeJobs()).isEqualTo(1);
        long id = queue.jdbc().queryForObject("SELECT id FROM pgqueue.job", Long.class);
        assertThat(queue.job(id).payload()).isEqualTo("{\"n\": " + THREADS * CALLS_PER_THREAD + "}");
    }

    @Test
    void concurrentBatchesWithSharedKeysNeitherDuplicateNorDeadlock() throws Exception {
        // Each batch touches the same keys in a different order.
        race(() -> {
            List<JobRequest> batch = new ArrayList<>();
            for (int k = 0; k < 10; k++) {
                batch.add(JobRequest.of("merge", n(1), key("key-" + ((k * 7 + Thread.currentThread().getId()) % 10))));
            }
            return queue.client().enqueueAll(batch);
        });

        assertThat(queue.activeJobs()).isEqualTo(10);
        assertThat(queue.jdbc().queryForObject("SELECT sum((payload->>'n')::int) FROM pgqueue.job", Long.class))
            .isEqualTo((long) THREADS * CALLS_PER_THREAD * 10);
    }

    @Test
    void concurrentRerunRequestsCoalesceIntoOneRun() throws Exception {
        long id = queue.client().enqueue("sync", "s0", key("hot")).jobId();
        ClaimedJob run = queue.claim("sync", 1).get(0);
        queue.store().markRunning(List.of(run.lease()), TestQueue.LEASE);

        Set<EnqueueResult> results = ConcurrentHashMap.newKeySet();
        race(() -> results.add(queue.client().enqueue("sync", "s1", key("hot"))));
        assertThat(results).containsExactly(new EnqueueResult(id, EnqueueOutcome.RERUN_SCHEDULED));

        queue.store().record(List.of(Outcome.completed(run.lease())));
        ClaimedJob rerun = queue.claim("sync", 10).get(0);
        queue.store().record(List.of(Outcome.completed(rerun.lease())));
        assertThat(queue.activeJobs()).isZero();
        assertThat(queue.claim("sync", 10)).isEmpty();
    }

    @Test
    void rerunRacingWithCompletionNeverLosesTheRequest() throws Exception {
        // Completion and a rerun request race; whichever wins, the newest state gets a run.
        for (int round = 0; round < 30; round++) {
            queue.clear();
            long id = queue.client().enqueue("sync", "old", key("k")).jobId();
            ClaimedJob run = queue.claim("sync", 1).get(0);
            CountDownLatch go = new CountDownLatch(1);
            Future<?> completer = threads.submit(() -> {
                go.await();
                return queue.store().record(List.of(Outcome.completed(run.lease())));
            });
            Future<EnqueueResult> enqueuer = threads.submit(() -> {
                go.await();
                return queue.client().enqueue("sync", "new", key("k"));
            });
            go.countDown();
            completer.get(10, TimeUnit.SECONDS);
            EnqueueResult result = enqueuer.get(10, TimeUnit.SECONDS);

            List<ClaimedJob> next = queue.claim("sync", 10);
            assertThat(next).as("round %d: %s", round, result).hasSize(1);
            assertThat(next.get(0).payload()).isEqualTo("\"new\"");
            if (result.outcome() == EnqueueOutcome.RERUN_SCHEDULED) {
                assertThat(next.get(0).id()).isEqualTo(id);
            }
        }
    }

    private void race(Callable<Object> call) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            futures.add(threads.submit(() -> {
                start.await();
                for (int i = 0; i < CALLS_PER_THREAD; i++) {
                    call.call();
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> future : futures) {
            future.get(120, TimeUnit.SECONDS);
        }
    }

    private void complete(long id) {
        ClaimedJob job = queue.claim("keep", 10).stream().filter(j -> j.id() == id).findFirst().orElseThrow();
        queue.store().record(List.of(Outcome.completed(job.lease())));
    }

    private static EnqueueOptions key(String key) {
        return EnqueueOptions.defaults().withDedupKey(key);
    }

    private static Object n(int n) {
        return java.util.Map.of("n", n);
    }
}
