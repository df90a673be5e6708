package io.pgqueue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

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
import static org.awaitility.Awaitility.await;

/**
 * Transitions out of STARTING/RUNNING are fenced by the lease: a worker that lost its job to
 * lease expiry can no longer change it.
 */
class LeaseTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(TaskDefinition.builder("sync").maxAttempts(5).build());

    @Test
    void startingToRunningRenewsTheLease() {
        long id = queue.client().enqueue("sync", 1).jobId();
        ClaimedJob job = queue.claim("sync", 1).get(0);

        FencedResult result = queue.store().markRunning(List.of(job.lease()), Duration.ofMinutes(5));

        assertThat(result.applied()).containsEntry(id, JobState.RUNNING);
        assertThat(result.lost()).isEmpty();
        JobSnapshot running = queue.job(id);
        assertThat(running.state()).isEqualTo(JobState.RUNNING);
        assertThat(Duration.between(job.claimedAt(), running.leaseDeadline())).isBetween(Duration.ofMinutes(5),
                Duration.ofMinutes(6));
        // Only STARTING jobs start.
        assertThat(queue.store().markRunning(List.of(job.lease()), TestQueue.LEASE).lost()).containsExactly(job.lease());
    }

    @Test
    void heartbeatExtendsTheLeaseAndReportsCancellation() {
        long id = queue.client().enqueue("sync", 1).jobId();
        ClaimedJob job = queue.claim("sync", 1).get(0);
        queue.store().markRunning(List.of(job.lease()), Duration.ofSeconds(1));

        FencedResult beat = queue.store().heartbeat(List.of(job.lease()), Duration.ofHours(1));
        assertThat(beat.applied()).containsKey(id);
        assertThat(beat.cancelRequested()).isEmpty();
        assertThat(queue.job(id).leaseDeadline()).isAfter(job.claimedAt().plus(Duration.ofMinutes(59)));

        assertThat(queue.client().cancel(id)).isEqualTo(CancelResult.CANCEL_REQUESTED);
        assertThat(queue.store().heartbeat(List.of(job.lease()), Duration.ofHours(1)).cancelRequested()).containsExactly(id);
    }

    @Test
    void aStaleHolderChangesNothing() {
        long id = queue.client().enqueue("sync", "v1").jobId();
        ClaimedJob first = queue.claim("worker-a", "sync", 1).get(0);
        queue.store().markRunning(List.of(first.lease()), TestQueue.LEASE);

        // worker-a stalls; its lease expires; the rescuer hands the job to worker-b.
        queue.expireLease(id);
        assertThat(queue.store().rescueExpiredLeases(100).applied()).containsEntry(id, JobState.READY);
        ClaimedJob second = queue.claim("worker-b", "sync", 1).get(0);
        assertThat(second.id()).isEqualTo(id);
        assertThat(second.lease().epoch()).isGreaterThan(first.lease().epoch());
        assertThat(second.attempt()).isEqualTo(2);

        // Everything worker-a tries now is fenced off and reported as lost.
        Lease stale = first.lease();
        assertThat(queue.store().heartbeat(List.of(stale), Duration.ofHours(1)).lost()).containsExactly(stale);
        assertThat(queue.store().markRunning(List.of(stale), Duration.ofHours(1)).lost()).containsExactly(stale);
        assertThat(queue.store().record(List.of(Outcome.completed(stale))).lost()).containsExactly(stale);
        assertThat(queue.store().record(List.of(Outcome.failed(stale, "boom"))).lost()).containsExactly(stale);
        assertThat(queue.store().record(List.of(Outcome.retry(stale, Duration.ZERO, "boom"))).lost()).containsExactly(stale);
        assertThat(queue.store().record(List.of(Outcome.cancelled(stale))).lost()).containsExactly(stale);

        JobSnapshot job = queue.job(id);
        assertThat(job.state()).isEqualTo(JobState.STARTING);
        assertThat(job.leaseOwner()).isEqualTo("worker-b");
        assertThat(job.leaseDeadline()).isEqualTo(second.leaseDeadline());

        // worker-b's lease is intact and decides the outcome.
        FencedResult done = queue.store().record(List.of(Outcome.completed(second.lease())));
        assertThat(done.applied()).containsEntry(id, JobState.COMPLETED);
        assertThat(queue.state(id)).isEqualTo(JobState.COMPLETED);
        // ...once: a second completion with the same lease changes nothing.
        assertThat(queue.store().record(List.of(Outcome.completed(second.lease()))).lost()).hasSize(1);
    }

    @Test
    void aBatchMixesHeldAndLostLeases() {
        queue.client().enqueueAll(List.of(JobRequest.of("sync", 1), JobRequest.of("sync", 2), JobRequest.of("sync", 3)));
        List<ClaimedJob> jobs = queue.claim("sync", 3);
        queue.expireLease(jobs.get(1).id());
        queue.store().rescueExpiredLeases(10);

        FencedResult result = queue.store().record(List.of(Outcome.completed(jobs.get(0).lease()),
                Outcome.completed(jobs.get(1).lease()), Outcome.failed(jobs.get(2).lease(), "bad")));

        assertThat(result.applied()).containsOnlyKeys(jobs.get(0).id(), jobs.get(2).id());
        assertThat(result.count(JobState.COMPLETED)).isEqualTo(1);
        assertThat(result.count(JobState.FAILED)).isEqualTo(1);
        assertThat(result.lost()).containsExactly(jobs.get(1).lease());
        assertThat(queue.state(jobs.get(1).id())).isEqualTo(JobState.READY);
        assertThat(queue.job(jobs.get(2).id()).lastError()).isEqualTo("bad");
    }

    @Test
    void plainCompletionsAreWrittenWithoutLockingTheirRowsFirst() throws Exception {
        queue.client().enqueueAll(List.of(JobRequest.of("sync", 1), JobRequest.of("sync", 2), JobRequest.of("sync", 3)));
        List<ClaimedJob> jobs = queue.claim("sync", 3);
        List<Outcome> completions = jobs.stream().map(job -> Outcome.completed(job.lease())).toList();

        // Every lease holds: one DELETE, no held_leases (the per-row lock of the general path).
        long locked = queue.functionCalls("held_leases", store -> assertThat(store.record(completions).applied())
            .containsOnlyKeys(jobs.stream().map(ClaimedJob::id).toList())
            .containsValue(JobState.COMPLETED));

        assertThat(locked).isZero();
        assertThat(queue.activeJobs()).isZero();
        assertThat(queue.finishedJobs()).isEqualTo(3);
        // A completion with progress to store takes the general path.
        long id = queue.client().enqueue("sync", 4).jobId();
        Lease lease = queue.claim("sync", 1).get(0).lease();
        assertThat(queue.functionCalls("held_leases",
                store -> store.record(List.of(Outcome.completed(lease).withProgress("\"done\""))))).isEqualTo(1);
        assertThat(queue.job(id).progress()).isEqualTo("\"done\"");
    }

    @Test
    void aBatchOfCompletionsWithALostLeaseCompletesOnlyTheHeldOnes() throws Exception {
        queue.client().enqueueAll(List.of(JobRequest.of("sync", 1), JobRequest.of("sync", 2), JobRequest.of("sync", 3)));
        List<ClaimedJob> jobs = queue.claim("worker-a", "sync", 3);
        // The middle job's lease expires and worker-b takes it over.
        queue.expireLease(jobs.get(1).id());
        queue.store().rescueExpiredLeases(10);
        ClaimedJob takenOver = queue.claim("worker-b", "sync", 1).get(0);
        assertThat(takenOver.id()).isEqualTo(jobs.get(1).id());

        FencedResult result = queue.store().record(jobs.stream().map(job -> Outcome.completed(job.lease())).toList());

        assertThat(result.applied()).containsOnlyKeys(jobs.get(0).id(), jobs.get(2).id());
        assertThat(result.lost()).containsExactly(jobs.get(1).lease());
        JobSnapshot other = queue.job(takenOver.id());
        assertThat(other.state()).isEqualTo(JobState.STARTING);
        assertThat(other.leaseOwner()).isEqualTo("worker-b");
        assertThat(queue.finishedJobs()).isEqualTo(2);
        assertThat(queue.activeJobs()).isEqualTo(1);
    }

    @Test
    void aReRunRequestedDuringABatchOfCompletionsIsKept() throws Exception {
        queue.client().enqueueAll(List.of(JobRequest.of("sync", 1), JobRequest.of("sync", 2)));
        List<ClaimedJob> jobs = queue.claim("sync", 2);
        // As a duplicate enqueue under DedupPolicy.rerun() asks while the job runs.
        queue.jdbc().update("UPDATE " + queue.config().schema() + ".job SET rerun_requested = true WHERE id = ?",
                jobs.get(1).id());

        FencedResult[] written = new FencedResult[1];
        long locked = queue.functionCalls("held_leases",
                store -> written[0] = store.record(jobs.stream().map(job -> Outcome.completed(job.lease())).toList()));
        FencedResult result = written[0];

        // The job asked to re-run went through the general path (locked, then decided).
        assertThat(locked).isEqualTo(1);
        assertThat(result.applied()).containsEntry(jobs.get(0).id(), JobState.COMPLETED)
            .containsEntry(jobs.get(1).id(), JobState.READY);
        JobSnapshot again = queue.job(jobs.get(1).id());
        assertThat(again.state()).isEqualTo(JobState.READY);
        assertThat(again.attempt()).isZero();
        assertThat(queue.finishedJobs()).isEqualTo(1);
    }

    @Test
    void aReRunRequestedWhileTheCompletionsWaitForTheRowIsKept() throws Exception {
        queue.client().enqueueAll(List.of(JobRequest.of("sync", 1), JobRequest.of("sync", 2)));
        List<ClaimedJob> jobs = queue.claim("sync", 2);
        long asked = jobs.get(1).id();
        try (Connection other = queue.dataSource().getConnection()) {
            // Another transaction asks for a re-run and holds the row until it commits.
            other.setAutoCommit(false);
            try (PreparedStatement request = other.prepareStatement(
                    "UPDATE " + queue.config().schema() + ".job SET rerun_requested = true WHERE id = ?")) {
                request.setLong(1, asked);
                request.executeUpdate();
            }
            CompletableFuture<FencedResult> written = CompletableFuture.supplyAsync(
                    () -> queue.store().record(jobs.stream().map(job -> Outcome.completed(job.lease())).toList()));
            await().atMost(Duration.ofSeconds(10)).until(() -> queue.jdbc().queryForObject(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%complete_jobs%'",
                    Long.class) == 1);
            other.commit();

            // The DELETE found the row changed and checked its newest version: the re-run stands.
            FencedResult result = written.get();
            assertThat(result.applied()).containsEntry(jobs.get(0).id(), JobState.COMPLETED)
                .containsEntry(asked, JobState.READY);
        }
        assertThat(queue.job(asked).state()).isEqualTo(JobState.READY);
        assertThat(queue.job(asked).attempt()).isZero();
        assertThat(queue.finishedJobs()).isEqualTo(1);
    }

    @Test
    void completedJobsLeaveTheHotTable() {
        long id = queue.client().enqueue("sync", 1).jobId();
        queue.store().record(List.of(Outcome.completed(queue.claim("sync", 1).get(0).lease())));

        assertThat(queue.activeJobs()).isZero();
        JobSnapshot done = queue.job(id);
        assertThat(done.state()).isEqualTo(JobState.COMPLETED);
        assertThat(done.finishedAt()).isNotNull();
        assertThat(done.leaseOwner()).isEqualTo("worker-1");
    }

    @Test
    void completedJobsAreNotKeptWithZeroRetention() {
        TestQueue forgetful = TestQueue.on(queue.dataSource(), QueueConfig.defaults().withSchema("forgetful")
            .withCompletedRetention(Duration.ZERO), TaskDefinition.builder("sync").build());
        long ok = forgetful.client().enqueue("sync", 1).jobId();
        long bad = forgetful.client().enqueue("sync", 2).jobId();
        List<ClaimedJob> jobs = forgetful.claim("sync", 2);
        ClaimedJob okJob = jobs.stream().filter(j -> j.id() == ok).findFirst().orElseThrow();
        ClaimedJob badJob = jobs.stream().filter(j -> j.id() == bad).findFirst().orElseThrow();

        forgetful.store().record(List.of(Outcome.completed(okJob.lease()), Outcome.failed(badJob.lease(), "x")));

        assertThat(forgetful.store().find(ok)).isEmpty();
        assertThat(forgetful.state(bad)).isEqualTo(JobState.FAILED);
    }

    @Test
    void fencedWritePlansMadeOnATinyTableStillProbeThePrimaryKeyOnceTheTableHasGrown() throws Exception {
        // Start, heartbeat and outcome functions keep the plans of a connection's first calls;
        // made while the table held one row, unconstrained plans would scan the whole table (once
        // per lease, in the probe) once it holds many.
        long[] scans = queue.jobTableScansOnceGrown("sync", store -> writeEachWay(store, leases(store, 1)), store -> {
            List<Lease> grown = leases(store, 5);
            return () -> writeEachWay(store, grown);
        });

        assertThat(scans[0]).as("sequential scans of the job table").isZero();
        assertThat(scans[1]).as("index scans of the job table").isPositive();
        // Rows fetched for 5 leases written three ways, not the 20,000 of a whole-index walk.
        assertThat(scans[2]).as("rows fetched through indexes").isLessThan(100);
        assertThat(queue.activeJobs()).isEqualTo(20000 - 5);
    }

    private static List<Lease> leases(JobStore store, int count) {
        List<Lease> leases = store.claim(List.of(new ClaimLimit("sync", count)), "w", JobState.STARTING, TestQueue.LEASE)
            .stream()
            .map(ClaimedJob::lease)
            .toList();
        assertThat(leases).hasSize(count);
        return leases;
    }

    /** Starts, heartbeats and completes the jobs, checking that each write applied to all of them. */
    private static void writeEachWay(JobStore store, List<Lease> leases) {
        assertThat(store.markRunning(leases, TestQueue.LEASE).applied()).hasSize(leases.size());
        assertThat(store.heartbeat(leases, TestQueue.LEASE).applied()).hasSize(leases.size());
        assertThat(store.record(leases.stream().map(Outcome::completed).toList()).applied())
            .hasSize(leases.size())
            .containsValue(JobState.COMPLETED);
    }
}
