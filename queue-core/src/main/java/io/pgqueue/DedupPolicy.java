package io.pgqueue;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

import tools.jackson.databind.JsonNode;

/**
 * What happens when a job arrives with a dedup key that an active (READY, STARTING or RUNNING) job
 * of the same task already holds. At most one active job exists per task and key, whatever the
 * concurrency of the enqueuers: a partial unique index guarantees it.
 */
public sealed interface DedupPolicy {

    /**
     * Keeps the existing job and drops the new one; the caller gets the existing job's id.
     * @return the policy
     */
    static DedupPolicy keepExisting() {
        return KeepExisting.INSTANCE;
    }

    /**
     * Replaces the payload, priority and schedule of the existing job if it is still READY; keeps it
     * unchanged otherwise.
     * @return the policy
     */
    static DedupPolicy replaceIfReady() {
        return ReplaceIfReady.INSTANCE;
    }

    /**
     * Merges the new payload into the existing job's payload if that job is still READY; keeps it
     * unchanged otherwise.
     * @param merger the merge function
     * @return the policy
     * @throws InvalidJobException if the merge function is {@code null}
     */
    static DedupPolicy mergeIfReady(PayloadMerger merger) {
        return new MergeIfReady(merger);
    }

    /**
     * Makes sure the task runs once more with the new payload after the current run: if the
     * existing job is READY it simply takes the new payload (it has not started yet); if it is
     * STARTING or RUNNING it is marked for exactly one re-run, which it gets when it finishes,
     * however many duplicates arrive meanwhile.
     * @return the policy
     */
    static DedupPolicy rerun() {
        return Rerun.INSTANCE;
    }

    /**
     * Uniqueness over time: besides an active job, a job that ended in one of the given states and
     * was enqueued within the period holds the key too; a new job of the key is then dropped and the
     * caller gets the holder's id, as with {@link #keepExisting()}. "At most one import of this file
     * per ten minutes, whether it is waiting, running or completed" is
     * {@code unique(Duration.ofMinutes(10), JobState.COMPLETED)}. Exact across nodes and shards: the
     * enqueues of one key are serialized in the database that holds the key's partition, and a
     * finished holder is looked for on every shard. A finished job holds its key only while
     * retention keeps it: keep finished jobs of those states at least as long as the period.
     * @param period how long after its enqueue a finished job holds its key, positive
     * @param finishedStates the final states in which it does: {@link JobState#COMPLETED},
     * {@link JobState#FAILED}, {@link JobState#CANCELLED} (active jobs always hold their key)
     * @return the policy
     * @throws InvalidJobException if the period is not positive, or a state is missing, repeated or
     * not a final state
     */
    static DedupPolicy unique(Duration period, JobState... finishedStates) {
        return new Unique(period, finishedStates == null ? null : Arrays.asList(finishedStates));
    }

    /**
     * Returns the policy's documented name, as {@code @QueueTask(dedupPolicy = ...)} and the
     * {@code pgqueue.tasks.<name>.dedup-policy} property write it.
     * @return the mode
     */
    QueueTask.DedupMode mode();

    /**
     * Merges two payloads of the same task: what {@link #mergeIfReady} stores in a READY job that
     * already holds the dedup key.
     */
    @FunctionalInterface
    interface PayloadMerger {

        /**
         * Returns the payload the job should carry.
         * @param existing the payload of the queued job
         * @param incoming the payload of the duplicate
         * @return the merged payload
         */
        JsonNode merge(JsonNode existing, JsonNode incoming);
    }

    /** See {@link DedupPolicy#keepExisting()}. */
    enum KeepExisting implements DedupPolicy {
        /** The only instance. */
        INSTANCE;

        @Override
        public QueueTask.DedupMode mode() {
            return QueueTask.DedupMode.KEEP_EXISTING;
        }
    }

    /** See {@link DedupPolicy#replaceIfReady()}. */
    enum ReplaceIfReady implements DedupPolicy {
        /** The only instance. */
        INSTANCE;

        @Override
        public QueueTask.DedupMode mode() {
            return QueueTask.DedupMode.REPLACE_IF_READY;
        }
    }

    /** See {@link DedupPolicy#rerun()}. */
    enum Rerun implements DedupPolicy {
        /** The only instance. */
        INSTANCE;

        @Override
        public QueueTask.DedupMode mode() {
            return QueueTask.DedupMode.RERUN;
        }
    }

    /**
     * See {@link DedupPolicy#mergeIfReady(PayloadMerger)}.
     * @param merger the merge function
     */
    /**
     * See {@link DedupPolicy#unique}.
     *
     * @param period how long after its enqueue a finished job holds its key
     * @param states the final states in which it does, in {@link JobState} order
     */
    record Unique(Duration period, List<JobState> states) implements DedupPolicy {

        /**
         * Validates the window.
         */
        public Unique {
            if (period == null || period.isNegative() || period.isZero()) {
                throw new InvalidJobException("The period of a unique dedup policy must be positive, was " + period);
            }
            if (states == null || states.isEmpty() || states.contains(null)) {
                throw new InvalidJobException("A unique dedup policy needs the final states in which a job holds its "
                        + "key: COMPLETED, FAILED and/or CANCELLED; was " + states);
            }
            for (JobState state : states) {
                if (state != JobState.COMPLETED && state != JobState.FAILED && state != JobState.CANCELLED) {
                    throw new InvalidJobException("A unique dedup policy lists the final states in which a job holds its "
                            + "key (COMPLETED, FAILED, CANCELLED); " + state + " is not one: active jobs hold their key "
                            + "always");
                }
            }
            if (Set.copyOf(states).size() != states.size()) {
                throw new InvalidJobException("A unique dedup policy lists each state once; was " + states);
            }
            states = states.stream().sorted().toList();
        }

        @Override
        public QueueTask.DedupMode mode() {
            return QueueTask.DedupMode.UNIQUE;
        }
    }

    record MergeIfReady(PayloadMerger merger) implements DedupPolicy {

        /** Validates the merger. */
        public MergeIfReady {
            if (merger == null) {
                throw new InvalidJobException("DedupPolicy.mergeIfReady needs a merger, was null");
            }
        }

        @Override
        public QueueTask.DedupMode mode() {
            return QueueTask.DedupMode.MERGE_IF_READY;
        }
    }
}
