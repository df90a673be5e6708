package io.pgqueue.internal.enqueue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import io.pgqueue.DedupPolicy;
import io.pgqueue.EnqueueOutcome;
import io.pgqueue.EnqueueResult;
import io.pgqueue.InvalidJobException;
import io.pgqueue.JobState;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.internal.shard.Shards;
import io.pgqueue.internal.store.ActiveDuplicate;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.NewJob;
import tools.jackson.databind.JsonNode;

/**
 * Resolves a new job whose dedup key an active job holds, by the job's dedup policy: keep the
 * holder, replace or merge its payload while it is READY, or make it run once more. Used where a
 * job is enqueued and where the outbox relay writes a job to its shard.
 */
public final class Duplicates {

    private final TaskRegistry tasks;

    private final PayloadWriter payloads;

    private final Shards shards;

    /**
     * @param tasks the declared task types, whose own policies recorded names stand for
     * @param payloads writes merged payloads
     * @param shards the installation's shards, where finished jobs that hold unique keys are looked for
     */
    public Duplicates(TaskRegistry tasks, PayloadWriter payloads, Shards shards) {
        this.tasks = Objects.requireNonNull(tasks, "tasks");
        this.payloads = Objects.requireNonNull(payloads, "payloads");
        this.shards = Objects.requireNonNull(shards, "shards");
    }

    /**
     * Decides, before they are written, the jobs whose unique policy lets a finished job hold their
     * key: a job of each key that ended in one of its policy's states within its period is looked
     * for on every shard. Finished jobs do not change state, so a holder found holds as long as it
     * is kept. A holder that finishes after this look is found by {@link #heldAfterInsert}.
     * @param store the job store of the jobs' shard
     * @param jobs the jobs
     * @param policies each job's dedup policy
     * @return by index, the result of each job a finished job holds the key for (the holder kept)
     */
    public Map<Integer, EnqueueResult> heldByFinished(JobStore store, List<NewJob> jobs, List<DedupPolicy> policies) {
        List<Integer> unique = new ArrayList<>();
        for (int i = 0; i < jobs.size(); i++) {
            if (jobs.get(i).dedupKey() != null && policies.get(i) instanceof DedupPolicy.Unique) {
                unique.add(i);
            }
        }
        if (unique.isEmpty()) {
            return Map.of();
        }
        Map<Integer, EnqueueResult> held = new HashMap<>();
        for (int i : unique) {
            finishedHolder(store, jobs.get(i), (DedupPolicy.Unique) policies.get(i))
                .ifPresent(id -> held.put(i, new EnqueueResult(id, EnqueueOutcome.KEPT_EXISTING)));
        }
        return held;
    }

    /**
     * Withdraws a job just inserted under a unique policy if a job of its key finished meanwhile in
     * one of the policy's states: the insert waited for the transaction that finished it (the active
     * job's row held the key), so this look, a statement later, sees it. Concurrent enqueues of one
     * key need nothing more: the unique index of active keys makes each wait for the other's insert.
     * @param store the job store of the job's shard, in the transaction that inserted it
     * @param job the job
     * @param policy its dedup policy
     * @param id the id it was inserted with
     * @return the holder kept, when the job was withdrawn
     */
    public Optional<EnqueueResult> heldAfterInsert(JobStore store, NewJob job, DedupPolicy policy, long id) {
        if (job.dedupKey() == null || !(policy instanceof DedupPolicy.Unique unique)) {
            return Optional.empty();
        }
        Optional<Long> holder = finishedHolder(store, job, unique);
        holder.ifPresent(any -> store.withdraw(id));
        return holder.map(holderId -> new EnqueueResult(holderId, EnqueueOutcome.KEPT_EXISTING));
    }

    /** The newest job of the key that ended in one of the policy's states within its period, on any shard. */
    private Optional<Long> finishedHolder(JobStore store, NewJob job, DedupPolicy.Unique policy) {
        Optional<Long> here = store.finishedHolder(job.task(), job.dedupKey(), policy.states(), policy.period());
        if (here.isPresent()) {
            return here;
        }
        for (Shards.Shard shard : this.shards.all()) {
            JobStore other = shard.stores().jobs();
            if (other != store) {
                Optional<Long> there = other.finishedHolder(job.task(), job.dedupKey(), policy.states(), policy.period());
                if (there.isPresent()) {
                    return there;
                }
            }
        }
        return Optional.empty();
    }

