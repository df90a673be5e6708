package io.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RetentionTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(TestQueue.task("copy"));

    @Test
    void deletesOnlyFinishedJobsOfTheStateOlderThanTheAge() {
        List<Long> completed = finish(25, true);
        List<Long> failed = finish(5, false);
        long active = queue.client().enqueue("copy", "still queued").jobId();
        // Ten completed and all failed jobs finished two hours ago.
        queue.jdbc().update("UPDATE pgqueue.job_finished SET finished_at = now() - interval '2 hours' "
                + "WHERE id = ANY(?)", (Object) completed.subList(0, 10).toArray(Long[]::new));
        queue.jdbc().update("UPDATE pgqueue.job_finished SET finished_at = now() - interval '2 hours' WHERE state = 'FAILED'");

        long deleted = queue.store().purgeFinished(JobState.COMPLETED, Duration.ofHours(1), 3);

        assertThat(deleted).isEqualTo(10);
        assertThat(completed.subList(0, 10)).allMatch(id -> queue.store().find(id).isEmpty());
        assertThat(completed.subList(10, 25)).allMatch(id -> queue.store().find(id).isPresent());
        assertThat(failed).allMatch(id -> queue.state(id) == JobState.FAILED);
        assertThat(queue.state(active)).isEqualTo(JobState.READY);

        assertThat(queue.store().purgeFinished(JobState.FAILED, Duration.ofDays(7), 100)).isZero();
        assertThat(queue.store().purgeFinished(JobState.FAILED, Duration.ofHours(1), 100)).isEqualTo(5);
    }

    @Test
    void deletesInBoundedBatches() {
        finish(25, true);
        queue.jdbc().update("UPDATE pgqueue.job_finished SET finished_at = now() - interval '1 day'");

        assertThat(queue.store().deleteFinishedBefore(JobState.COMPLETED, Duration.ofHours(1), 10)).isEqualTo(10);
        assertThat(queue.finishedJobs()).isEqualTo(15);
    }

    @Test
    void activeStatesHaveNoRetention() {
        assertThatThrownBy(() -> queue.store().purgeFinished(JobState.READY, Duration.ZERO, 10))
            .isInstanceOf(IllegalArgumentException.class);
    }

    private List<Long> finish(int count, boolean success) {
        List<JobRequest> requests = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            requests.add(JobRequest.of("copy", i));
        }
        List<Long> ids = queue.client().enqueueAll(requests).stream().map(EnqueueResult::jobId).toList();
        List<ClaimedJob> jobs = queue.claim("copy", count);
        queue.store().record(jobs.stream()
            .map(j -> success ? Outcome.completed(j.lease()) : Outcome.failed(j.lease(), "no"))
            .toList());
        return ids;
    }
}
