package io.pgqueue;

/**
 * Thrown when a job's serialized payload exceeds the configured limit. Nothing was written.
 */
public class PayloadTooLargeException extends InvalidJobException {

    private static final long serialVersionUID = 1L;

    private final long size;

    private final long limit;

    /**
     * Creates an exception.
     * @param task the job's task
     * @param size the payload's size in bytes (UTF-8 JSON)
     * @param limit the configured limit in bytes
     */
    public PayloadTooLargeException(String task, long size, long limit) {
        super("Payload of task '" + task + "' is " + size + " bytes, over the limit of " + limit
                + " bytes; store large data elsewhere and enqueue a reference, or raise pgqueue.max-payload-size");
        this.size = size;
        this.limit = limit;
    }

    /** @return the payload's size in bytes */
    public long getSize() {
        return this.size;
    }

    /** @return the configured limit in bytes */
    public long getLimit() {
        return this.limit;
    }
}
