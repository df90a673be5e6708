package io.pgqueue;

/**
 * What a cancel call did.
 */
public enum CancelResult {

    /** The job was READY and is now CANCELLED. */
    CANCELLED,

    /** The job is claimed; its worker sees the request at its next heartbeat and the job ends CANCELLED. */
    CANCEL_REQUESTED,

    /** The job had already finished; nothing changed. */
    ALREADY_FINISHED,

    /** No job has this id. */
    NOT_FOUND
}
