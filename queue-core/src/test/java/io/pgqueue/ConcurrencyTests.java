package io.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.FencedResult;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many workers, many jobs, several task types: every job completes exactly once, none is lost,
 * and no job is ever held by two workers at once. Checked by recorders, not by trust.
 */
class ConcurrencyTests {

    static final List<String> TASKS = List.of("push", "copy", "publish", "sync");

    static final int WORKERS = 8;

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(TASKS.stream()
        .map(task -> TaskDefinition.builder(task).maxAttempts(50).build())
        .toArray(TaskDefinition[]::new)).withPoolSize(WORKERS + 4);

    @Test
    void eightWorkersCompleteTwentyThousandJobsExactlyOnce() throws Exception {
        int jobs = 20_000;
        enqueue(jobs);
        Map<Long, String> holders = new ConcurrentHashMap<>();
        Map<Long, AtomicInteger> successes = new ConcurrentHashMap<>();
        Queue<String> violations = new ConcurrentLinkedQueue<>();
        AtomicInteger completed = new AtomicInteger();
        AtomicInteger retried = new AtomicInteger();
        AtomicBoolean done = new AtomicBoolean();

        ExecutorService threads = Executors.newFixedThreadPool(WORKERS + 1);
        List<Future<?>> futures = new ArrayList<>();
        // A rescuer runs all along: it must never take a job whose lease is alive.
        futures.add(threads.submit(() -> {
            while (!done.get()) {
                FencedResult rescued = queue.store().rescueExpiredLeases(100);
                if (!rescued.applied().isEmpty()) {
                    violations.add("rescued live jobs " + rescued.applied().keySet());
                }
            }
            return null;
        }));
        for (int w = 0; w < WORKERS; w++) {
            String owner = "worker-" + w;
            futures.add(threads.submit(() -> {
                int idle = 0;
                while (completed.get() < jobs && idle < 200) {
                    List<ClaimedJob> claimed = queue.store().claim(randomLimits(), owner, JobState.STARTING, Duration.ofMinutes(5));
                    if (claimed.isEmpty()) {
                        idle++;
                        continue;
                    }
                    idle = 0;
                    for (ClaimedJob job : claimed) {
                        String other = holders.putIfAbsent(job.id(), owner);
                        if (other != null) {
                            violations.add("job " + job.id() + " claimed by " + owner + " while held by " + other);
                        }
                    }
                    FencedResult running = queue.store().markRunning(leases(claimed), Duration.ofMinutes(5));
                    if (!running.lost().isEmpty()) {
                        violations.add("lost leases on start: " + running.lost());
                    }
                    List<Outcome> outcomes = new ArrayList<>();
                    for (ClaimedJob job : claimed) {
                        // Every 20th job fails its first attempt and is retried at once.
                        if (job.attempt() == 1 && Long.parseLong(job.payload()) % 20 == 0) {
                            outcomes.add(Outcome.retry(job.lease(), Duration.ZERO, "first attempt fails"));
                        }
                        else {
                            successes.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
                            outcomes.add(Outcome.completed(job.lease()));
                        }
                    }
                    // Release our claims before they become visible as READY again (retries).
                    claimed.forEach(job -> holders.remove(job.id(), owner));
                    FencedResult result = queue.store().record(outcomes);
                    if (!result.lost().isEmpty()) {
                        violations.add("lost leases on completion: " + result.lost());
                    }
                    completed.addAndGet((int) result.count(JobState.COMPLETED));
                    retried.addAndGet((int) result.count(JobState.READY));
                }
                return null;
            }));
        }
        for (Future<?> future : futures.subList(1, futures.size())) {
            future.get(5, TimeUnit.MINUTES);
        }
        done.set(true);
        futures.get(0).get(1, TimeUnit.MINUTES);
        threads.shutdown();

        assertThat(violations).isEmpty();
        assertThat(completed.get()).isEqualTo(jobs);
        assertThat(retried.get()).isEqualTo(jobs / 20);
        assertThat(successes).hasSize(jobs);
        assertThat(successes.values()).allMatch(count -> count.get() == 1);
        assertThat(queue.activeJobs()).isZero();
        assertThat(queue.jdbc().queryForObject(
                "SELECT count(DISTINCT id) FROM pgqueue.job_finished WHERE state = 'COMPLETED'", Long.class))
            .isEqualTo(jobs);
        assertThat(queue.jdbc().queryForObject(
                "SELECT count(*) FROM pgqueue.job_finished WHERE attempt = 2", Long.class)).isEqualTo(jobs / 20);
    }