    /**
     * Applies a dedup policy to a job whose key an active job holds, in the current transaction.
     * @param store the job store of the job's shard
     * @param job the new job
     * @param policy the policy
     * @return what happened
     */
    public EnqueueResult resolve(JobStore store, NewJob job, DedupPolicy policy) {
        while (true) {
            Optional<ActiveDuplicate> holder = store.lockActiveByKey(job.task(), job.dedupKey());
            if (holder.isEmpty()) {
                // The holder finished after our insert saw it: the key is free again, unless the
                // unique policy lets it hold the key finished.
                if (policy instanceof DedupPolicy.Unique unique) {
                    Optional<Long> finished = finishedHolder(store, job, unique);
                    if (finished.isPresent()) {
                        return new EnqueueResult(finished.get(), EnqueueOutcome.KEPT_EXISTING);
                    }
                }
                Long id = store.insert(List.of(job)).get(0);
                if (id != null) {
                    return heldAfterInsert(store, job, policy, id).orElse(new EnqueueResult(id, EnqueueOutcome.CREATED));
                }
                continue;
            }
            ActiveDuplicate existing = holder.get();
            boolean ready = existing.state() == JobState.READY;
            if (policy instanceof DedupPolicy.ReplaceIfReady && ready) {
                store.replaceReady(existing.id(), job);
                return new EnqueueResult(existing.id(), EnqueueOutcome.REPLACED);
            }
            if (policy instanceof DedupPolicy.MergeIfReady merge && ready) {
                String merged = merge(job.task(), merge.merger(), existing.payload(), job.payload());
                store.setReadyPayload(existing.id(), merged);
                return new EnqueueResult(existing.id(), EnqueueOutcome.MERGED);
            }
            if (policy instanceof DedupPolicy.Rerun) {
                if (ready) {
                    store.setReadyPayload(existing.id(), job.payload());
                    return new EnqueueResult(existing.id(), EnqueueOutcome.REPLACED);
                }
                store.requestRerun(existing.id(), job.payload());
                return new EnqueueResult(existing.id(), EnqueueOutcome.RERUN_SCHEDULED);
            }
            return new EnqueueResult(existing.id(), EnqueueOutcome.KEPT_EXISTING);
        }
    }

    /**
     * The name the outbox records a job's dedup policy by, for the relay to apply on the shard.
     * @param job the job
     * @param policy its policy
     * @return the name, or {@code null} for a job without a dedup key
     * @throws InvalidJobException for a merge policy given with the enqueue rather than the task:
     * its merge function cannot travel through the database
     */
    public String recordedName(NewJob job, DedupPolicy policy) {
        if (job.dedupKey() == null) {
            return null;
        }
        TaskDefinition task = this.tasks.require(job.task());
        if (policy instanceof DedupPolicy.MergeIfReady && !policy.equals(task.dedupPolicy())) {
            throw new InvalidJobException("A '" + job.task() + "' job with its own merge policy cannot be relayed to "
                    + "the shard of its partition; declare the merge policy on the task instead");
        }
        return DedupPolicies.nameOf(policy);
    }

    /**
     * The dedup policy a relayed job's recorded name stands for.
     * @param task the task
     * @param name the name, or {@code null} for the task's own
     * @return the policy
     */
    public DedupPolicy named(String task, String name) {
        TaskDefinition definition = this.tasks.find(task).orElse(null);
        DedupPolicy own = definition == null ? DedupPolicy.keepExisting() : definition.dedupPolicy();
        return name == null ? own : DedupPolicies.named(name, own);
    }

    /** Merges the payloads as JSON, decrypted if they are encrypted, and stores the merge as the task's payloads are. */
    private String merge(String task, DedupPolicy.PayloadMerger merger, String existing, String incoming) {
        JsonNode merged = merger.merge(this.payloads.mapper().readTree(this.payloads.open(task, existing)),
                this.payloads.mapper().readTree(this.payloads.open(task, incoming)));
        String json = this.payloads.write(task, merged);
        return this.tasks.find(task).map(definition -> this.payloads.seal(definition, json)).orElse(json);
    }
}
