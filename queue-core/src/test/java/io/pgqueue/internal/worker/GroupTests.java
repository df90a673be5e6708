package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.pgqueue.EnqueueOptions;
import io.pgqueue.JobRequest;
import io.pgqueue.JobState;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueDefaults;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskGroups;
import io.pgqueue.TaskHandler;
import io.pgqueue.TerminalTaskException;
import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.retry.RetryPolicy;
import io.pgqueue.testing.TestQueue;
import io.pgqueue.testing.TestWorkers;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.pgqueue.testing.TestWorkers.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Groups of a task's jobs (tenants): fair rounds across groups, a concurrency per group, and
 * sequences that run a group's jobs one at a time in enqueue order, through retries, failures and
 * a dead node. Recorders count what ran, per group.
 */
class GroupTests {

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass().withPoolSize(24);

    @RegisterExtension
    final TestWorkers nodes = TestWorkers.on(queue);

    record Work(String tenant, int n) {
    }

    @Test
    void aTenantWithOneJobStartsSoonBehindATenantWithAHundredThousand() {
        Queue<String> started = new ConcurrentLinkedQueue<>();
        AtomicLong smallStartedAt = new AtomicLong();
        WorkerTask task = task(TaskDefinition.builder("import").groups(TaskGroups.fair(0)
            .withKey(payload -> ((Work) payload).tenant())).build(), 4, (payload, context) -> {
                started.add(payload.tenant());
                if (payload.tenant().equals("small")) {
                    smallStartedAt.set(System.nanoTime());
                }
                Thread.sleep(1);
            });
        QueueClient client = nodes.client(task);
        for (int chunk = 0; chunk < 100; chunk++) {
            List<JobRequest> jobs = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                jobs.add(JobRequest.of("import", new Work("big", chunk * 1000 + i)));
            }
            client.enqueueAll(jobs);
        }
        client.enqueue("import", new Work("small", 0));
        long from = System.nanoTime();

        nodes.start(settings("node-a").build(), task);

