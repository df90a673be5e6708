package io.pgqueue;

/**
 * What an enqueue call did.
 */
public enum EnqueueOutcome {

    /** A new job was created. */
    CREATED,

    /**
     * A job held the dedup key and was left as it was: an active one, or, under a unique policy
     * ({@link DedupPolicy#unique}), one that ended in one of its states within its period.
     */
    KEPT_EXISTING,

    /** The READY job holding the dedup key took the new payload, priority and schedule. */
    REPLACED,

    /** The new payload was merged into the READY job holding the dedup key. */
    MERGED,

    /** The running job holding the dedup key will run once more after it finishes. */
    RERUN_SCHEDULED,

    /**
     * Sharded: the job has a dedup key and its partition lives on another shard than the caller's
     * transaction, so it went to the main shard's outbox in that transaction and is relayed to its
     * shard after the commit, where its key is resolved by its dedup policy. The id is the job's
     * if it is created there.
     */
    RELAYED
}
