package io.pgqueue.schedule;

import java.time.Instant;

import io.pgqueue.JobState;

/**
 * A schedule as stored, with when it fires next and what its last job did.
 *
 * @param schedule the schedule
 * @param configured whether it comes from a task's settings (else it was added at runtime)
 * @param nextFire its next slot
 * @param lastFire the slot of its last job, or {@code null} before the first
 * @param lastJobId its last job, or {@code null} before the first
 * @param lastJobState that job's state, or {@code null} when unknown (before the first, or past retention)
 */
public record ScheduleInfo(Schedule schedule, boolean configured, Instant nextFire, Instant lastFire, Long lastJobId,
        JobState lastJobState) {
}
