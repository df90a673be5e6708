package io.pgqueue;

/**
 * What an enqueue call did.
 */
public enum EnqueueOutcome {

    /** A new job was created. */
    CREATED,

    /** An active job held the dedup key and was left as it was. */
    KEPT_EXISTING,

    /** The READY job holding the dedup key took the new payload, priority and schedule. */
    REPLACED,

    /** The new payload was merged into the READY job holding the dedup key. */
    MERGED,

    /** The running job holding the dedup key will run once more after it finishes. */
    RERUN_SCHEDULED
}
