package io.pgqueue;


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
