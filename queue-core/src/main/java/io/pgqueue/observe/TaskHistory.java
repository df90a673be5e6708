package io.pgqueue.observe;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * What one task did over a time window, step by step, on every node ({@code QueueAdmin.history}):
 * kept by the queue in its database, per minute for a day and per hour for a week. Worker nodes add
 * their figures every few seconds to the step in which they add them.
 *
 * @param task the task
 * @param step the length of each point: a minute, or an hour
 * @param points the steps of the window that have figures, oldest first (a step without any is left out)
 */
public record TaskHistory(String task, Duration step, List<Point> points) {

    /**
     * Copies the points.
     */
    public TaskHistory {
        points = List.copyOf(points);
    }

    /**
     * One step's figures.
     *
     * @param at the start of the step
     * @param completed jobs completed
     * @param failed jobs that failed for good
     * @param retried attempts that failed and left their job to another attempt
     * @param started handlers started
     * @param waitAvgMillis the average wait of the started jobs, from due (their enqueue, when they had no delay) to start, or {@code null} when none started
     * @param waitMaxMillis the longest such wait
     * @param ran handlers that finished
     * @param runAvgMillis the average run time of the finished handlers, or {@code null} when none finished
     * @param runMaxMillis the longest run time
     */
    public record Point(Instant at, long completed, long failed, long retried, long started, Double waitAvgMillis,
            long waitMaxMillis, long ran, Double runAvgMillis, long runMaxMillis) {
    }
}
