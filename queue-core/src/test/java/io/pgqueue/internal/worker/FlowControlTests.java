package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import io.pgqueue.JobRequest;
import io.pgqueue.JobState;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueDefaults;
import io.pgqueue.RateLimit;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskHandler;
import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimResult;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.testing.TestQueue;
import io.pgqueue.testing.TestWorkers;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.pgqueue.testing.TestWorkers.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Limits across nodes: a task's global concurrency and its rate, enforced by the claim under a lock
 * of the task. Recorders count what ran; the nodes poll rarely, so a test that finishes in time
 * proves the wake-ups (a freed slot, the next permit) rather than the poll.
 */
class FlowControlTests {

    /** Longer than any of these tests: only the wake-ups of the limits can start the next jobs in time. */
    private static final Duration RARE_POLL = Duration.ofSeconds(30);

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass().withPoolSize(24);

    @RegisterExtension
    final TestWorkers nodes = TestWorkers.on(queue);

    record Work(int n) {
    }

    @Test
    void concurrentClaimsOnManyThreadsNeverHoldMoreThanTheGlobalConcurrency() throws Exception {
        int jobs = 600;
        int limit = 3;
        QueueClient client = nodes.client(task(TaskDefinition.builder("capped").globalConcurrency(limit).build(), 1,
                (payload, context) -> { }));
        client.enqueueAll(Collections.nCopies(jobs, JobRequest.of("capped", new Work(1))));
        // Counted up after a claim committed and down before its outcome is written: never below
        // what the database holds, so a maximum above the limit is an overshoot of the claim.
        AtomicInteger held = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        Queue<String> violations = new ConcurrentLinkedQueue<>();
        ExecutorService threads = Executors.newFixedThreadPool(12);
        List<Future<?>> futures = new ArrayList<>();
        for (int t = 0; t < 12; t++) {
            String owner = "claimer-" + t;
            futures.add(threads.submit(() -> {
                while (done.get() < jobs) {
                    ClaimResult claimed = queue.store().claimJobs(List.of(new ClaimLimit("capped", 2, limit, null)), owner,
                            JobState.RUNNING, TestQueue.LEASE);
                    int now = held.addAndGet(claimed.jobs().size());
                    most.accumulateAndGet(now, Math::max);
                    if (now > limit) {
                        violations.add(now + " held at once");
                    }
                    if (claimed.jobs().isEmpty()) {
                        assertThat(claimed.limited()).as("a claim cut by the limit says so")
                            .allSatisfy(wait -> assertThat(wait.retryAfter()).isNull());
                        Thread.onSpinWait();
                        continue;
                    }
                    Thread.sleep(1);
                    held.addAndGet(-claimed.jobs().size());
                    queue.store().record(claimed.jobs().stream().map(job -> Outcome.completed(job.lease())).toList());
                    done.addAndGet(claimed.jobs().size());
                }
                return null;
            }));
        }
        for (Future<?> future : futures) {
            future.get();
        }
        threads.shutdown();

        assertThat(violations).isEmpty();
        assertThat(most.get()).as("the limit is used, not just respected").isEqualTo(limit);
        assertThat(queue.finishedJobs(JobState.COMPLETED)).isEqualTo(jobs);
    }

    @Test
    void twoNodesTogetherRunNoMoreThanTheGlobalConcurrencyAndUseAllOfIt() {
        int jobs = 200;
        int limit = 3;
        Recorder recorder = new Recorder();
        WorkerTask task = task(TaskDefinition.builder("report").globalConcurrency(limit).build(), 4, (payload, context) -> {
            recorder.started();
            try {
                Thread.sleep(10);
            }
            finally {
                recorder.ended();
            }
        });
        nodes.client(task).enqueueAll(Collections.nCopies(jobs, JobRequest.of("report", new Work(1))));

        nodes.start(settings("node-a").pollInterval(RARE_POLL).build(), task);
        nodes.start(settings("node-b").pollInterval(RARE_POLL).build(), task);

        // 200 jobs of 10 ms, 3 at a time: about 0.7 s when freed slots wake the nodes at once.
        await().atMost(Duration.ofSeconds(20)).until(() -> queue.finishedJobs(JobState.COMPLETED) == jobs);
        assertThat(recorder.most.get()).as("never more than the limit, and all of it used").isEqualTo(limit);
    }

