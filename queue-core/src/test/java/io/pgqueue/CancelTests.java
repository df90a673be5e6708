package io.pgqueue;

import java.util.List;

import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

class CancelTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(TestQueue.task("copy"));

    @Test
    void aReadyJobIsCancelledAtOnce() {
        long id = queue.client().enqueue("copy", 1).jobId();

        assertThat(queue.client().cancel(id)).isEqualTo(CancelResult.CANCELLED);

        JobSnapshot job = queue.job(id);
        assertThat(job.state()).isEqualTo(JobState.CANCELLED);
        assertThat(job.finishedAt()).isNotNull();
        assertThat(queue.claim("copy", 10)).isEmpty();
        assertThat(queue.client().cancel(id)).isEqualTo(CancelResult.ALREADY_FINISHED);
    }

    @Test
    void aBufferedJobWhoseCancellationWasRequestedEndsCancelledWhenHandedBack() {
        long id = queue.client().enqueue("copy", 1).jobId();
        ClaimedJob job = queue.claim("copy", 1).get(0);
        assertThat(queue.client().cancel(id)).isEqualTo(CancelResult.CANCEL_REQUESTED);

        // The node stops before the job started: it hands the job back.
        assertThat(queue.store().release(List.of(job.lease())).applied()).containsEntry(id, JobState.CANCELLED);

        JobSnapshot cancelled = queue.job(id);
        assertThat(cancelled.state()).isEqualTo(JobState.CANCELLED);
        assertThat(cancelled.attempt()).as("the attempt never ran").isZero();
        assertThat(queue.claim("copy", 10)).isEmpty();
    }

    @Test
    void aRunningJobGetsARequestAndEndsCancelledWhenItsWorkerStops() {
        long id = queue.client().enqueue("copy", 1).jobId();
        ClaimedJob job = queue.claim("copy", 1).get(0);
        queue.store().markRunning(List.of(job.lease()), TestQueue.LEASE);

        assertThat(queue.client().cancel(id)).isEqualTo(CancelResult.CANCEL_REQUESTED);
        assertThat(queue.state(id)).isEqualTo(JobState.RUNNING);
        assertThat(queue.job(id).cancelRequested()).isTrue();

        // The worker saw the request and stopped its handler.
        assertThat(queue.store().record(List.of(Outcome.cancelled(job.lease()))).applied()).containsEntry(id,
                JobState.CANCELLED);
        assertThat(queue.state(id)).isEqualTo(JobState.CANCELLED);
    }

    @Test
    void aCancelRequestTurnsAFailureIntoCancellationButLetsASuccessStand() {
        long failing = queue.client().enqueue("copy", 1).jobId();
        long succeeding = queue.client().enqueue("copy", 2).jobId();
        List<ClaimedJob> jobs = queue.claim("copy", 2);
        queue.client().cancel(failing);
        queue.client().cancel(succeeding);

        queue.store().record(jobs.stream()
            .map(j -> j.id() == failing ? queue.outcomes().failed(j, new RuntimeException("interrupted"))
                    : Outcome.completed(j.lease()))
            .toList());

        assertThat(queue.state(failing)).isEqualTo(JobState.CANCELLED);
        assertThat(queue.state(succeeding)).isEqualTo(JobState.COMPLETED);
    }

    @Test
    void unknownJobsAreReported() {
        assertThat(queue.client().cancel(987654321L)).isEqualTo(CancelResult.NOT_FOUND);
    }
}
