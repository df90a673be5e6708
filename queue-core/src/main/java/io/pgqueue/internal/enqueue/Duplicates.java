package io.pgqueue.internal.enqueue;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

import io.pgqueue.DedupPolicy;
import io.pgqueue.EnqueueOutcome;
import io.pgqueue.EnqueueResult;
import io.pgqueue.InvalidJobException;
import io.pgqueue.JobState;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
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

    /**
     * @param tasks the declared task types, whose own policies recorded names stand for
     * @param payloads writes merged payloads
     */
    public Duplicates(TaskRegistry tasks, PayloadWriter payloads) {
        this.tasks = Objects.requireNonNull(tasks, "tasks");
        this.payloads = Objects.requireNonNull(payloads, "payloads");
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
                // The holder finished after our insert saw it; the key is free again.
                Long id = store.insert(List.of(job)).get(0);
                if (id != null) {
                    return new EnqueueResult(id, EnqueueOutcome.CREATED);
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

    private String merge(String task, DedupPolicy.PayloadMerger merger, String existing, String incoming) {
        JsonNode merged = merger.merge(this.payloads.mapper().readTree(existing), this.payloads.mapper().readTree(incoming));
        return this.payloads.write(task, merged);
    }
}
