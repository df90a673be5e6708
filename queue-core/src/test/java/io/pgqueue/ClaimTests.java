package io.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ClaimTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(TestQueue.task("a"), TestQueue.task("b"), TestQueue.task("c"));

    @Test
    void claimSetsStartingLeaseAndAttempt() {
        long id = queue.client().enqueue("a", "x").jobId();

        List<ClaimedJob> claimed = queue.claim("node-7", "a", 10);

        assertThat(claimed).hasSize(1);
        ClaimedJob job = claimed.get(0);
        assertThat(job.id()).isEqualTo(id);
        assertThat(job.attempt()).isEqualTo(1);
        assertThat(job.lease().epoch()).isEqualTo(1);
        assertThat(job.payload()).isEqualTo("\"x\"");
        assertThat(Duration.between(job.claimedAt(), job.leaseDeadline())).isEqualTo(TestQueue.LEASE);
        JobSnapshot stored = queue.job(id);
        assertThat(stored.state()).isEqualTo(JobState.STARTING);
        assertThat(stored.leaseOwner()).isEqualTo("node-7");
        assertThat(stored.leaseDeadline()).isEqualTo(job.leaseDeadline());
        // Claimed jobs are not claimed again.
        assertThat(queue.claim("a", 10)).isEmpty();
    }

    @Test
    void aClaimCommitsDurablyWhereTheWorkersOtherWritesDoNot() {
        queue.client().enqueue("b", "x");
        TransactionTemplate transaction = new TransactionTemplate(new DataSourceTransactionManager(queue.dataSource()));

        String afterClaim = transaction.execute(status -> {
            // The test server commits asynchronously by default; a production server does not.
            queue.jdbc().execute("SET LOCAL synchronous_commit = on");
            assertThat(queue.store().claim(List.of(new ClaimLimit("b", 1)), "w", JobState.STARTING, TestQueue.LEASE))
                .hasSize(1);
            return queue.jdbc().queryForObject("SELECT current_setting('synchronous_commit')", String.class);
        });

        // A claim lost in a crash would let the next one hand out the same lease epoch.
        assertThat(afterClaim).isEqualTo("on");
    }

    @Test
    void claimCanGoStraightToRunning() {
        long id = queue.client().enqueue("a", "x").jobId();

        queue.store().claim(List.of(new ClaimLimit("a", 1)), "w", JobState.RUNNING, TestQueue.LEASE);

        assertThat(queue.state(id)).isEqualTo(JobState.RUNNING);
        assertThatThrownBy(() -> queue.store().claim(List.of(new ClaimLimit("a", 1)), "w", JobState.READY,
                TestQueue.LEASE)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void higherPriorityGoesFirst() {
        long low = queue.client().enqueue("a", "low", EnqueueOptions.defaults().withPriority(-5)).jobId();
        long normal = queue.client().enqueue("a", "normal").jobId();
        long high = queue.client().enqueue("a", "high", EnqueueOptions.defaults().withPriority(10)).jobId();

        assertThat(claimOneByOne("a", 3)).containsExactly(high, normal, low);
    }

    @Test
    void delayToleranceTurnsIntoDeadlines() {
        // The design brief's example, read in seconds: the "black" job became due at :00 with 10 s of
        // tolerance (deadline :10), the "orange" one at :05 with 1 s (deadline :06). Orange is older
        // in no sense, yet it goes first because its deadline is earlier.
        Instant zero = Instant.now().minus(Duration.ofSeconds(30));
        long black = queue.client().enqueue("a", "black", EnqueueOptions.defaults().withRunAt(zero)
            .withDelayTolerance(Duration.ofSeconds(10))).jobId();
        long orange = queue.client().enqueue("a", "orange", EnqueueOptions.defaults()
            .withRunAt(zero.plusSeconds(5)).withDelayTolerance(Duration.ofSeconds(1))).jobId();

        assertThat(claimOneByOne("a", 2)).containsExactly(orange, black);
    }

    @Test
    void deadlinesDecideNotCreationTimes() {
        // Read in minutes, the same example gives deadlines 10:00:10 and 10:05:01: the 10:00 job's
        // deadline is earlier, so it goes first. The order is always the deadline order.
        Instant ten = Instant.parse("2025-01-01T10:00:00Z");
        long at1000 = queue.client().enqueue("a", "10:00/10s", EnqueueOptions.defaults().withRunAt(ten)
            .withDelayTolerance(Duration.ofSeconds(10))).jobId();
        long at1005 = queue.client().enqueue("a", "10:05/1s", EnqueueOptions.defaults()
            .withRunAt(ten.plus(Duration.ofMinutes(5))).withDelayTolerance(Duration.ofSeconds(1))).jobId();
        // A job without tolerance orders by its schedule time.
        long at1003 = queue.client().enqueue("a", "10:03", EnqueueOptions.defaults()
            .withRunAt(ten.plus(Duration.ofMinutes(3)))).jobId();

        assertThat(claimOneByOne("a", 3)).containsExactly(at1000, at1003, at1005);
    }

    @Test
    void priorityComesBeforeDeadlines() {
        long urgent = queue.client().enqueue("a", "urgent", EnqueueOptions.defaults()
            .withDelayTolerance(Duration.ZERO)).jobId();
        long important = queue.client().enqueue("a", "important", EnqueueOptions.defaults()
            .withPriority(1).withDelayTolerance(Duration.ofHours(1))).jobId();

        assertThat(claimOneByOne("a", 2)).containsExactly(important, urgent);
    }

    @Test
    void scheduledJobsStayInvisibleUntilDue() {
        long later = queue.client().enqueue("a", "later", EnqueueOptions.defaults().withDelay(Duration.ofHours(1))
            .withPriority(1000)).jobId();
        long now = queue.client().enqueue("a", "now").jobId();

        assertThat(claimOneByOne("a", 5)).containsExactly(now);

        queue.makeDue(later);
        assertThat(claimOneByOne("a", 5)).containsExactly(later);
    }

    @Test
    void oneStatementClaimsManyTasksEachWithItsOwnLimit() {
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            jobs.add(JobRequest.of("a", i));
            jobs.add(JobRequest.of("b", i));
            jobs.add(JobRequest.of("c", i));
        }
        queue.client().enqueueAll(jobs);

        List<ClaimedJob> claimed = queue.store().claim(
                List.of(new ClaimLimit("a", 3), new ClaimLimit("b", 7), new ClaimLimit("c", 50)), "w",
                JobState.STARTING, TestQueue.LEASE);

        Map<String, Long> perTask = claimed.stream().collect(Collectors.groupingBy(ClaimedJob::task, Collectors.counting()));
        assertThat(perTask).containsExactlyInAnyOrderEntriesOf(Map.of("a", 3L, "b", 7L, "c", 10L));
        assertThat(queue.store().claim(List.of(), "w", JobState.STARTING, TestQueue.LEASE)).isEmpty();
    }

    @Test
    void claimIgnoresTasksNotAsked() {
        queue.client().enqueue("b", 1);

        assertThat(queue.claim("a", 10)).isEmpty();
        assertThat(queue.claim("b", 10)).hasSize(1);
    }

    @Test
    void aClaimPlanMadeOnATinyTableStillWalksTheIndexOnceTheTableHasGrown() throws Exception {
        // The claim function keeps the plan of a connection's first claim; made while the table
        // held one row, an unconstrained plan would scan the whole table once it holds many.
        long[] claimScans = queue.jobTableScansOnceGrown("a",
                store -> assertThat(store.claim(List.of(new ClaimLimit("a", 1)), "w", JobState.STARTING, TestQueue.LEASE))
                    .hasSize(1),
                store -> () -> assertThat(store.claim(List.of(new ClaimLimit("a", 5)), "w", JobState.STARTING,
                        TestQueue.LEASE)).hasSize(5));

        assertThat(claimScans[0]).as("sequential scans of the job table").isZero();
        assertThat(claimScans[1]).as("index scans of the job table").isPositive();
        // Rows fetched for a claim of 5 jobs, not the 20,000 of a whole-index walk.
        assertThat(claimScans[2]).as("rows fetched through indexes").isLessThan(100);
    }

    private List<Long> claimOneByOne(String task, int max) {
        List<Long> order = new ArrayList<>();
        for (int i = 0; i < max; i++) {
            List<ClaimedJob> claimed = queue.claim(task, 1);
            if (claimed.isEmpty()) {
                break;
            }
            order.add(claimed.get(0).id());
        }
        return order;
    }
}
