package io.pgqueue;

import java.time.Instant;
import java.util.Locale;

/**
 * One page of jobs an operator asks for ({@link QueueAdmin#jobs}): a group of jobs, optional
 * filters, and where the previous page stopped. Pages are in keyset order, so the next page costs
 * what the first one did however deep it is: finished jobs newest first by finish time, the others
 * oldest first by id. Immutable; the {@code with...} methods return a copy.
 *
 * @param group which jobs
 * @param task only this task's jobs, or {@code null}
 * @param from only jobs whose time (finished ones: their finish; the others: their enqueue) is at or after this, or {@code null}
 * @param to only jobs whose time is before this, or {@code null}
 * @param dedupKey only jobs with this dedup key, or {@code null}
 * @param errorText only jobs whose last error contains this text, ignoring case, or {@code null}
 * @param after the {@link JobPage#next() next} value of the previous page, or {@code null} for the first page
 * @param limit the most jobs on the page, 1 to {@value #MAX_LIMIT}
 */
public record JobQuery(Group group, String task, Instant from, Instant to, String dedupKey, String errorText,
        String after, int limit) {

    /** The most jobs one page holds. */
    public static final int MAX_LIMIT = 500;

    /** The jobs a page holds unless told otherwise. */
    public static final int DEFAULT_LIMIT = 50;

    /** The longest error text searched for. */
    public static final int MAX_ERROR_TEXT = 200;

    /**
     * Checks the query.
     * @throws IllegalArgumentException if the limit, the time range, the error text or the page position is not valid
     */
    public JobQuery {
        if (group == null) {
            throw new IllegalArgumentException("A job query needs a group of jobs: one of "
                    + java.util.Arrays.toString(Group.values()));
        }
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new IllegalArgumentException("A page holds 1 to " + MAX_LIMIT + " jobs, not " + limit);
        }
        if (from != null && to != null && !from.isBefore(to)) {
            throw new IllegalArgumentException("The time range is empty: from " + from + " is not before to " + to);
        }
        task = blankToNull(task);
        dedupKey = blankToNull(dedupKey);
        errorText = blankToNull(errorText);
        if (errorText != null && errorText.length() > MAX_ERROR_TEXT) {
            throw new IllegalArgumentException("The error text searched for is longer than " + MAX_ERROR_TEXT
                    + " characters");
        }
        after = blankToNull(after);
        if (after != null) {
            Position.parse(after, group);
        }
    }

    /**
     * The first page of a group, without filters, of {@value #DEFAULT_LIMIT} jobs.
     * @param group the group
     * @return the query
     */
    public static JobQuery of(Group group) {
        return new JobQuery(group, null, null, null, null, null, null, DEFAULT_LIMIT);
    }

    /**
     * @param task the task, or {@code null} for every task
     * @return a copy for this task's jobs only
     */
    public JobQuery withTask(String task) {
        return new JobQuery(this.group, task, this.from, this.to, this.dedupKey, this.errorText, this.after, this.limit);
    }

    /**
     * @param from the start of the time range (inclusive), or {@code null}
     * @param to the end of the time range (exclusive), or {@code null}
     * @return a copy for jobs in this time range only
     */
    public JobQuery withTimeRange(Instant from, Instant to) {
        return new JobQuery(this.group, this.task, from, to, this.dedupKey, this.errorText, this.after, this.limit);
    }

    /**
     * @param dedupKey the dedup key, or {@code null}
     * @return a copy for jobs with this dedup key only
     */
    public JobQuery withDedupKey(String dedupKey) {
        return new JobQuery(this.group, this.task, this.from, this.to, dedupKey, this.errorText, this.after, this.limit);
    }

    /**
     * @param errorText the text, or {@code null}
     * @return a copy for jobs whose last error contains the text (ignoring case) only
     */
    public JobQuery withErrorText(String errorText) {
        return new JobQuery(this.group, this.task, this.from, this.to, this.dedupKey, errorText, this.after, this.limit);
    }

    /**
     * @param after the previous page's {@link JobPage#next()}, or {@code null} for the first page
     * @return a copy for the page after it
     */
    public JobQuery after(String after) {
        return new JobQuery(this.group, this.task, this.from, this.to, this.dedupKey, this.errorText, after, this.limit);
    }

    /**
     * @param limit the most jobs on the page
     * @return a copy with this page size
     */
    public JobQuery withLimit(int limit) {
        return new JobQuery(this.group, this.task, this.from, this.to, this.dedupKey, this.errorText, this.after, limit);
    }

    /** @return where the previous page stopped, or {@code null} on the first page */
    public Position position() {
        return this.after == null ? null : Position.parse(this.after, this.group);
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }

    /** A group of jobs that one listing shows. */
    public enum Group {
        /** READY jobs due now, oldest first. */
        READY,
        /** READY jobs due later (delayed, or waiting for a retry), oldest first. */
        SCHEDULED,
        /** Claimed jobs (STARTING or RUNNING), oldest first. */
        RUNNING,
        /** Jobs waiting for their dependencies, oldest first. */
        WAITING,
        /** Completed jobs still kept, newest first. */
        COMPLETED,
        /** Jobs that failed for good, newest first. */
        FAILED,
        /** Cancelled jobs, newest first. */
        CANCELLED;

        /** @return whether the group's jobs are finished (and listed newest first by finish time) */
        public boolean finished() {
            return this == COMPLETED || this == FAILED || this == CANCELLED;
        }

        /**
         * Reads a group's name, ignoring case.
         * @param name the name
         * @return the group
         * @throws IllegalArgumentException if no group has the name
         */
        public static Group of(String name) {
            try {
                return valueOf(name.trim().toUpperCase(Locale.ROOT));
            }
            catch (IllegalArgumentException ex) {
                throw new IllegalArgumentException("Unknown group of jobs '" + name + "'; use one of "
                        + java.util.Arrays.toString(values()), ex);
            }
        }
    }

    /**
     * Where a page stopped: the last job's finish time (finished groups) and id.
     *
     * @param finishedAt the last job's finish time, or {@code null} for groups listed by id
     * @param id the last job's id
     */
    public record Position(Instant finishedAt, long id) {

        /** @return the text a next page is asked for with */
        public String text() {
            if (this.finishedAt == null) {
                return Long.toString(this.id);
            }
            long micros = Math.addExact(Math.multiplyExact(this.finishedAt.getEpochSecond(), 1_000_000L),
                    this.finishedAt.getNano() / 1_000);
            return micros + "." + this.id;
        }

        static Position parse(String text, Group group) {
            try {
                int dot = text.indexOf('.');
                if (group.finished()) {
                    if (dot < 0) {
                        throw new NumberFormatException();
                    }
                    long micros = Long.parseLong(text.substring(0, dot));
                    Instant finishedAt = Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
                            Math.floorMod(micros, 1_000_000L) * 1_000L);
                    return new Position(finishedAt, Long.parseLong(text.substring(dot + 1)));
                }
                return new Position(null, Long.parseLong(text));
            }
            catch (NumberFormatException ex) {
                throw new IllegalArgumentException("'" + text + "' is not a page position of " + group + " jobs; "
                        + "pass the next value of the previous page", ex);
            }
        }
    }
}
