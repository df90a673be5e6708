package io.pgqueue;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.FencedResult;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

class RescueTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(TaskDefinition.builder("copy").maxAttempts(2).build());

    @Test
    void expiredLeasesGoBackToReadyWithTheAttemptCounted() {
        long id = queue.client().enqueue("copy", 1).jobId();
        queue.claim("copy", 1);
        queue.expireLease(id);

        FencedResult rescued = queue.store().rescueExpiredLeases(100);

        assertThat(rescued.applied()).containsExactly(Map.entry(id, JobState.READY));
        JobSnapshot job = queue.job(id);
        assertThat(job.state()).isEqualTo(JobState.READY);
        assertThat(job.attempt()).isEqualTo(1);
        assertThat(job.leaseOwner()).isNull();
        assertThat(job.lastError()).isEqualTo("Lease of worker-1 expired");
        assertThat(queue.claim("copy", 1)).hasSize(1);
    }

    @Test
    void aRescuedJobKeepsItsPlaceAheadOfYoungerJobs() {
        long older = queue.client().enqueue("copy", "older").jobId();
        queue.claim("copy", 1);
        long younger = queue.client().enqueue("copy", "younger").jobId();
        Instant scheduled = queue.job(older).scheduleTime();
        queue.expireLease(older);

        queue.store().rescueExpiredLeases(100);

        assertThat(queue.job(older).scheduleTime()).as("schedule kept").isEqualTo(scheduled);
        assertThat(queue.job(older).attempt()).as("the attempt counts").isEqualTo(1);
        assertThat(queue.claim("copy", 1)).singleElement()
            .satisfies(job -> assertThat(job.id()).as("claimed first").isEqualTo(older));
        assertThat(queue.state(younger)).isEqualTo(JobState.READY);
    }

    @Test
    void liveLeasesAreLeftAlone() {
        long id = queue.client().enqueue("copy", 1).jobId();
        queue.claim("copy", 1);

        assertThat(queue.store().rescueExpiredLeases(100).applied()).isEmpty();
        assertThat(queue.state(id)).isEqualTo(JobState.STARTING);
    }

    @Test
    void exhaustedAttemptsFail() {
        long id = queue.client().enqueue("copy", 1).jobId();
        for (int attempt = 1; attempt <= 2; attempt++) {
            assertThat(queue.claim("copy", 1)).hasSize(1);
            queue.expireLease(id);
            queue.store().rescueExpiredLeases(100);
        }

        JobSnapshot job = queue.job(id);
        assertThat(job.state()).isEqualTo(JobState.FAILED);
        assertThat(job.attempt()).isEqualTo(2);
        assertThat(job.lastError()).contains("expired");
    }

    @Test
    void expiredJobsWithACancelRequestEndCancelled() {
        long id = queue.client().enqueue("copy", 1).jobId();
        queue.claim("copy", 1);
        queue.client().cancel(id);
        queue.expireLease(id);

        assertThat(queue.store().rescueExpiredLeases(100).applied()).containsEntry(id, JobState.CANCELLED);
        assertThat(queue.state(id)).isEqualTo(JobState.CANCELLED);
    }

    @Test
    void manyRescuersHandleEachJobOnce() throws Exception {
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            jobs.add(JobRequest.of("copy", i));
        }
        queue.client().enqueueAll(jobs);
        assertThat(queue.claim("copy", 2000)).hasSize(2000);
        queue.jdbc().update("UPDATE pgqueue.job SET expected_status_change_time = now() - interval '1 second'");

        int rescuers = 6;
        ExecutorService pool = Executors.newFixedThreadPool(rescuers);
        CountDownLatch start = new CountDownLatch(1);
        Map<Long, Integer> rescues = new ConcurrentHashMap<>();
        List<Future<?>> futures = new ArrayList<>();
        for (int r = 0; r < rescuers; r++) {
            futures.add(pool.submit(() -> {
                start.await();
                FencedResult result;
                do {
                    result = queue.store().rescueExpiredLeases(100);
                    result.applied().keySet().forEach(id -> rescues.merge(id, 1, Integer::sum));
                }
                while (!result.applied().isEmpty());
                return null;
            }));
        }
        start.countDown();
        for (Future<?> future : futures) {
            future.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();

        assertThat(rescues).hasSize(2000);
        assertThat(Collections.max(rescues.values())).isEqualTo(1);
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM pgqueue.job WHERE state = 'READY' AND attempt = 1",
                Long.class)).isEqualTo(2000);
    }

    @Test
    void rescueRespectsItsBatchLimit() {
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            jobs.add(JobRequest.of("copy", i));
        }
        queue.client().enqueueAll(jobs);
        for (ClaimedJob job : queue.claim("copy", 30)) {
            queue.expireLease(job.id());
        }

        assertThat(queue.store().rescueExpiredLeases(20).applied()).hasSize(20);
        assertThat(queue.store().rescueExpiredLeases(20).applied()).hasSize(10);
    }

    @Test
    void theRescueWalksTheLeaseIndexOnATableThatGrewWithoutStatistics() throws Exception {
        // A node starting on a backlog does not analyze the job table first: the rescue, planned
        // per call, must find expired leases through job_lease_idx with statistics from a tiny table.
        long[] scans = queue.jobTableScansOnceGrown("copy", store -> rescueAfterExpiry(store, 1), store -> {
            List<ClaimedJob> claimed = queue.claim("copy", 5);
            claimed.forEach(job -> queue.expireLease(job.id()));
            return () -> assertThat(store.rescueExpiredLeases(100).applied()).hasSize(5);
        });

        assertThat(scans[0]).as("sequential scans of the job table").isZero();
        assertThat(scans[1]).as("index scans of the job table").isPositive();
        // Rows fetched for the rescue of 5 jobs, not the 20,000 of a whole-index walk.
        assertThat(scans[2]).as("rows fetched through indexes").isLessThan(100);
    }

    private static void rescueAfterExpiry(JobStore store, int count) {
        for (ClaimedJob job : queue.claim("copy", count)) {
            queue.expireLease(job.id());
        }
        assertThat(store.rescueExpiredLeases(100).applied()).hasSize(count);
    }
}