        await().atMost(Duration.ofSeconds(30)).until(() -> smallStartedAt.get() != 0);
        List<String> order = List.copyOf(started);
        int before = order.indexOf("small");
        double seconds = (smallStartedAt.get() - from) / 1e9;
        assertThat(before).as("jobs of the big tenant that started before the small tenant's one").isLessThanOrEqualTo(8);
        assertThat(seconds).as("seconds until the small tenant's job started").isLessThan(5.0);
    }

    @Test
    void twoNodesNeverRunMoreThanTheGroupConcurrencyOfAGroup() {
        int perGroup = 2;
        Map<String, AtomicInteger> running = new ConcurrentHashMap<>();
        Map<String, Integer> most = new ConcurrentHashMap<>();
        AtomicInteger total = new AtomicInteger();
        AtomicInteger mostTotal = new AtomicInteger();
        WorkerTask task = task(TaskDefinition.builder("sync").groups(TaskGroups.fair(perGroup)).build(), 8,
                (payload, context) -> {
                    String group = context.headers().get(QueueDefaults.GROUP_HEADER);
                    int now = running.computeIfAbsent(group, g -> new AtomicInteger()).incrementAndGet();
                    most.merge(group, now, Math::max);
                    mostTotal.accumulateAndGet(total.incrementAndGet(), Math::max);
                    try {
                        Thread.sleep(5);
                    }
                    finally {
                        total.decrementAndGet();
                        running.get(group).decrementAndGet();
                    }
                });
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 400; i++) {
            String tenant = "tenant-" + (i % 4);
            jobs.add(JobRequest.of("sync", new Work(tenant, i), EnqueueOptions.defaults().withGroup(tenant)));
        }
        nodes.client(task).enqueueAll(jobs);

        nodes.start(settings("node-a").build(), task);
        nodes.start(settings("node-b").build(), task);

        await().atMost(Duration.ofSeconds(60)).until(() -> queue.finishedJobs(JobState.COMPLETED) == 400);
        assertThat(most).hasSize(4).allSatisfy((group, count) -> assertThat(count).as(group).isEqualTo(perGroup));
        assertThat(mostTotal.get()).as("groups run side by side").isGreaterThan(perGroup);
    }

    @Test
    void sequencesRunEachGroupInEnqueueOrderOneAtATimeThroughRetries() {
        Map<String, List<Integer>> completed = new ConcurrentHashMap<>();
        Map<String, AtomicInteger> running = new ConcurrentHashMap<>();
        Queue<String> violations = new ConcurrentLinkedQueue<>();
        WorkerTask task = task(TaskDefinition.builder("ledger").maxAttempts(5).retryPolicy(RetryPolicy.fixed(Duration.ofMillis(20)))
            .groups(TaskGroups.sequence(TaskGroups.OnFailure.SKIP).withKey(payload -> ((Work) payload).tenant())).build(), 8,
                (payload, context) -> {
                    if (running.computeIfAbsent(payload.tenant(), g -> new AtomicInteger()).incrementAndGet() > 1) {
                        violations.add("two of " + payload.tenant() + " at once");
                    }
                    try {
                        Thread.sleep(1);
                        // Every third job fails its first two attempts: it holds its sequence meanwhile.
                        if (payload.n() % 3 == 0 && context.attempt() < 3) {
                            throw new IllegalStateException("not yet");
                        }
                        completed.computeIfAbsent(payload.tenant(), g -> Collections.synchronizedList(new ArrayList<>()))
                            .add(payload.n());
                    }
                    finally {
                        running.get(payload.tenant()).decrementAndGet();
                    }
                });
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = 0; i < 150; i++) {
            jobs.add(JobRequest.of("ledger", new Work("account-" + (i % 5), i)));
        }
        nodes.client(task).enqueueAll(jobs);

        nodes.start(settings("node-a").build(), task);
        nodes.start(settings("node-b").build(), task);

        await().atMost(Duration.ofSeconds(60)).until(() -> queue.finishedJobs(JobState.COMPLETED) == 150);
        assertThat(violations).isEmpty();
        assertThat(completed).hasSize(5).allSatisfy((tenant, ns) -> assertThat(ns).as(tenant).isSorted().hasSize(30));
    }

    @Test
    void aSequenceWaitsForTheJobADeadNodeHeldAndRunsItFirst() {
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        WorkerTask task = task(TaskDefinition.builder("audit").groups(TaskGroups.sequence(TaskGroups.OnFailure.SKIP)
            .withKey(payload -> ((Work) payload).tenant())).build(), 4, (payload, context) -> order.add(payload.n()));
        QueueClient client = nodes.client(task);
        for (int i = 0; i < 5; i++) {
            client.enqueue("audit", new Work("acme", i));
        }
        // A node claims the first job with a short lease and dies.
        List<ClaimedJob> dead = queue.store().claimJobs(List.of(new ClaimLimit("audit", 4, 0, null,
                task.definition().groups())), "dead-node", JobState.RUNNING, Duration.ofSeconds(1)).jobs();
        assertThat(dead).hasSize(1);

        nodes.start(settings("node-a").rescueInterval(Duration.ofMillis(200)).build(), task);

        await().atMost(Duration.ofSeconds(20)).until(() -> queue.finishedJobs(JobState.COMPLETED) == 5);
        assertThat(order).containsExactly(0, 1, 2, 3, 4);
    }

    @Test
    void aSequenceThatBlocksOnFailureWaitsForTheFailedJobsRerun() {
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger failing = new AtomicInteger(1);
        WorkerTask blocking = task(TaskDefinition.builder("invoice").groups(TaskGroups.sequence(TaskGroups.OnFailure.BLOCK)
            .withKey(payload -> ((Work) payload).tenant())).build(), 4, (payload, context) -> {
                if (payload.n() == failing.get()) {
                    throw new TerminalTaskException("rejected");
                }
                order.add(payload.n());
            });
        QueueClient client = nodes.client(blocking);
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            ids.add(client.enqueue("invoice", new Work("acme", i)).jobId());
        }
        client.enqueue("invoice", new Work("globex", 9));

        nodes.start(settings("node-a").build(), blocking);

        await().atMost(Duration.ofSeconds(20)).until(() -> queue.state(ids.get(1)) == JobState.FAILED
                && order.contains(9));
        // The failed job holds its sequence; another group runs on.
        assertThat(queue.state(ids.get(2))).isEqualTo(JobState.READY);
        sleepMillis(500);
        assertThat(order).containsExactlyInAnyOrder(0, 9);

        failing.set(-1);
        assertThat(queue.store().rerunFailed(ids.get(1))).isTrue();

        await().atMost(Duration.ofSeconds(20)).until(() -> queue.finishedJobs(JobState.COMPLETED) == 5);
        assertThat(order.stream().filter(n -> n < 9).toList()).containsExactly(0, 1, 2, 3);
    }

    @Test
    void aSequenceThatSkipsFailuresRunsTheNextJob() {
        List<Integer> order = Collections.synchronizedList(new ArrayList<>());
        WorkerTask skipping = task(TaskDefinition.builder("notice").groups(TaskGroups.sequence(TaskGroups.OnFailure.SKIP)
            .withKey(payload -> ((Work) payload).tenant())).build(), 4, (payload, context) -> {
                if (payload.n() == 1) {
                    throw new TerminalTaskException("rejected");
                }
                order.add(payload.n());
            });
        QueueClient client = nodes.client(skipping);
        for (int i = 0; i < 4; i++) {
            client.enqueue("notice", new Work("acme", i));
        }

        nodes.start(settings("node-a").build(), skipping);

        await().atMost(Duration.ofSeconds(20)).until(() -> queue.finishedJobs(JobState.COMPLETED) == 3);
        assertThat(order).containsExactly(0, 2, 3);
    }

    @Test
    void jobsWithoutAGroupRunWhenNoGroupHasADueJobOrHoldsOneBack() {
        TaskDefinition grouped = TaskDefinition.builder("ledger").groups(TaskGroups.sequence(TaskGroups.OnFailure.SKIP)
            .withKey(payload -> ((Work) payload).tenant())).build();
        WorkerTask task = task(grouped, 4, (payload, context) -> { });
        long first = nodes.client(task).enqueue("ledger", new Work("acme", 0)).jobId();
        // Enqueued by a node that does not know the task's groups: no group header.
        WorkerTask plain = task(TaskDefinition.builder("ledger").build(), 4, (payload, context) -> { });
        long ungrouped = nodes.client(plain).enqueue("ledger", new Work("acme", 1)).jobId();
        ClaimLimit limit = new ClaimLimit("ledger", 4, 0, null, grouped.groups());

        List<ClaimedJob> claimed = queue.store().claimJobs(List.of(limit), "node-x", JobState.RUNNING,
                Duration.ofMinutes(1)).jobs();
        assertThat(claimed).extracting(ClaimedJob::id).containsExactly(first);
        // The group holds its jobs back while its job runs: the job without a group waits too.
        assertThat(queue.store().claimJobs(List.of(limit), "node-x", JobState.RUNNING, Duration.ofMinutes(1)).jobs())
            .isEmpty();
        queue.store().record(List.of(Outcome.completed(claimed.get(0).lease())));
        assertThat(queue.store().claimJobs(List.of(limit), "node-x", JobState.RUNNING, Duration.ofMinutes(1)).jobs())
            .extracting(ClaimedJob::id).containsExactly(ungrouped);
    }

    private static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private static WorkerTask task(TaskDefinition definition, int concurrency, TaskHandler<Work> handler) {
        return WorkerTask.of(definition, handler, Work.class, concurrency, Duration.ofMinutes(1), QueueDefaults.POOL);
    }
}
