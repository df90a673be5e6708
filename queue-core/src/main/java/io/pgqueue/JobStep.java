package io.pgqueue;

import java.time.Instant;

/**
 * A step a durable handler recorded for its job ({@link TaskContext#step}, {@link TaskContext#sleep}).
 *
 * @param name the step's name
 * @param seq its place among the job's steps, from 0; -1 for a signal that arrived before its handler waited for it
 * @param kind a step or a sleep
 * @param result the step's value as JSON, or {@code null} (none, or a sleep)
 * @param resultType the Java class of the value as the handler returned it, or {@code null}
 * @param wakeAt when a sleep or a signal wait ends (the database clock), or {@code null} for a step
 * @param attempt the attempt of the job that ran it
 * @param startedAt when it started (the database clock)
 * @param finishedAt when it was recorded (the database clock); for a signal, when it arrived or the wait ended
 * @param signal how a signal wait stands, or {@code null} for a step or a sleep
 */
public record JobStep(String name, int seq, Kind kind, String result, String resultType, Instant wakeAt, int attempt,
        Instant startedAt, Instant finishedAt, SignalState signal) {

    /** What a step is. */
    public enum Kind {
        /** Work whose value is recorded. */
        STEP,
        /** A durable sleep: the job waits, holding no thread, until {@link JobStep#wakeAt()}. */
        SLEEP,
        /**
         * A signal ({@link TaskContext#awaitSignal}): named {@code signal:<name>}, its payload as the
         * result once it arrived.
         */
        SIGNAL
    }

    /** How a signal wait stands. */
    public enum SignalState {
        /** The handler waits for it, until {@link JobStep#wakeAt()}. */
        WAITING,
        /** It arrived: {@link JobStep#result()} holds its payload. */
        RECEIVED,
        /** The wait ended without it. */
        TIMED_OUT
    }
}
