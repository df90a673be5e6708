package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;

import io.pgqueue.JobState;
import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.FencedResult;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.internal.store.NewJob;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The completer's batching: a start waits briefly for its job's outcome, so a job that finishes at
 * once is never written as RUNNING, and a start alone is still written; outcomes that keep coming
 * are written at most once per spacing.
 */
class CompleterTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass();

    private final List<FencedResult> startWrites = new CopyOnWriteArrayList<>();

    private final List<List<Lease>> outcomeWrites = new CopyOnWriteArrayList<>();

    private Completer completer;

    @BeforeEach
    void start() {
        this.completer = new Completer(queue.store(), Duration.ofSeconds(30), 100, new Completer.Listener() {
            @Override
            public void startsWritten(FencedResult result) {
                CompleterTests.this.startWrites.add(result);
            }

            @Override
            public void outcomesWritten(List<Lease> leases, FencedResult result) {
                CompleterTests.this.outcomeWrites.add(leases);
            }

            @Override
            public void requeued(String task, Duration delay) {
            }
        }, new QueueEvents() {
        }, "");
        this.completer.start();
    }

    @AfterEach
    void stop() {
        this.completer.stop();
    }

    @Test
    void outcomesThatKeepComingAreWrittenAtMostOncePerSpacing() throws Exception {
        List<Lease> leases = claim(40);
        long started = System.nanoTime();
        for (Lease lease : leases) {
            // One outcome every 0.5 ms: written as they came, each would go alone.
            this.completer.finished(Outcome.completed(lease));
            LockSupport.parkNanos(500_000);
        }
        assertThat(this.completer.awaitDrained(Duration.ofSeconds(10))).isTrue();
        long elapsedMillis = Duration.ofNanos(System.nanoTime() - started).toMillis();

        assertThat(this.outcomeWrites.stream().mapToInt(List::size).sum()).isEqualTo(40);
        for (Lease lease : leases) {
            assertThat(queue.store().find(lease.jobId()).orElseThrow().state()).isEqualTo(JobState.COMPLETED);
        }
        // The first outcome at once, then at most one write per 5 ms of the run.
        long spacingMillis = Duration.ofNanos(Completer.OUTCOME_SPACING_NANOS).toMillis();
        assertThat(this.outcomeWrites).hasSizeLessThanOrEqualTo((int) (elapsedMillis / spacingMillis) + 2);
        // The first did not wait for the spacing: fewer than its 5 ms of outcomes joined it.
        assertThat(this.outcomeWrites.get(0)).contains(leases.get(0)).hasSizeLessThan(10);
    }

    @Test
    void jobsThatFinishRightAfterTheyStartAreNotWrittenAsRunning() throws Exception {
        List<Lease> leases = claim(20);
        for (Lease lease : leases) {
            // A handler of 0.2 ms, one job at a time: written at once, every start would go alone.
            this.completer.started(lease);
            LockSupport.parkNanos(200_000);
            this.completer.finished(Outcome.completed(lease));
            // The next job comes 3 ms later, when a start written at once would have gone alone.
            Thread.sleep(3);
        }

        assertThat(this.completer.awaitDrained(Duration.ofSeconds(10))).isTrue();
        for (Lease lease : leases) {
            assertThat(queue.store().find(lease.jobId()).orElseThrow().state()).isEqualTo(JobState.COMPLETED);
        }
        // Without the linger nearly all 20 are written as RUNNING; the margin allows this thread
        // to stall past the linger now and then on a loaded machine (CI).
        long written = this.startWrites.stream().mapToLong(result -> result.applied().size()).sum();
        assertThat(written).as("jobs written as RUNNING").isLessThanOrEqualTo(8);
    }

    @Test
    void aStartWhoseJobKeepsRunningIsWrittenAfterTheLinger() throws Exception {
        Lease lease = claim(1).get(0);

        long startedAt = System.nanoTime();
        this.completer.started(lease);

        assertThat(this.completer.awaitDrained(Duration.ofSeconds(10))).isTrue();
        assertThat(System.nanoTime() - startedAt).isGreaterThanOrEqualTo(Completer.START_LINGER_NANOS);
        assertThat(queue.store().find(lease.jobId()).orElseThrow().state()).isEqualTo(JobState.RUNNING);
        assertThat(this.startWrites).anySatisfy(result -> assertThat(result.applied())
            .containsEntry(lease.jobId(), JobState.RUNNING));
    }

    private static List<Lease> claim(int count) {
        List<NewJob> jobs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            jobs.add(new NewJob("t", "1", "{}", 0, null, 0, null, 3, null));
        }
        queue.store().insert(jobs);
        List<Lease> leases = queue.store().claim(List.of(new ClaimLimit("t", count)), "w", JobState.STARTING,
                Duration.ofSeconds(30)).stream().map(ClaimedJob::lease).toList();
        assertThat(leases).hasSize(count);
        return leases;
    }
}