    @Test
    void slotsHeldByADeadNodeComeBackWithItsLeases() {
        int limit = 2;
        Recorder recorder = new Recorder();
        WorkerTask task = task(TaskDefinition.builder("export").globalConcurrency(limit).build(), 4, (payload, context) -> {
            recorder.started();
            recorder.ended();
        });
        nodes.client(task).enqueueAll(Collections.nCopies(10, JobRequest.of("export", new Work(1))));
        // A node claims both slots with a short lease and dies.
        List<ClaimedJob> dead = queue.store().claimJobs(List.of(new ClaimLimit("export", 4, limit, null)), "dead-node",
                JobState.RUNNING, Duration.ofSeconds(2)).jobs();
        assertThat(dead).hasSize(limit);
        long diedAt = System.nanoTime();

        // Polling too rare to matter: the rescue's notification wakes the node waiting for a slot.
        nodes.start(settings("node-a").rescueInterval(Duration.ofMillis(200)).pollInterval(RARE_POLL).build(), task);

        await().atMost(Duration.ofSeconds(15)).until(() -> queue.finishedJobs(JobState.COMPLETED) == 10);
        Duration took = Duration.ofNanos(System.nanoTime() - diedAt);
        assertThat(took).as("the slots return when the dead node's leases expire").isGreaterThan(Duration.ofMillis(1900));
        assertThat(recorder.most.get()).isLessThanOrEqualTo(limit);
        assertThat(dead.stream().map(ClaimedJob::lease).map(Lease::jobId).map(queue::job))
            .allSatisfy(job -> assertThat(job.attempt()).as("run again after the rescue").isEqualTo(2));
    }

    @Test
    void aRateLimitSpacesStartsAcrossNodes() {
        int jobs = 30;
        // 20 per second with a burst of 2: the first 2 at once, then one every 50 ms.
        RateLimit rate = new RateLimit(20, Duration.ofSeconds(1), 2);
        List<Long> starts = Collections.synchronizedList(new ArrayList<>());
        WorkerTask task = task(TaskDefinition.builder("notify").rateLimit(rate).build(), 4,
                (payload, context) -> starts.add(System.nanoTime()));
        nodes.client(task).enqueueAll(Collections.nCopies(jobs, JobRequest.of("notify", new Work(1))));
        long from = System.nanoTime();

        nodes.start(settings("node-a").pollInterval(RARE_POLL).build(), task);
        nodes.start(settings("node-b").pollInterval(RARE_POLL).build(), task);

        await().atMost(Duration.ofSeconds(20)).until(() -> queue.finishedJobs(JobState.COMPLETED) == jobs);
        List<Long> sorted = starts.stream().sorted().toList();
        // A token bucket lets at most burst + rate * t be claimed in any span t; handlers start a
        // moment after their claims, so jobs claimed apart can start closer: 2 more in a span.
        for (int i = 0; i < sorted.size(); i++) {
            for (int j = i; j < sorted.size(); j++) {
                double seconds = (sorted.get(j) - sorted.get(i)) / 1e9;
                assertThat(j - i + 1).as("starts within %.3f s", seconds)
                    .isLessThanOrEqualTo((int) Math.floor(rate.burst() + 20 * seconds) + 2);
            }
        }
        double took = (sorted.get(sorted.size() - 1) - from) / 1e9;
        assertThat(took).as("28 jobs after the burst at 20/s, woken by the next permit rather than the poll")
            .isBetween(1.2, 5.0);
    }

    @Test
    void tasksWithoutLimitsAreClaimedAlongsideLimitedOnesInOneClaim() {
        QueueClient client = nodes.client(task(TaskDefinition.builder("free").build(), 1, (payload, context) -> { }),
                task(TaskDefinition.builder("single").globalConcurrency(1).build(), 1, (payload, context) -> { }));
        client.enqueueAll(Collections.nCopies(5, JobRequest.of("free", new Work(1))));
        client.enqueueAll(Collections.nCopies(5, JobRequest.of("single", new Work(1))));

        ClaimResult claimed = queue.store().claimJobs(List.of(new ClaimLimit("free", 5),
                new ClaimLimit("single", 5, 1, null)), "node-a", JobState.RUNNING, TestQueue.LEASE);

        assertThat(claimed.jobs()).extracting(ClaimedJob::task).containsOnly("free", "single").hasSize(6);
        assertThat(claimed.limited()).containsExactly(new ClaimResult.LimitWait("single", null, false));
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM " + queue.config().schema()
                + ".job WHERE limited", Long.class)).as("only the limited task's jobs are counted").isEqualTo(1);
    }

    private static WorkerTask task(TaskDefinition definition, int concurrency, TaskHandler<Work> handler) {
        return WorkerTask.of(definition, handler, Work.class, concurrency, Duration.ofMinutes(1), QueueDefaults.POOL);
    }

    /** Counts handlers running at once in this JVM. */
    private static final class Recorder {

        final AtomicInteger running = new AtomicInteger();

        final AtomicInteger most = new AtomicInteger();

        void started() {
            most.accumulateAndGet(running.incrementAndGet(), Math::max);
        }

        void ended() {
            running.decrementAndGet();
        }
    }
}
