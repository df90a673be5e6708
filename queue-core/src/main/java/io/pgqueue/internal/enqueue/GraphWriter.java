package io.pgqueue.internal.enqueue;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.pgqueue.DependencyFailure;
import io.pgqueue.InvalidJobException;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.NewJob;
import io.pgqueue.internal.store.PartitionNotHeldException;
import io.pgqueue.internal.store.WaitingJob;
import io.pgqueue.shard.ShardException;

/**
 * Writes a graph of jobs, some waiting for others (a workflow, or jobs enqueued with dependencies),
 * to one partition's shard in one transaction: the jobs that wait for nothing as usual, marked
 * tracked, and the others as waiting, with the workflow's row if they make one.
 */
public final class GraphWriter {

    /**
     * A job of a graph: its dependencies in the queue already and among the graph's jobs (by index).
     * @param job the job's row
     * @param external ids of jobs in the queue it waits for
     * @param internal indexes of the graph's jobs it waits for
     * @param onFailure what it does when a dependency fails
     */
    public record GraphJob(NewJob job, List<Long> external, List<Integer> internal, DependencyFailure onFailure) {
    }

    /**
     * The workflow a graph makes.
     * @param id its id, taken from the job id sequence
     * @param name its name
     * @param dependencyFailure what its steps do when a step they wait for fails, unless a step says otherwise
     * @param steps the steps' names, in the graph's order
     */
    public record WorkflowRow(long id, String name, DependencyFailure dependencyFailure, List<String> steps) {
    }

    private final boolean sharded;

    /**
     * @param sharded whether the installation is sharded (a missing dependency may be in another partition)
     */
    public GraphWriter(boolean sharded) {
        this.sharded = sharded;
    }

    /**
     * Writes jobs some of which wait for others, in one transaction (the caller's if there is one):
     * jobs without dependencies as usual, marked tracked; the others as waiting. Dependencies in the
     * queue already are checked first, so that a missing one writes nothing.
     * @param target the job store of the partition's shard
     * @param graph the jobs, each with its dependencies
     * @param workflow the workflow they make, or {@code null} for jobs with dependencies only
     * @param partition the partition of every job
     * @return the jobs' ids, in the graph's order
     * @throws InvalidJobException if a dependency is not in the queue; nothing was written
     * @throws ShardException if the partition is moving; nothing was written
     */
    public List<Long> write(JobStore target, List<GraphJob> graph, WorkflowRow workflow, int partition) {
        List<Long> external = graph.stream().flatMap(job -> job.external().stream()).distinct().sorted().toList();
        if (!external.isEmpty()) {
            List<Long> missing = target.workflows().missing(external);
            if (!missing.isEmpty()) {
                throw new InvalidJobException("Dependencies " + missing + " are not in the queue: unknown, removed by "
                        + "retention" + (this.sharded
                                ? ", or in another partition (give dependents their dependencies' partition key)" : ""));
            }
        }
        if (!external.isEmpty()) {
            // Outside the caller's transaction, so that a running dependency's row is not held
            // (its lease renewals would wait) for as long as that transaction lasts.
            target.workflows().trackInOwnTransaction(external);
        }
        try {
            return writeInTransaction(target, graph, workflow, partition);
        }
        catch (PartitionNotHeldException ex) {
            throw new ShardException("Partition " + partition + " is moving to another shard; nothing was written. "
                    + "Enqueue again in a moment");
        }
    }

    private List<Long> writeInTransaction(JobStore target, List<GraphJob> graph, WorkflowRow workflow, int partition) {
        Long workflowId = workflow == null ? null : workflow.id();
        return target.inTransaction(() -> {
            List<Integer> roots = new ArrayList<>();
            List<Integer> waiting = new ArrayList<>();
            for (int i = 0; i < graph.size(); i++) {
                GraphJob job = graph.get(i);
                (job.external().isEmpty() && job.internal().isEmpty() ? roots : waiting).add(i);
            }
            Long[] ids = new Long[graph.size()];
            if (!roots.isEmpty()) {
                List<Long> written = target.insert(roots.stream().map(i -> graph.get(i).job()).toList());
                for (int k = 0; k < roots.size(); k++) {
                    ids[roots.get(k)] = written.get(k);
                }
                if (workflowId != null) {
                    target.workflows().track(written);
                }
            }
            if (!waiting.isEmpty()) {
                List<Long> taken = target.workflows().nextIds(waiting.size());
                for (int k = 0; k < waiting.size(); k++) {
                    ids[waiting.get(k)] = taken.get(k);
                }
            }
            if (workflowId != null) {
                Map<String, Long> steps = new LinkedHashMap<>();
                for (int i = 0; i < ids.length; i++) {
                    steps.put(workflow.steps().get(i), ids[i]);
                }
                target.workflows().insertWorkflow(workflowId, workflow.name(), workflow.dependencyFailure(), steps,
                        partition);
            }
            if (!waiting.isEmpty()) {
                List<WaitingJob> rows = new ArrayList<>(waiting.size());
                for (int i : waiting) {
                    GraphJob job = graph.get(i);
                    List<Long> dependsOn = new ArrayList<>(job.external());
                    job.internal().forEach(k -> dependsOn.add(ids[k]));
                    rows.add(new WaitingJob(ids[i], job.job(), workflowId, job.onFailure(), dependsOn));
                }
                List<Long> missing = target.workflows().addWaiting(rows);
                if (!missing.isEmpty()) {
                    throw new InvalidJobException("Dependencies " + missing + " left the queue while the jobs that "
                            + "wait for them were written; nothing was written");
                }
            }
            return List.of(ids);
        });
    }
}
