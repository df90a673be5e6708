package io.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import io.pgqueue.schedule.Schedule;
import io.pgqueue.testing.TestQueue;
import io.pgqueue.worker.WorkerSettings;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Interceptors on a real PostgreSQL: a value carried from the enqueuing thread of one node to the
 * handlers of another in the job's headers, through every way a job is enqueued, and an enqueue an
 * interceptor refuses writing nothing.
 */
class InterceptorTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass();

    private static final ThreadLocal<String> TENANT = new ThreadLocal<>();

    private static final JobInterceptor TENANT_CONTEXT = JobInterceptors.carry("tenant", TENANT::get, tenant -> {
        TENANT.set(tenant);
        return TENANT::remove;
    });

    private final List<PgQueue> nodes = new ArrayList<>();

    /** The tenant each job's handler saw, by the job's payload. */
    private final Map<String, String> seen = new ConcurrentHashMap<>();

    @AfterEach
    void stopNodes() {
        this.nodes.forEach(PgQueue::stop);
        TENANT.remove();
    }

    @Test
    void aTenantCarriedFromTheEnqueuingThreadReachesTheHandlersOnAnotherNodeAndLeavesWithTheAttempt() {
        PgQueue caller = node(null, List.of(TENANT_CONTEXT));
        TENANT.set("acme");
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            jobs.add(JobRequest.of("report", "acme-" + i));
        }
        caller.client().enqueueAll(jobs);
        caller.client().workflow("monthly").add("collect", "report", "wf-collect")
            .add("send", "report", "wf-send", Workflow.after("collect")).enqueue();
        caller.client().enqueue(JobRequest.of("report", "explicit").withHeader("tenant", "globex"));
        TENANT.remove();
        for (int i = 0; i < 50; i++) {
            caller.client().enqueue("report", "none-" + i);
        }

        node("runner", List.of(JobInterceptors.logContext(), TENANT_CONTEXT)).start();

        await().atMost(Duration.ofSeconds(30)).until(() -> this.seen.size() == 253);
        this.seen.forEach((payload, tenant) -> {
            String expected = payload.startsWith("none-") ? "-" : payload.equals("explicit") ? "globex" : "acme";
            assertThat(tenant).as("the tenant job %s saw", payload).isEqualTo(expected);
        });
        // The outcomes are written a moment after the handlers return.
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(queue.jdbc().queryForObject(
                "SELECT count(*) FROM " + queue.config().schema() + ".job_finished WHERE headers->>'tenant' = 'acme'",
                Long.class)).isEqualTo(202));
    }

    @Test
    void theJobsOfARecurringScheduleAndTheTestKitsDrainPassTheInterceptorsToo() {
        JobInterceptor marking = new JobInterceptor() {
            @Override
            public JobRequest beforeEnqueue(JobRequest request) {
                return request.withHeader("tenant", "scheduled");
            }
        };
        PgQueue scheduled = node(null, List.of(marking, TENANT_CONTEXT));
        scheduled.schedules().put(Schedule.of("every-second", "report", "* * * * * *").withPayload("\"tick\""));
        await().atMost(Duration.ofSeconds(10)).until(() -> !scheduled.schedules().fireDue().isEmpty());

        try (QueueTestSupport kit = scheduled.testSupport(List.of(report()))) {
            assertThat(kit.drain(List.of("report"), 10)).extracting(QueueTestSupport.DrainedJob::state).contains(JobState.COMPLETED);
        }

        assertThat(this.seen).containsEntry("tick", "scheduled");
    }

    @Test
    void anEnqueueAnInterceptorRefusesWritesNoneOfItsJobs() {
        JobInterceptor refusing = new JobInterceptor() {
            @Override
            public JobRequest beforeEnqueue(JobRequest request) {
                if (request.payload().equals("forbidden")) {
                    throw new InvalidJobException("No reports for this tenant");
                }
                return request;
            }
        };
        JobInterceptor forgetful = new JobInterceptor() {
            @Override
            public JobRequest beforeEnqueue(JobRequest request) {
                return request.payload().equals("lost") ? null : request;
            }

            @Override
            public String toString() {
                return "forgetful";
            }
        };
        QueueClient client = node(null, List.of(refusing, forgetful)).client();

        assertThatThrownBy(() -> client.enqueueAll(List.of(JobRequest.of("report", "fine"), JobRequest.of("report", "forbidden"))))
            .isInstanceOf(InvalidJobException.class).hasMessage("No reports for this tenant");
        assertThatThrownBy(() -> client.enqueue("report", "lost")).isInstanceOf(InvalidJobException.class)
            .hasMessageContaining("Interceptor forgetful returned no job for a 'report' job");
        assertThatThrownBy(() -> client.workflow("w").add("a", "report", "fine").add("b", "report", "forbidden").enqueue())
            .isInstanceOf(InvalidJobException.class);

        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM " + queue.config().schema() + ".job", Long.class))
            .isZero();
        assertThat(queue.jdbc().queryForObject("SELECT count(*) FROM " + queue.config().schema() + ".workflow", Long.class))
            .isZero();
    }

    /** A node with the report task: it runs it when it has a name, else it only enqueues. */
    private PgQueue node(String name, List<JobInterceptor> interceptors) {
        WorkerTask report = report();
        PgQueue.Builder builder = PgQueue.builder(queue.dataSource()).config(queue.config())
            .interceptors(interceptors);
        if (name != null) {
            builder.workers(WorkerSettings.builder(name).pollInterval(Duration.ofMillis(100)).build(), List.of(report));
        }
        else {
            builder.tasks(TaskRegistry.of(report.definition()));
        }
        PgQueue node = builder.build();
        this.nodes.add(node);
        return node;
    }

    /** Records the tenant its handler sees, by payload. */
    private WorkerTask report() {
        return WorkerTask.of(TaskDefinition.builder("report").build(), (String payload, TaskContext context) ->
                this.seen.put(payload, Objects.requireNonNullElse(TENANT.get(), "-")), String.class, 4, Duration.ofSeconds(30),
                "default");
    }
}
