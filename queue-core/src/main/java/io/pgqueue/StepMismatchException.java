package io.pgqueue;

/**
 * Thrown into a durable handler when the steps its job recorded do not fit the code that runs it
 * now: the handler reached another step at a place where the job recorded one, or a recorded value
 * cannot be read as the step's type. This happens when a handler's steps change while jobs are
 * part-way through (sleeping, waiting for a retry, or rescued after a crash). The job fails for good
 * (a {@link TerminalTaskException}) with this message, which names the step, so that it is not run
 * again on steps that do not match its record; an operator who deploys code that fits re-runs it
 * and it goes on from its recorded steps.
 */
public class StepMismatchException extends TerminalTaskException {

    private static final long serialVersionUID = 1L;

    private final String step;

    /**
     * Creates the exception.
     * @param step the step the handler reached
     * @param message what does not fit
     * @param cause the failure to read a recorded value, or {@code null}
     */
    public StepMismatchException(String step, String message, Throwable cause) {
        super(message, cause);
        this.step = step;
    }

    /** @return the step the handler reached */
    public String step() {
        return this.step;
    }
}
