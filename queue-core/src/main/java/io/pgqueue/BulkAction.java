package io.pgqueue;

import java.time.Instant;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

import io.pgqueue.JobQuery.Group;

/**
 * What a bulk action does to every job a {@link JobQuery} matches ({@link QueueAdmin#startBulk}).
 * Each kind applies to some groups only, and to each job only while it is in such a group: a job
 * that a worker claimed, or that finished, between the search and the action is left as it is
 * (counted as skipped), so an action never changes a running job behind its worker's back (a
 * cancel asks it to stop, as {@link QueueAdmin#cancel} does).
 *
 * @param kind what to do
 * @param runAt the time {@link Kind#RUN_AT} makes the jobs due, or {@code null} for now
 * @param priority the priority {@link Kind#PRIORITY} sets, or {@code null}
 */
public record BulkAction(Kind kind, Instant runAt, Integer priority) {

    /**
     * Checks the action.
     * @throws IllegalArgumentException if it has no kind, a priority outside the allowed range, or
     * a time or priority its kind does not take
     */
    public BulkAction {
        if (kind == null) {
            throw new IllegalArgumentException("A bulk action needs a kind: one of " + Set.of(Kind.values()));
        }
        if (kind == Kind.PRIORITY) {
            if (priority == null) {
                throw new IllegalArgumentException("A priority action needs the priority to set");
            }
            try {
                TaskDefinition.validatePriority(priority, "The priority to set");
            }
            catch (InvalidJobException ex) {
                throw new IllegalArgumentException(ex.getMessage(), ex);
            }
        }
        else if (priority != null) {
            throw new IllegalArgumentException("Only a priority action takes a priority");
        }
        if (runAt != null && kind != Kind.RUN_AT) {
            throw new IllegalArgumentException("Only a run-at action takes a time");
        }
    }

    /** @return puts FAILED jobs back into the queue with fresh attempts (as {@link QueueAdmin#rerun}) */
    public static BulkAction rerun() {
        return new BulkAction(Kind.RERUN, null, null);
    }

    /** @return cancels waiting, due and scheduled jobs, and asks running ones to stop (as {@link QueueAdmin#cancel}) */
    public static BulkAction cancel() {
        return new BulkAction(Kind.CANCEL, null, null);
    }

    /** @return deletes finished jobs (COMPLETED, FAILED, CANCELLED), as retention would */
    public static BulkAction delete() {
        return new BulkAction(Kind.DELETE, null, null);
    }

    /** @return makes due and scheduled jobs due now */
    public static BulkAction runNow() {
        return new BulkAction(Kind.RUN_AT, null, null);
    }

    /**
     * @param at the time
     * @return makes due and scheduled jobs due at a time
     */
    public static BulkAction runAt(Instant at) {
        if (at == null) {
            throw new IllegalArgumentException("A run-at action needs a time; use runNow() for now");
        }
        return new BulkAction(Kind.RUN_AT, at, null);
    }

    /**
     * @param priority the priority
     * @return sets the priority of due, scheduled and waiting jobs
     */
    public static BulkAction priority(int priority) {
        return new BulkAction(Kind.PRIORITY, null, priority);
    }

    /**
     * Reads an action as the console and the endpoint send it.
     * @param name {@code rerun}, {@code cancel}, {@code delete}, {@code run-now}, {@code run-at} or {@code priority}
     * @param at the time of {@code run-at} (an instant such as {@code 2026-01-31T12:00:00Z}), else {@code null}
     * @param priority the priority of {@code priority}, else {@code null}
     * @return the action
     * @throws IllegalArgumentException if the name is unknown, or the time or priority is missing or not valid
     */
    public static BulkAction of(String name, String at, String priority) {
        String key = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
        try {
            return switch (key) {
                case "rerun" -> rerun();
                case "cancel" -> cancel();
                case "delete" -> delete();
                case "run-now" -> runNow();
                case "run-at" -> runAt(at == null || at.isBlank() ? null : Instant.parse(at.trim()));
                case "priority" -> priority(Integer.parseInt(priority == null ? "" : priority.trim()));
                default -> throw new IllegalArgumentException("Unknown bulk action '" + name + "'; use rerun, cancel, "
                        + "delete, run-now, run-at or priority");
            };
        }
        catch (java.time.format.DateTimeParseException ex) {
            throw new IllegalArgumentException("'" + at + "' is not an instant such as 2026-01-31T12:00:00Z", ex);
        }
        catch (NumberFormatException ex) {
            throw new IllegalArgumentException("A priority action needs a whole-number priority, was '" + priority + "'",
                    ex);
        }
    }

    /** @return the action's name as {@link #of} reads it */
    public String name() {
        return switch (this.kind) {
            case RERUN -> "rerun";
            case CANCEL -> "cancel";
            case DELETE -> "delete";
            case RUN_AT -> this.runAt == null ? "run-now" : "run-at";
            case PRIORITY -> "priority";
        };
    }

    /** @return the action in words, e.g. {@code run at 2026-01-31T12:00:00Z} */
    public String describe() {
        return switch (this.kind) {
            case RUN_AT -> this.runAt == null ? "run now" : "run at " + this.runAt;
            case PRIORITY -> "set priority " + this.priority;
            default -> name();
        };
    }

    /** @return the groups of jobs the action applies to */
    public Set<Group> groups() {
        return this.kind.groups();
    }

    /**
     * @param group a group of jobs
     * @return whether the action applies to its jobs
     */
    public boolean appliesTo(Group group) {
        return this.kind.groups().contains(group);
    }

    /** What a bulk action does. */
    public enum Kind {
        /** Re-runs FAILED jobs (except those whose dedup key an active job holds). */
        RERUN(EnumSet.of(Group.FAILED)),
        /** Cancels READY, SCHEDULED and WAITING jobs; asks RUNNING ones to stop. */
        CANCEL(EnumSet.of(Group.READY, Group.SCHEDULED, Group.RUNNING, Group.WAITING)),
        /** Deletes COMPLETED, FAILED and CANCELLED jobs. */
        DELETE(EnumSet.of(Group.COMPLETED, Group.FAILED, Group.CANCELLED)),
        /** Makes READY and SCHEDULED jobs due at a time (or now). */
        RUN_AT(EnumSet.of(Group.READY, Group.SCHEDULED)),
        /** Sets the priority of READY, SCHEDULED and WAITING jobs. */
        PRIORITY(EnumSet.of(Group.READY, Group.SCHEDULED, Group.WAITING));

        private final Set<Group> groups;

        Kind(Set<Group> groups) {
            this.groups = Set.copyOf(groups);
        }

        /** @return the groups of jobs the kind applies to */
        public Set<Group> groups() {
            return this.groups;
        }
    }
}
