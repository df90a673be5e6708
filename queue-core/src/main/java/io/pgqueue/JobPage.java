package io.pgqueue;

import java.time.Instant;
import java.util.List;

/**
 * One page of a job listing ({@link QueueAdmin#jobs}).
 *
 * @param jobs the jobs, in the group's order
 * @param next what {@link JobQuery#after(String)} takes for the next page, or {@code null} when this page is the last
 */
public record JobPage(List<Job> jobs, String next) {

    /**
     * A job as a listing shows it: no payload, the first line of its last error.
     *
     * @param id the job id
     * @param task its task
     * @param state its state
     * @param priority its priority
     * @param attempt the attempts it made
     * @param maxAttempts the attempts it may make
     * @param createdAt when it was enqueued
     * @param scheduleTime when it is (or was) due
     * @param startedAt when its last attempt was claimed, or {@code null}
     * @param finishedAt when it finished, or {@code null}
     * @param dedupKey its dedup key, or {@code null}
     * @param error the first line of its last error (at most 300 characters), or {@code null}
     * @param leaseOwner the node holding (or that last held) it, or {@code null}
     * @param tags its tags ({@link JobTags})
     */
    public record Job(long id, String task, JobState state, int priority, int attempt, int maxAttempts,
            Instant createdAt, Instant scheduleTime, Instant startedAt, Instant finishedAt, String dedupKey,
            String error, String leaseOwner, List<String> tags) {

        /**
         * Copies the tags.
         */
        public Job {
            tags = tags == null ? List.of() : List.copyOf(tags);
        }

        /** @return where a page that ends with this job stopped */
        public JobQuery.Position position() {
            return new JobQuery.Position(this.finishedAt, this.id);
        }
    }
}
