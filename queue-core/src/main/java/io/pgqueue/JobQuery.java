package io.pgqueue;

import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;

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
 * @param ids only these jobs (at most {@value #MAX_IDS}), or {@code null} for any
 * @param matches only jobs with these values in their payload, headers or result (all of them)
 * @param tags only jobs with these tags (all of them, see {@link JobTags})
 * @param after the {@link JobPage#next() next} value of the previous page, or {@code null} for the first page
 * @param limit the most jobs on the page, 1 to {@value #MAX_LIMIT}
 */
public record JobQuery(Group group, String task, Instant from, Instant to, String dedupKey, String errorText,
        List<Long> ids, List<JsonMatch> matches, List<String> tags, String after, int limit) {

    /** The most jobs one page holds. */
    public static final int MAX_LIMIT = 500;

    /** The jobs a page holds unless told otherwise. */
    public static final int DEFAULT_LIMIT = 50;

    /** The longest error text searched for. */
    public static final int MAX_ERROR_TEXT = 200;

    /** The most job ids a query names. */
    public static final int MAX_IDS = MAX_LIMIT;

    /** The most JSON matches a query holds. */
    public static final int MAX_MATCHES = 10;

    /**
     * Checks the query.
     * @throws IllegalArgumentException if the limit, the time range, the error text, the ids, a match, a tag or the
     * page position is not valid
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
        if (ids != null && (ids.size() > MAX_IDS || ids.stream().anyMatch(Objects::isNull))) {
            throw new IllegalArgumentException("A job query names at most " + MAX_IDS + " job ids, none of them null; "
                    + "it named " + ids.size());
        }
        ids = ids == null ? null : List.copyOf(ids);
        matches = matches == null ? List.of() : List.copyOf(matches);
        if (matches.size() > MAX_MATCHES) {
            throw new IllegalArgumentException("A job query holds at most " + MAX_MATCHES + " JSON matches, not "
                    + matches.size());
        }
        try {
            tags = tags == null ? List.of() : JobTags.check(tags, "a job query");
        }
        catch (InvalidJobException ex) {
            throw new IllegalArgumentException(ex.getMessage(), ex);
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
        return new JobQuery(group, null, null, null, null, null, null, List.of(), List.of(), null, DEFAULT_LIMIT);
    }

    /**
     * Reads a query's group and filters from request parameters, as the console's API and the
     * {@code queues} endpoint take them: {@code state} (a {@link Group}, default FAILED), {@code task},
     * {@code from} and {@code to} (instants such as {@code 2026-01-31T12:00:00Z}), {@code dedupKey},
     * {@code error}, {@code ids} (comma-separated job ids), {@code tag} (comma-separated, repeatable)
     * and {@code match} (a {@link JsonMatch}, repeatable). Blank values count as absent.
     * @param parameters the values of a parameter by its name (none when absent)
     * @return the first page of the query, of {@value #DEFAULT_LIMIT} jobs
     * @throws IllegalArgumentException naming the parameter, if one is not valid or holds the
     * character U+0000 (which PostgreSQL's text cannot hold), or a time is outside the years 1 to 9999
     */
    public static JobQuery fromParameters(Function<String, List<String>> parameters) {
        Function<String, String> one = name -> {
            List<String> values = values(parameters, name);
            return values.isEmpty() ? null : values.get(0);
        };
        String state = one.apply("state");
        String ids = one.apply("ids");
        return JobQuery.of(Group.of(state == null ? Group.FAILED.name() : state))
            .withTask(one.apply("task"))
            .withTimeRange(instant(one.apply("from"), "from"), instant(one.apply("to"), "to"))
            .withDedupKey(one.apply("dedupKey"))
            .withErrorText(one.apply("error"))
            .withIds(ids == null ? null : Arrays.stream(ids.split(",")).map(String::strip).filter(id -> !id.isEmpty())
                .map(id -> {
                    try {
                        return Long.valueOf(id);
                    }
                    catch (NumberFormatException ex) {
                        throw new IllegalArgumentException("ids: '" + id + "' is not a job id", ex);
                    }
                }).toList())
            .withMatches(values(parameters, "match").stream().map(JsonMatch::parse).toList())
            .withTags(values(parameters, "tag").stream().flatMap(tag -> Arrays.stream(tag.split(",")))
                .map(String::strip).filter(tag -> !tag.isEmpty()).toList());
    }

    /** The earliest and the latest instant a time filter may name: PostgreSQL keeps years 1 to 9999 exactly. */
    private static final Instant EARLIEST = Instant.parse("0001-01-01T00:00:00Z");

    private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59Z");

    private static List<String> values(Function<String, List<String>> parameters, String name) {
        List<String> values = parameters.apply(name);
        if (values == null) {
            return List.of();
        }
        if (values.stream().anyMatch(value -> value != null && value.indexOf('\u0000') >= 0)) {
            throw new IllegalArgumentException(name + " must not contain the character U+0000");
        }
        return values.stream().filter(value -> value != null && !value.isBlank()).map(String::strip).toList();
    }

    private static Instant instant(String text, String name) {
        if (text == null) {
            return null;
        }
        Instant instant;
        try {
            instant = Instant.parse(text);
        }
        catch (DateTimeParseException ex) {
            throw new IllegalArgumentException(name + " '" + text + "' is not an instant such as 2026-01-31T12:00:00Z", ex);
        }
        if (instant.isBefore(EARLIEST) || instant.isAfter(LATEST)) {
            throw new IllegalArgumentException(name + " '" + text + "' is out of range: years 1 to 9999");
        }
        return instant;
    }

    /**
     * @param task the task, or {@code null} for every task
     * @return a copy for this task's jobs only
     */
    public JobQuery withTask(String task) {
        return new JobQuery(this.group, task, this.from, this.to, this.dedupKey, this.errorText, this.ids,
                this.matches, this.tags, this.after, this.limit);
    }

    /**
     * @param from the start of the time range (inclusive), or {@code null}
     * @param to the end of the time range (exclusive), or {@code null}
     * @return a copy for jobs in this time range only
     */
    public JobQuery withTimeRange(Instant from, Instant to) {
        return new JobQuery(this.group, this.task, from, to, this.dedupKey, this.errorText, this.ids, this.matches,
                this.tags, this.after, this.limit);
    }

    /**
     * @param dedupKey the dedup key, or {@code null}
     * @return a copy for jobs with this dedup key only
     */
    public JobQuery withDedupKey(String dedupKey) {
        return new JobQuery(this.group, this.task, this.from, this.to, dedupKey, this.errorText, this.ids,
                this.matches, this.tags, this.after, this.limit);
    }

    /**
     * @param errorText the text, or {@code null}
     * @return a copy for jobs whose last error contains the text (ignoring case) only
     */
    public JobQuery withErrorText(String errorText) {
        return new JobQuery(this.group, this.task, this.from, this.to, this.dedupKey, errorText, this.ids,
                this.matches, this.tags, this.after, this.limit);
    }

    /**
     * @param after the previous page's {@link JobPage#next()}, or {@code null} for the first page
     * @return a copy for the page after it
     */
    public JobQuery after(String after) {
        return new JobQuery(this.group, this.task, this.from, this.to, this.dedupKey, this.errorText, this.ids,
                this.matches, this.tags, after, this.limit);
    }

    /**
     * @param limit the most jobs on the page
     * @return a copy with this page size
     */
    public JobQuery withLimit(int limit) {
        return new JobQuery(this.group, this.task, this.from, this.to, this.dedupKey, this.errorText, this.ids,
                this.matches, this.tags, this.after, limit);
    }

    /**
     * @param ids the jobs, at most {@value #MAX_IDS}, or {@code null} for any
     * @return a copy for these jobs only (a selection an action applies to)
     */
    public JobQuery withIds(List<Long> ids) {
        return new JobQuery(this.group, this.task, this.from, this.to, this.dedupKey, this.errorText, ids, this.matches,
                this.tags, this.after, this.limit);
    }

    /**
     * @param matches the matches, all of which a job must meet (replacing those set before)
     * @return a copy for jobs that meet them only
     */
    public JobQuery withMatches(List<JsonMatch> matches) {
        return new JobQuery(this.group, this.task, this.from, this.to, this.dedupKey, this.errorText, this.ids, matches,
                this.tags, this.after, this.limit);
    }

    /**
     * @param match a match a job must meet besides those set before
     * @return a copy for jobs that meet it too
     */
    public JobQuery withMatch(JsonMatch match) {
        List<JsonMatch> all = new ArrayList<>(this.matches);
        all.add(match);
        return withMatches(all);
    }

    /**
     * @param tags the tags a job must all have (replacing those set before)
     * @return a copy for jobs with these tags only
     */
    public JobQuery withTags(List<String> tags) {
        return new JobQuery(this.group, this.task, this.from, this.to, this.dedupKey, this.errorText, this.ids,
                this.matches, tags, this.after, this.limit);
    }

    /**
     * @return the jobs the query matches in words, e.g. {@code FAILED jobs of send-email with
     * payload.customer.id=42; tag vip}; its page position and size left out
     */
    public String describe() {
        StringBuilder text = new StringBuilder(this.group.name()).append(" jobs");
        if (this.ids != null) {
            text.append(" among ").append(this.ids.size()).append(" selected");
        }
        if (this.task != null) {
            text.append(" of ").append(this.task);
        }
        List<String> filters = new ArrayList<>();
        String time = this.group.finished() ? "finished" : "enqueued";
        if (this.from != null) {
            filters.add(time + " from " + this.from);
        }
        if (this.to != null) {
            filters.add(time + " before " + this.to);
        }
        if (this.dedupKey != null) {
            filters.add("dedup key " + this.dedupKey);
        }
        if (this.errorText != null) {
            filters.add("error containing '" + this.errorText + "'");
        }
        this.matches.forEach(match -> filters.add(match.text()));
        if (!this.tags.isEmpty()) {
            filters.add((this.tags.size() == 1 ? "tag " : "tags ") + String.join(", ", this.tags));
        }
        if (!filters.isEmpty()) {
            text.append(" with ").append(String.join("; ", filters));
        }
        return text.toString();
    }

    /** @return where the previous page stopped, or {@code null} on the first page */
    public Position position() {
        return this.after == null ? null : Position.parse(this.after, this.group);
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value.trim();
    }

    /**
     * A value a job must have at a place in its payload, its headers or its result, compared as
     * text: the number {@code 42} matches {@code "42"}, {@code true} matches {@code "true"}; an
     * object, an array or JSON {@code null} matches nothing.
     *
     * @param in where to look
     * @param path the keys (and array indexes, from 0) from the top of the JSON to the value; for
     * headers, one header name
     * @param value the value as text
     */
    public record JsonMatch(Source in, List<String> path, String value) {

        /** The longest path and value. */
        public static final int MAX_LENGTH = 200;

        /**
         * Checks the match.
         * @throws IllegalArgumentException if the path is empty, holds an empty key or is too long,
         * a header path has more than one name, or the value is missing or too long
         */
        public JsonMatch {
            if (in == null || path == null || path.isEmpty() || path.stream().anyMatch(key -> key == null || key.isEmpty())) {
                throw new IllegalArgumentException("A JSON match needs payload, headers or result and a path of "
                        + "non-empty keys, was " + in + " " + path);
            }
            path = List.copyOf(path);
            if (in == Source.HEADERS && path.size() > 1) {
                path = List.of(String.join(".", path));
            }
            if (value == null || value.length() > MAX_LENGTH || String.join(".", path).length() > MAX_LENGTH
                    || (value + path).indexOf('\u0000') >= 0) {
                throw new IllegalArgumentException("A JSON match needs a value and a path of at most " + MAX_LENGTH
                        + " characters each, without the character U+0000");
            }
        }

        /**
         * Reads a match written as {@code payload.customer.id=42}, {@code headers.tenant=acme} or
         * {@code result.status=ok}: where, the path's keys separated by dots (a header's name is
         * everything after {@code headers.}), {@code =}, the value.
         * @param text the match
         * @return the match
         * @throws IllegalArgumentException if the text is not such a match
         */
        public static JsonMatch parse(String text) {
            int equals = text == null ? -1 : text.indexOf('=');
            int dot = text == null ? -1 : text.indexOf('.');
            if (equals < 0 || dot < 0 || dot > equals) {
                throw new IllegalArgumentException("'" + text + "' is not a JSON match; write it as payload.<path>=<value>, "
                        + "headers.<name>=<value> or result.<path>=<value>, e.g. payload.customer.id=42");
            }
            Source in = Source.of(text.substring(0, dot));
            String path = text.substring(dot + 1, equals);
            String value = text.substring(equals + 1);
            return new JsonMatch(in, in == Source.HEADERS ? List.of(path) : List.of(path.split("\\.", -1)), value);
        }

        /** @return the match as {@link #parse} reads it */
        public String text() {
            return this.in.name().toLowerCase(Locale.ROOT) + "." + String.join(".", this.path) + "=" + this.value;
        }
    }

    /** Where a {@link JsonMatch} looks. */
    public enum Source {
        /** The job's payload. */
        PAYLOAD,
        /** The job's headers (a flat object of names and text values). */
        HEADERS,
        /** The result of a completed job. */
        RESULT;

        static Source of(String name) {
            try {
                return valueOf(name.trim().toUpperCase(Locale.ROOT));
            }
            catch (IllegalArgumentException ex) {
                throw new IllegalArgumentException("A JSON match looks in payload, headers or result, not '" + name + "'",
                        ex);
            }
        }
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
