package io.pgqueue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One attempt of a job, as the job's history keeps it when its task keeps one
 * ({@code @QueueTask(history = true)}, {@link TaskDefinition.Builder#history}): written with the
 * attempt's outcome, in its transaction and under its lease, so an attempt whose lease was lost adds
 * nothing; an attempt cut short by a crash is added by the rescue that takes its job back
 * ({@link AttemptResult#RESCUED}). The history goes with the job (archived, moved between shards,
 * re-run) and is deleted with it; it keeps the newest {@value QueueDefaults#MAX_HISTORY_ATTEMPTS}
 * attempts. Read it with {@link QueueClient#attempts(long)}.
 *
 * @param attempt the attempt's number as it ran; a snoozed or released run gives its number back, so
 * the run after it has the same number
 * @param outcome how it ended
 * @param node the node that ran it
 * @param startedAt when its handler started (database clock, as the node estimates it from its claim)
 * @param endedAt when it ended (same clock)
 * @param error the failure it ended with (type, message, top stack frames), or {@code null}
 * @param log the lines its handler logged ({@link TaskContext#log}, {@link TaskContext#logger()}), in order
 * @param droppedLogLines how many more lines it logged than the log keeps ({@value QueueDefaults#MAX_LOG_LINES})
 */
public record JobAttempt(int attempt, AttemptResult outcome, String node, Instant startedAt, Instant endedAt,
        String error, List<LogLine> log, int droppedLogLines) {

    /**
     * Copies the log.
     */
    public JobAttempt {
        Objects.requireNonNull(outcome, "outcome");
        log = log == null ? List.of() : List.copyOf(log);
    }

    /** @return how long it ran */
    public Duration duration() {
        return this.startedAt == null || this.endedAt == null ? Duration.ZERO : Duration.between(this.startedAt, this.endedAt);
    }

    /**
     * One line a handler logged during an attempt.
     *
     * @param at when (the node's clock)
     * @param level the level: ERROR, WARN, INFO, DEBUG or TRACE
     * @param message the message, with its arguments filled in and a failure's type and message appended
     */
    public record LogLine(Instant at, String level, String message) {
    }
}
