package io.pgqueue;

import java.util.Objects;

/**
 * Thrown by {@link QueueAdmin} when an operator's request cannot be carried out as asked. Its
 * {@link #reason()} tells an unknown target from one in the wrong state and from a request that is
 * wrong in itself, so that an HTTP front answers 404, 409 or 400 without reading the message.
 * Nothing was changed.
 */
public class QueueAdminException extends QueueException {

    private static final long serialVersionUID = 1L;

    /** Why a request was refused. */
    public enum Reason {

        /**
         * The job, task, partition or shard the request names does not exist (a job also once
         * retention removed it; a task when this node neither declares it nor sees jobs of it, or,
         * for a schedule, does not declare it). The same request fails the same way until it exists.
         */
        NOT_FOUND,

        /**
         * What the request names exists, but its state forbids the operation: a job that is not
         * FAILED cannot be re-run, a finished job cannot be cancelled, a job whose dedup key an
         * active job holds is not re-run, a partition is moving already or is on the target shard,
         * a schedule configured with its task cannot be changed at runtime. The same request may
         * succeed once that state changes.
         */
        CONFLICT,

        /**
         * The request itself is malformed or does not apply to this queue: a schedule whose payload
         * is not JSON or does not fit its task's handler, a partition move in an unsharded queue. It
         * fails the same way until it is corrected.
         */
        INVALID
    }

    private final Reason reason;

    /**
     * Creates an exception.
     * @param reason why the request was refused
     * @param message what is wrong with the request
     */
    public QueueAdminException(Reason reason, String message) {
        super(message);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    /**
     * Creates an exception for a refusal another part of the queue reported first.
     * @param reason why the request was refused
     * @param message what is wrong with the request
     * @param cause the refusal reported first
     */
    public QueueAdminException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    /**
     * Returns why the request was refused.
     * @return the reason
     */
    public Reason reason() {
        return this.reason;
    }
}
