package io.pgqueue.autoconfigure;

/**
 * Thrown at start-up when pgqueue's configuration cannot work: a bad {@code pgqueue.*} value, a
 * {@code @QueueTask} bean that is not a valid handler, two tasks with one name. The
 * {@link QueueConfigurationFailureAnalyzer} turns it into a report that says what to fix.
 */
public class QueueConfigurationException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String action;

    /**
     * Creates an exception.
     * @param description what is wrong
     * @param action what to do about it
     */
    public QueueConfigurationException(String description, String action) {
        super(description);
        this.action = action;
    }

    /**
     * Creates an exception with a cause.
     * @param description what is wrong
     * @param action what to do about it
     * @param cause the underlying failure
     */
    public QueueConfigurationException(String description, String action, Throwable cause) {
        super(description, cause);
        this.action = action;
    }

    /**
     * Checks a configured path of an HTTP endpoint of pgqueue's own, below the root.
     * @param property the property's name
     * @param configured its value
     * @param example what to set instead, e.g. "a path such as /sqs"
     * @return the path without trailing slashes
     * @throws QueueConfigurationException if it is not a path below the root
     */
    public static String requirePathBelowRoot(String property, String configured, String example) {
        String path = configured == null ? "" : configured.strip().replaceAll("/+$", "");
        if (!path.matches("(/[A-Za-z0-9._~-]+)+")) {
            throw new QueueConfigurationException(property + " '" + configured + "' is not a path below the root",
                    "Set " + property + " to " + example);
        }
        return path;
    }

    /** @return what to do about it */
    public String getAction() {
        return this.action;
    }
}
