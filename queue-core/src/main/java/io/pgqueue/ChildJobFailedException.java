package io.pgqueue;

/**
 * Thrown into a durable handler by {@link TaskContext#awaitChild} when the child job it awaits failed
 * for good or was cancelled. It is a {@link TerminalTaskException}: a parent that lets it leave its
 * handler fails for good (awaiting the same child again would end the same way); a parent that
 * catches it can compensate, or spawn the child again under another name.
 */
public class ChildJobFailedException extends TerminalTaskException {

    private static final long serialVersionUID = 1L;

    private final long childId;

    private final JobState state;

    /**
     * Creates the exception.
     * @param childId the child job
     * @param state how it ended ({@link JobState#FAILED} or {@link JobState#CANCELLED}), or {@code null}
     * if the wait for it ended first
     * @param message what happened
     */
    public ChildJobFailedException(long childId, JobState state, String message) {
        super(message);
        this.childId = childId;
        this.state = state;
    }

    /** @return the child job's id */
    public long childId() {
        return this.childId;
    }

    /** @return how the child ended, or {@code null} if the wait for it ended first */
    public JobState state() {
        return this.state;
    }
}
