package io.pgqueue;

import java.time.Instant;

/**
 * A step a durable handler recorded for its job ({@link TaskContext#step}, {@link TaskContext#sleep}).
 *
 * @param name the step's name
 * @param seq its place among the job's steps, from 0
 * @param kind a step or a sleep
 * @param result the step's value as JSON, or {@code null} (none, or a sleep)
 * @param resultType the Java class of the value as the handler returned it, or {@code null}
 * @param wakeAt when a sleep ends (the database clock), or {@code null} for a step
 * @param attempt the attempt of the job that ran it
 * @param startedAt when it started (the database clock)
 * @param finishedAt when it was recorded (the database clock)
 */
public record JobStep(String name, int seq, Kind kind, String result, String resultType, Instant wakeAt, int attempt,
        Instant startedAt, Instant finishedAt) {

    /** What a step is. */
    public enum Kind {
        /** Work whose value is recorded. */
        STEP,
        /** A durable sleep: the job waits, holding no thread, until {@link JobStep#wakeAt()}. */
        SLEEP
    }
}
