package io.pgqueue.internal.worker;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import io.pgqueue.PayloadEncryption;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.internal.shard.LimitShare;
import io.pgqueue.internal.store.ClaimLimit;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.Lease;
import io.pgqueue.internal.store.Outcome;
import io.pgqueue.observe.QueueEvents;
import io.pgqueue.observe.QueueTelemetry;
import io.pgqueue.worker.PoolSettings;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A pool's buffer and slots without a database: what starts, and what must not.
 */
class PoolSlotsTests {

    private static final long LEASE = Duration.ofSeconds(2).toNanos();

    private final ScheduledExecutorService timers = Executors.newSingleThreadScheduledExecutor();

    private final List<Long> ran = new CopyOnWriteArrayList<>();

    private final List<Outcome> outcomes = new CopyOnWriteArrayList<>();

    private final HeldJobs held = new HeldJobs(new QueueEvents() {
    });

    @AfterEach
    void stopTimers() {
        this.timers.shutdownNow();
    }

    @Test
    void aBufferedJobWhoseLeaseNoRenewalConfirmedForALeaseDoesNotStart() {
        PoolSlots slots = slots();
        ShardClaims claims = slots.register(new Wakeups());
        long now = System.nanoTime();
        List<ClaimLimit> limits = slots.demand(claims, Set.of(), 2, LEASE, LimitShare.WHOLE);
        List<RunningJob> jobs = new ArrayList<>(slots.hold(List.of(claimed(7)), now - LEASE - 1, LEASE, null));
        jobs.addAll(slots.hold(List.of(claimed(8)), now, LEASE, null));

        slots.buffer(claims, jobs, Map.of("push", 2), limits, List.of());

        assertThat(this.ran).containsExactly(8L);
        assertThat(this.outcomes).extracting(outcome -> outcome.lease().jobId()).containsExactly(8L);
        assertThat(this.held.all()).extracting(RunningJob::jobId).doesNotContain(7L);
    }

    @Test
    void aRenewalThatGotThroughKeepsABufferedJobStartable() {
        PoolSlots slots = slots();
        ShardClaims claims = slots.register(new Wakeups());
        long now = System.nanoTime();
        List<RunningJob> jobs = slots.hold(List.of(claimed(7)), now - LEASE - 1, LEASE, null);
        jobs.get(0).leaseConfirmed(now, LEASE);

        slots.buffer(claims, jobs, Map.of("push", 1), slots.demand(claims, Set.of(), 1, LEASE, LimitShare.WHOLE), List.of());

        assertThat(this.ran).containsExactly(7L);
    }

    @Test
    void theProducersOfSeveralShardsTogetherClaimNoMoreThanThePoolHolds() {
        PoolSlots slots = slots();
        ShardClaims a = slots.register(new Wakeups());
        ShardClaims b = slots.register(new Wakeups());
        int capacity = slots.capacity(PoolSettings.defaults().maxPrefetch());
        long now = System.nanoTime();

        List<ClaimLimit> first = slots.demand(a, Set.of(), 1_000, LEASE, LimitShare.WHOLE);
        List<ClaimLimit> second = slots.demand(b, Set.of(), 1_000, LEASE, LimitShare.WHOLE);
        assertThat(first).hasSize(1);
        assertThat(first.get(0).limit()).isLessThanOrEqualTo(capacity);
        assertThat(second).as("nothing left while the first claim is in flight").isEmpty();

        // The first shard had one job: the capacity it did not get is free for the other shard again.
        slots.buffer(a, slots.hold(List.of(claimed(7)), now, LEASE, null), Map.of("push", 1), first, List.of());
        List<ClaimLimit> after = slots.demand(b, Set.of(), 1_000, LEASE, LimitShare.WHOLE);
        assertThat(after).hasSize(1);
        assertThat(after.get(0).limit()).isPositive().isLessThanOrEqualTo(capacity - 1);
        slots.claimFailed(after);
        assertThat(slots.demand(b, Set.of(), 1_000, LEASE, LimitShare.WHOLE)).isEqualTo(after);
        // The first shard ran out of jobs: it waits for a notification, the other shard does not.
        assertThat(slots.demand(a, Set.of(), 1_000, LEASE, LimitShare.WHOLE)).isEmpty();
    }

    @Test
    void finishedJobsWaitingForTheWriterHoldClaimsBackOnlyBeyondOneBufferDepth() {
        // Concurrency 1 and a buffer of at most 3: handlers here run inline and nothing is written.
        PoolSlots slots = slots(new PoolSettings(3, Duration.ofMillis(200)));
        ShardClaims claims = slots.register(new Wakeups());
        long id = 0;
        List<ClaimLimit> limits = slots.demand(claims, Set.of(), 1_000, LEASE, LimitShare.WHOLE);
        while (!limits.isEmpty()) {
            List<ClaimedJob> claimed = new ArrayList<>();
            for (int i = 0; i < limits.get(0).limit(); i++) {
                claimed.add(claimed(++id));
            }
            slots.buffer(claims, slots.hold(claimed, System.nanoTime(), LEASE, null), Map.of("push", claimed.size()),
                    limits, List.of());
            limits = slots.demand(claims, Set.of(), 1_000, LEASE, LimitShare.WHOLE);
        }

        // One slot and three buffered, and three finished beyond them waiting for their outcomes.
        assertThat(this.ran).hasSize(7);
        assertThat(this.held.all()).hasSize(7).allMatch(RunningJob::isFinished);

        // Written, their capacity is free again: a full buffer and slot.
        this.held.written(this.outcomes.stream().map(Outcome::lease).toList(), List.of());
        assertThat(slots.demand(claims, Set.of(), 1_000, LEASE, LimitShare.WHOLE)).extracting(ClaimLimit::limit).containsExactly(4);
    }

    private PoolSlots slots() {
        return slots(PoolSettings.defaults());
    }

    private PoolSlots slots(PoolSettings settings) {
        WorkerTask task = WorkerTask.of(TaskDefinition.builder("push").build(),
                (String payload, io.pgqueue.TaskContext context) -> this.ran.add(context.jobId()), String.class, 1,
                Duration.ofSeconds(5), "default");
        JobExecutor.Recorder recorder = new JobExecutor.Recorder() {
            @Override
            public void started(Lease lease) {
            }

            @Override
            public void finished(Outcome outcome) {
                PoolSlotsTests.this.outcomes.add(outcome);
            }
        };
        JobExecutor executor = new JobExecutor(List.of(task), JsonMapper.builder().build(),
                new AttemptOutcomes(TaskRegistry.of(List.of(task.definition()))), recorder, this.timers,
                QueueTelemetry.NONE, "node-1", List.of(), PayloadEncryption.NONE);
        return new PoolSlots("default", List.of(task), settings, this.held, executor, Runnable::run,
                jobs -> {
                });
    }

    private static ClaimedJob claimed(long id) {
        Instant now = Instant.now();
        return new ClaimedJob(new Lease(id, 1), "push", "\"hi\"", "{}", 0, 1, 5, now, null, now, now,
                now.plusSeconds(2));
    }
}
