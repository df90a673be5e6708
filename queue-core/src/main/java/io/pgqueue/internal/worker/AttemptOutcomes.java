package io.pgqueue.internal.worker;

import java.time.Duration;
import java.util.Objects;

import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.internal.store.ClaimedJob;
import io.pgqueue.internal.store.Outcome;

/**
 * Turns the result of a handler into the {@link Outcome} to record: success completes the job; a
 * failure retries it after the task's retry-policy delay, unless the failure is terminal for the
 * task or the attempt was the job's last, in which case the job fails.
 */
public final class AttemptOutcomes {

    private static final int STACK_FRAMES = 8;

    private final TaskRegistry tasks;

    /**
     * Creates the decider.
     * @param tasks the declared task types
     */
    public AttemptOutcomes(TaskRegistry tasks) {
        this.tasks = Objects.requireNonNull(tasks, "tasks");
    }

    /**
     * The handler returned normally.
     * @param job the job
     * @return a completion
     */
    public Outcome succeeded(ClaimedJob job) {
        return Outcome.completed(job.lease());
    }

    /**
     * The handler threw.
     * @param job the job
     * @param failure what it threw
     * @return a retry after the policy's delay, or a final failure
     */
    public Outcome failed(ClaimedJob job, Throwable failure) {
        String error = describe(failure);
        TaskDefinition task = this.tasks.require(job.task());
        if (job.isLastAttempt() || task.isTerminal(failure)) {
            return Outcome.failed(job.lease(), error);
        }
        Duration delay = task.retryPolicy().delayAfter(job.attempt());
        if (delay == null || delay.isNegative()) {
            delay = Duration.ZERO;
        }
        return Outcome.retry(job.lease(), delay, error);
    }

    /**
     * Describes a failure for the job's {@code last_error}: type, message and the top stack frames.
     * @param failure the failure
     * @return the description
     */
    public static String describe(Throwable failure) {
        StringBuilder text = new StringBuilder(failure.toString());
        StackTraceElement[] frames = failure.getStackTrace();
        for (int i = 0; i < Math.min(STACK_FRAMES, frames.length); i++) {
            text.append("\n\tat ").append(frames[i]);
        }
        Throwable cause = failure.getCause();
        if (cause != null && cause != failure) {
            text.append("\nCaused by: ").append(cause);
        }
        return text.toString();
    }
}
