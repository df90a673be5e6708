package io.pgqueue.internal.store;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import io.pgqueue.EnqueueOptions;
import io.pgqueue.JobPage;
import io.pgqueue.JobQuery.Group;
import io.pgqueue.JobQuery;
import io.pgqueue.JobState;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class JobListingTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(TestQueue.task("copy"), TestQueue.task("mail"));

    private static final Instant BASE = Instant.parse("2026-03-01T12:00:00Z");

    @BeforeEach
    void clear() {
        queue.clear();
    }

    @Test
    void pagesOfFinishedJobsCoverEveryJobOnceNewestFirstAlsoWhenFinishTimesTie() {
        // 120 failed jobs, three to a finish time, ids not in finish order.
        for (int i = 0; i < 120; i++) {
            finished(1_000 + (i * 37) % 120, i % 2 == 0 ? "copy" : "mail", "FAILED", BASE.plusSeconds(i / 3),
                    null, "boom " + i);
        }
        List<JobPage.Job> seen = new ArrayList<>();
        JobQuery query = JobQuery.of(Group.FAILED).withLimit(25);
        JobPage page = queue.store().list(query);
        int pages = 1;
        while (page.next() != null) {
            assertThat(page.jobs()).hasSize(25);
            seen.addAll(page.jobs());
            page = queue.store().list(query.after(page.next()));
            pages++;
        }
        seen.addAll(page.jobs());

        assertThat(pages).isEqualTo(5);
        assertThat(seen).hasSize(120);
        assertThat(seen).extracting(JobPage.Job::id).doesNotHaveDuplicates();
        assertThat(seen).isSortedAccordingTo(Comparator.comparing(JobPage.Job::finishedAt)
            .thenComparingLong(JobPage.Job::id).reversed());
        assertThat(seen.get(0).error()).startsWith("boom ");
        assertThat(seen).allSatisfy(job -> assertThat(job.state()).isEqualTo(JobState.FAILED));
    }

    @Test
    void finishedJobsAreFilteredByTaskTimeRangeDedupKeyAndErrorText() {
        for (int i = 0; i < 40; i++) {
            finished(2_000 + i, i % 4 == 0 ? "mail" : "copy", i % 5 == 0 ? "COMPLETED" : "FAILED",
                    BASE.plus(Duration.ofMinutes(i)), "key-" + i,
                    i == 17 ? "java.net.SocketTimeoutException: Read timed out\n\tat x.y(Z.java:1)" : "refused");
        }

        assertThat(ids(JobQuery.of(Group.FAILED).withTask("mail"))).containsExactly(2036L, 2032L, 2028L, 2024L,
                2016L, 2012L, 2008L, 2004L);
        assertThat(ids(JobQuery.of(Group.COMPLETED))).containsExactly(2035L, 2030L, 2025L, 2020L, 2015L, 2010L,
                2005L, 2000L);
        assertThat(ids(JobQuery.of(Group.FAILED).withTimeRange(BASE.plus(Duration.ofMinutes(10)),
                BASE.plus(Duration.ofMinutes(14))))).containsExactly(2013L, 2012L, 2011L);
        assertThat(ids(JobQuery.of(Group.FAILED).withDedupKey("key-21"))).containsExactly(2021L);
        assertThat(ids(JobQuery.of(Group.COMPLETED).withDedupKey("key-21"))).isEmpty();

        JobPage timeouts = queue.store().list(JobQuery.of(Group.FAILED).withErrorText("read TIMED"));
        assertThat(timeouts.jobs()).extracting(JobPage.Job::id).containsExactly(2017L);
        assertThat(timeouts.jobs().get(0).error()).as("the first line only")
            .isEqualTo("java.net.SocketTimeoutException: Read timed out");
        assertThat(ids(JobQuery.of(Group.FAILED).withErrorText("100%_\\"))).as("the text is not a pattern").isEmpty();
    }

    @Test
    void activeJobsAreListedByGroupOldestFirst() {
        long ready1 = queue.client().enqueue("copy", 1).jobId();
        long later = queue.client().enqueue("copy", 2, EnqueueOptions.defaults().withDelay(Duration.ofHours(1))).jobId();
        long claimed = queue.client().enqueue("mail", 3, EnqueueOptions.defaults().withDedupKey("m-3")).jobId();
        long ready2 = queue.client().enqueue("mail", 4).jobId();
        long waiting = queue.client().enqueue("copy", 5, EnqueueOptions.defaults().withDependsOn(later)).jobId();
        assertThat(queue.claim("mail", 1)).extracting(ClaimedJob::id).containsExactly(claimed);
        long ready3 = queue.client().enqueue("mail", 6).jobId();

        assertThat(ids(JobQuery.of(Group.READY))).containsExactly(ready1, ready2, ready3);
        assertThat(ids(JobQuery.of(Group.READY).withTask("mail"))).containsExactly(ready2, ready3);
        assertThat(ids(JobQuery.of(Group.SCHEDULED))).containsExactly(later);
        assertThat(ids(JobQuery.of(Group.RUNNING))).containsExactly(claimed);
        assertThat(ids(JobQuery.of(Group.RUNNING).withDedupKey("m-3"))).containsExactly(claimed);
        assertThat(ids(JobQuery.of(Group.READY).withDedupKey("m-3"))).isEmpty();
        assertThat(ids(JobQuery.of(Group.WAITING))).containsExactly(waiting);
        assertThat(queue.store().list(JobQuery.of(Group.RUNNING)).jobs().get(0).leaseOwner()).isNotNull();

        JobPage first = queue.store().list(JobQuery.of(Group.READY).withLimit(2));
        assertThat(first.jobs()).extracting(JobPage.Job::id).containsExactly(ready1, ready2);
        assertThat(ids(JobQuery.of(Group.READY).withLimit(2).after(first.next()))).containsExactly(ready3);
        assertThat(ids(JobQuery.of(Group.READY).withTimeRange(Instant.now().minus(1, ChronoUnit.DAYS),
                Instant.now().minus(1, ChronoUnit.HOURS)))).isEmpty();
    }

    @Test
    void badQueriesAreRefusedWithWhatIsWrong() {
        assertThatIllegalArgumentException().isThrownBy(() -> JobQuery.of(Group.FAILED).after("12"))
            .withMessageContaining("not a page position of FAILED jobs");
        assertThatIllegalArgumentException().isThrownBy(() -> JobQuery.of(Group.READY).after("x"))
            .withMessageContaining("not a page position");
        assertThatIllegalArgumentException().isThrownBy(() -> JobQuery.of(Group.READY).withLimit(501))
            .withMessageContaining("1 to 500");
        assertThatIllegalArgumentException().isThrownBy(() -> JobQuery.of(Group.READY).withTimeRange(BASE, BASE))
            .withMessageContaining("time range is empty");
        assertThatIllegalArgumentException().isThrownBy(() -> Group.of("done"))
            .withMessageContaining("Unknown group of jobs 'done'");
        assertThat(Group.of(" failed ")).isEqualTo(Group.FAILED);
    }

    @Test
    void theListingOfTheReleaseBeforeStillAnswersItsNodes() {
        for (int i = 0; i < 12; i++) {
            finished(3_000 + i, "copy", "FAILED", BASE.plusSeconds(i), null, i % 2 == 0 ? "timeout" : "refused");
        }
        List<Long> listed = queue.jdbc().queryForList("SELECT id FROM pgqueue.list_jobs('FAILED', 'copy', NULL, NULL, "
                + "NULL, 'timeout', NULL, NULL, 5)", Long.class);
        assertThat(listed).containsExactly(3010L, 3008L, 3006L, 3004L, 3002L)
            .isEqualTo(ids(JobQuery.of(Group.FAILED).withTask("copy").withErrorText("timeout").withLimit(5)));
    }

    private static List<Long> ids(JobQuery query) {
        return queue.store().list(query).jobs().stream().map(JobPage.Job::id).toList();
    }

    private static void finished(long id, String task, String state, Instant finishedAt, String dedupKey, String error) {
        queue.jdbc().update("""
                INSERT INTO pgqueue.job_finished (id, task, state, priority, payload, headers, schedule_time, attempt,
                                                  max_attempts, dedup_key, last_error, created_at, started_at, finished_at)
                VALUES (?, ?, ?, 0, '{}', '{}', ?, 1, 1, ?, ?, ?, ?, ?)
                """, id, task, state, java.sql.Timestamp.from(finishedAt.minusSeconds(10)), dedupKey, error,
                java.sql.Timestamp.from(finishedAt.minusSeconds(10)), java.sql.Timestamp.from(finishedAt.minusSeconds(1)),
                java.sql.Timestamp.from(finishedAt));
    }
}
