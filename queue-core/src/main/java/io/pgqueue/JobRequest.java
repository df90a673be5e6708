package io.pgqueue;


/**
 * One job to enqueue: a task name, a payload (any value the JSON mapper can write) and options.
 *
 * @param task the task name
 * @param payload the payload; {@code null} is stored as JSON {@code null}
 * @param options the options
 */
public record JobRequest(String task, Object payload, EnqueueOptions options) {

    /**
     * Normalises missing options to the defaults.
     */
    public JobRequest {
        options = options == null ? EnqueueOptions.defaults() : options;
    }

    /**
     * Creates a request with default options.
     * @param task the task name
     * @param payload the payload
     * @return the request
     */
    public static JobRequest of(String task, Object payload) {
        return new JobRequest(task, payload, EnqueueOptions.defaults());
    }

    /**
     * Creates a request.
     * @param task the task name
     * @param payload the payload
     * @param options the options
     * @return the request
     * @throws InvalidJobException if the options are {@code null}
     */
    public static JobRequest of(String task, Object payload, EnqueueOptions options) {
        if (options == null) {
            throw new InvalidJobException("The options of an enqueue must not be null; use EnqueueOptions.defaults()");
        }
        return new JobRequest(task, payload, options);
    }

    /**
     * Returns this job with a header added, e.g. by a {@link JobInterceptor}.
     * @param name the header name, not {@code null}
     * @param value the header value, not {@code null}
     * @return a copy with the header, replacing one of that name
     * @throws InvalidJobException if the name or the value is {@code null}
     */
    public JobRequest withHeader(String name, String value) {
        return new JobRequest(this.task, this.payload, this.options.withHeader(name, value));
    }
}
