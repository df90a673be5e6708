package io.pgqueue;

import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.pgqueue.JobQuery.Group;
import io.pgqueue.JobQuery.JsonMatch;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Searching jobs inside their payloads, headers, results and tags, combined with the listing's
 * other filters, through {@link QueueAdmin#jobs} and {@link QueueAdmin#count}.
 */
class JobSearchTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(TaskDefinition.builder("invoice").tags(List.of("billing")).build(),
            TestQueue.task("mail"));

    private static final Instant BASE = Instant.parse("2026-03-01T12:00:00Z");

    @BeforeEach
    void clear() {
        queue.clear();
    }

    @Test
    void activeJobsAreFoundByTheirPayloadHeadersAndTagsTheTaskTagsComingFirst() {
        QueueClient client = queue.client();
        List<Long> acme = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            String tenant = i % 3 == 0 ? "acme" : "globex";
            EnqueueOptions options = EnqueueOptions.defaults().withHeader("tenant", tenant);
            if (i % 2 == 0) {
                options = options.withTags("vip", "eu");
            }
            long id = client.enqueue(i % 5 == 0 ? "mail" : "invoice",
                    Map.of("customer", Map.of("id", i, "country", i < 10 ? "DE" : "FR"), "lines", List.of(Map.of("sku", "A-" + i))),
                    options).jobId();
            if (tenant.equals("acme")) {
                acme.add(id);
            }
        }
        QueueAdmin admin = queue.queue().admin();

        JobQuery byHeader = JobQuery.of(Group.READY).withMatch(JsonMatch.parse("headers.tenant=acme"));
        assertThat(ids(admin.jobs(byHeader))).containsExactlyElementsOf(acme);
        assertThat(admin.count(byHeader)).isEqualTo(10);

        JobQuery byPayload = JobQuery.of(Group.READY).withMatch(JsonMatch.parse("payload.customer.id=12"));
        assertThat(admin.jobs(byPayload).jobs()).singleElement().satisfies(job -> {
            assertThat(job.task()).isEqualTo("invoice");
            assertThat(job.tags()).containsExactly("billing", "vip", "eu");
        });
        assertThat(admin.count(JobQuery.of(Group.READY).withMatch(JsonMatch.parse("payload.lines.0.sku=A-7")))).isOne();
        assertThat(admin.count(JobQuery.of(Group.READY).withMatch(JsonMatch.parse("payload.customer.country=DE"))
            .withMatch(JsonMatch.parse("headers.tenant=acme")))).as("every match must hold").isEqualTo(4);

        assertThat(admin.count(JobQuery.of(Group.READY).withTags(List.of("vip")))).isEqualTo(15);
        assertThat(admin.count(JobQuery.of(Group.READY).withTags(List.of("vip", "billing")))).isEqualTo(12);
        assertThat(admin.count(JobQuery.of(Group.READY).withTags(List.of("billing")).withTask("mail"))).isZero();
        assertThat(admin.count(JobQuery.of(Group.READY).withTags(List.of("vi")))).as("a whole tag, not a part").isZero();
        assertThat(admin.count(JobQuery.of(Group.SCHEDULED).withTags(List.of("vip")))).isZero();

        JobSnapshot tagged = client.find(admin.jobs(byPayload).jobs().get(0).id()).orElseThrow();
        assertThat(JobTags.of(headers(tagged))).containsExactly("billing", "vip", "eu");
    }

    @Test
    void finishedJobsAreFoundByTheirResultsAndPagesOfASearchCoverEachMatchOnce() {
        for (int i = 0; i < 60; i++) {
            finished(5_000 + i, i % 2 == 0 ? "COMPLETED" : "FAILED", BASE.plusSeconds(i),
                    "{\"order\": " + (i % 4) + "}", i % 3 == 0 ? "{\"pgqueue.tags\": \"refund\"}" : "{}");
            if (i % 2 == 0) {
                queue.jdbc().update("INSERT INTO pgqueue.job_result (id, result, completed) VALUES (?, CAST(? AS jsonb), true)",
                        5_000L + i, "{\"status\": \"" + (i % 10 == 0 ? "partial" : "paid") + "\", \"amount\": " + i + "}");
            }
        }
        QueueAdmin admin = queue.queue().admin();

        JobQuery partial = JobQuery.of(Group.COMPLETED).withMatch(JsonMatch.parse("result.status=partial"));
        assertThat(ids(admin.jobs(partial))).containsExactly(5050L, 5040L, 5030L, 5020L, 5010L, 5000L);
        assertThat(admin.count(JobQuery.of(Group.COMPLETED).withMatch(JsonMatch.parse("result.amount=42")))).isOne();
        assertThat(admin.count(JobQuery.of(Group.FAILED).withMatch(JsonMatch.parse("result.status=paid"))))
            .as("only completed jobs have a result").isZero();

        JobQuery refunds = JobQuery.of(Group.FAILED).withTags(List.of("refund")).withMatch(JsonMatch.parse("payload.order=1"))
            .withLimit(2);
        List<Long> seen = new ArrayList<>();
        JobPage page = admin.jobs(refunds);
        seen.addAll(ids(page));
        while (page.next() != null) {
            page = admin.jobs(refunds.after(page.next()));
            seen.addAll(ids(page));
        }
        // Failed (odd i), tagged (i % 3 == 0), order 1 (i % 4 == 1): i = 9, 21, 33, 45, 57.
        assertThat(seen).containsExactly(5057L, 5045L, 5033L, 5021L, 5009L);
        assertThat(admin.count(refunds.after(page.next()))).isEqualTo(5);
        assertThat(admin.count(refunds.withTimeRange(BASE.plusSeconds(20), BASE.plusSeconds(40)))).isEqualTo(2);
        assertThat(admin.count(refunds.withIds(List.of(5009L, 5010L, 5021L)))).isEqualTo(2);
    }

    @Test
    void matchesAndTagsThatCannotBeSearchedAreRefusedSayingHow() {
        assertThatIllegalArgumentException().isThrownBy(() -> JsonMatch.parse("customer.id=4"))
            .withMessageContaining("looks in payload, headers or result, not 'customer'");
        assertThatIllegalArgumentException().isThrownBy(() -> JsonMatch.parse("payload.id"))
            .withMessageContaining("write it as payload.<path>=<value>");
        assertThatIllegalArgumentException().isThrownBy(() -> JsonMatch.parse("payload..id=4"))
            .withMessageContaining("a path of non-empty keys");
        assertThat(JsonMatch.parse("headers.mdc.requestId=a=b")).satisfies(match -> {
            assertThat(match.path()).as("a header's name is all of it").containsExactly("mdc.requestId");
            assertThat(match.value()).isEqualTo("a=b");
        });
        assertThat(JsonMatch.parse("payload.a.b=").path()).containsExactly("a", "b");
        assertThatIllegalArgumentException().isThrownBy(() -> JobQuery.of(Group.READY).withTags(List.of("a,b")))
            .withMessageContaining("without commas");
        assertThatThrownBy(() -> EnqueueOptions.defaults().withTags("x".repeat(65)))
            .isInstanceOf(InvalidJobException.class).hasMessageContaining("1 to 64 characters");
        assertThatThrownBy(() -> queue.client().enqueue("mail", Map.of(), EnqueueOptions.defaults()
                .withHeader(QueueDefaults.TAGS_HEADER, " padded")))
            .isInstanceOf(InvalidJobException.class).hasMessageContaining("spaces at either end");
        assertThat(queue.activeJobs()).as("nothing written").isZero();
        assertThatThrownBy(() -> TaskDefinition.builder("t").tags(List.of("")).build())
            .isInstanceOf(InvalidSettingException.class).hasMessageContaining("tasks.t.tags");
    }

    private static List<Long> ids(JobPage page) {
        return page.jobs().stream().map(JobPage.Job::id).toList();
    }

    private static Map<String, String> headers(JobSnapshot job) {
        return tools.jackson.databind.json.JsonMapper.builder().build().readValue(job.headers(),
                new tools.jackson.core.type.TypeReference<Map<String, String>>() { });
    }

    private static void finished(long id, String state, Instant finishedAt, String payload, String headers) {
        queue.jdbc().update("""
                INSERT INTO pgqueue.job_finished (id, task, state, priority, payload, headers, schedule_time, attempt,
                                                  max_attempts, created_at, started_at, finished_at, lease_epoch)
                VALUES (?, 'invoice', ?, 0, CAST(? AS jsonb), CAST(? AS jsonb), ?, 1, 1, ?, ?, ?, 1)
                """, id, state, payload, headers, Timestamp.from(finishedAt.minusSeconds(10)),
                Timestamp.from(finishedAt.minusSeconds(10)), Timestamp.from(finishedAt.minusSeconds(1)),
                Timestamp.from(finishedAt));
    }
}
