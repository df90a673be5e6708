package io.pgqueue.balance;

/** Why a partition moves. */
public enum MoveReason {
    /** Its shard is being drained. */
    DRAIN,
    /** Its shard is overloaded. */
    OVERLOAD,
    /** The shard loads are uneven (Gini index). */
    GINI
}