    @Test
    void stalledWorkersLoseTheirJobsAndNeverOverwriteTheNewHolder() throws Exception {
        int jobs = 3_000;
        Duration lease = Duration.ofMillis(300);
        enqueue(jobs);
        record Claim(long id, int epoch, String owner, Instant from, Instant until) {
        }
        Queue<Claim> claims = new ConcurrentLinkedQueue<>();
        Map<Long, AtomicInteger> appliedCompletions = new ConcurrentHashMap<>();
        Map<Long, Integer> completedEpoch = new ConcurrentHashMap<>();
        AtomicInteger stale = new AtomicInteger();
        AtomicBoolean done = new AtomicBoolean();
        AtomicBoolean stalledFirst = new AtomicBoolean();
        JobStore store = queue.store();

        ExecutorService threads = Executors.newFixedThreadPool(WORKERS + 2);
        List<Future<?>> futures = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            futures.add(threads.submit(() -> {
                while (!done.get()) {
                    store.rescueExpiredLeases(500);
                    // A rescuer's pace, far quicker than a node's: stalled batches lose their jobs at once.
                    Thread.sleep(20);
                }
                return null;
            }));
        }
        CountDownLatch finished = new CountDownLatch(WORKERS);
        for (int w = 0; w < WORKERS; w++) {
            String owner = "worker-" + w;
            futures.add(threads.submit(() -> {
                try {
                    while (queue.activeJobs() > 0) {
                        List<ClaimedJob> claimed = store.claim(randomLimits(), owner, JobState.RUNNING, lease);
                        claimed.forEach(job -> claims.add(new Claim(job.id(), job.lease().epoch(), owner,
                                job.claimedAt(), job.leaseDeadline())));
                        if (claimed.isEmpty()) {
                            // Nothing due until the rescuers hand back a stalled batch's jobs: poll, as a node would.
                            Thread.sleep(10);
                            continue;
                        }
                        // One batch in ten stalls past its lease, as a worker in a long GC pause would;
                        // worker 0's first batch always does, however few batches the run takes.
                        boolean firstOfWorker0 = owner.equals("worker-0") && stalledFirst.compareAndSet(false, true);
                        if (firstOfWorker0 || ThreadLocalRandom.current().nextInt(10) == 0) {
                            Thread.sleep(lease.toMillis() + 200);
                        }
                        FencedResult result = store.record(claimed.stream().map(j -> Outcome.completed(j.lease())).toList());
                        result.applied().keySet().forEach(id -> appliedCompletions
                            .computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet());
                        claimed.stream().filter(j -> result.applied().containsKey(j.id()))
                            .forEach(j -> completedEpoch.put(j.id(), j.lease().epoch()));
                        stale.addAndGet(result.lost().size());
                    }
                }
                finally {
                    finished.countDown();
                }
                return null;
            }));
        }
        assertThat(finished.await(5, TimeUnit.MINUTES)).isTrue();
        done.set(true);
        for (Future<?> future : futures) {
            future.get(1, TimeUnit.MINUTES);
        }
        threads.shutdown();

        // Each job completed exactly once, by the holder of a live lease.
        assertThat(appliedCompletions).hasSize(jobs);
        assertThat(appliedCompletions.values()).allMatch(count -> count.get() == 1);
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.job_finished WHERE state = 'COMPLETED'",
                Long.class)).isEqualTo(jobs);
        // The lease intervals of one job never overlap: no two owners at once.
        Map<Long, List<Claim>> byJob = claims.stream().collect(Collectors.groupingBy(Claim::id));
        for (Collection<Claim> history : byJob.values()) {
            List<Claim> ordered = history.stream().sorted(Comparator.comparingInt(Claim::epoch)).toList();
            // Only the last holder's completion can have counted.
            Claim last = ordered.get(ordered.size() - 1);
            assertThat(completedEpoch.get(last.id())).as("completion of job %d", last.id()).isEqualTo(last.epoch());
            for (int i = 1; i < ordered.size(); i++) {
                assertThat(ordered.get(i).from()).as("claim %s after %s", ordered.get(i), ordered.get(i - 1))
                    .isAfter(ordered.get(i - 1).until());
            }
        }
        // The stalls really happened and were fenced off.
        assertThat(stale.get()).isPositive();
        assertThat(claims).hasSize(jobs + stale.get());
    }

    private static void enqueue(int jobs) {
        List<JobRequest> batch = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            batch.add(JobRequest.of(TASKS.get(i % TASKS.size()), i));
            if (batch.size() == 1000) {
                queue.client().enqueueAll(batch);
                batch.clear();
            }
        }
        queue.client().enqueueAll(batch);
    }

    private static List<ClaimLimit> randomLimits() {
        return TASKS.stream().map(task -> new ClaimLimit(task, ThreadLocalRandom.current().nextInt(1, 60))).toList();
    }

    private static List<Lease> leases(List<ClaimedJob> jobs) {
        return jobs.stream().map(ClaimedJob::lease).toList();
    }
}
